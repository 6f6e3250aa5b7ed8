import { createSigner, createVerifier, TOKEN_ERROR_CODES } from 'fast-jwt';
import { UnauthenticatedError } from '../errors.js';

/**
 * HS256 JSON Web Tokens (docs/security.md): the HMAC key is the UTF-8 bytes of `SECRET_KEY`; `alg: none`
 * and every other algorithm are rejected; `exp` and `nbf` are honoured. Claims used by Core: `sub`
 * (string) and `roles` (array of strings). Verification is fast-jwt's synchronous verifier.
 */

/** What a verified token says about the caller. */
export interface VerifiedToken {
  sub: string | null;
  roles: string[];
  /** When the token stops being valid, in epoch milliseconds; `Infinity` without an `exp` claim. */
  expiresAt: number;
  /** Every claim of the token (what row filters' `$claim` values read). */
  claims?: Readonly<Record<string, unknown>>;
}

export interface SignTokenOptions {
  sub?: string;
  roles: readonly string[];
  /** Lifetime: seconds as a number, or a duration such as `"30m"`, `"12h"`, `"7d"`. Default `"1h"`. */
  expiresIn?: number | string;
}

const DEFAULT_EXPIRES_IN = '1h';
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** Signs an HS256 token carrying `sub` and `roles` (used by `core token` and by tests). */
export function signToken(options: SignTokenOptions, secret: string): string {
  const key = secretBytes(secret, 'signToken');
  const seconds = parseDuration(options.expiresIn ?? DEFAULT_EXPIRES_IN);
  // fast-jwt takes the lifetime in milliseconds.
  const sign = createSigner({ key, algorithm: 'HS256', expiresIn: seconds * 1000 });
  const payload: Record<string, unknown> = { roles: [...options.roles] };
  if (options.sub !== undefined) payload['sub'] = options.sub;
  return sign(payload);
}

/** `3600`, `"3600"`, `"90s"`, `"30m"`, `"12h"`, `"7d"`, `"2w"` → seconds. */
export function parseDuration(value: number | string): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value > 0) return value;
  } else {
    const match = /^\s*(\d+)\s*([smhdw]?)\s*$/.exec(value);
    if (match) {
      const seconds = Number(match[1]) * UNIT_SECONDS[match[2] || 's']!;
      if (seconds > 0) return seconds;
    }
  }
  throw new TypeError(
    `expiresIn must be a positive number of seconds or a duration such as "30m", "12h" or "7d"; received ${JSON.stringify(value)}.`,
  );
}

/**
 * Builds a synchronous verifier for HS256 tokens signed with `secret`. It throws
 * `UnauthenticatedError` (never echoing the token) for anything but a valid token with valid claims.
 */
export function createTokenVerifier(secret: string): (token: string) => VerifiedToken {
  const verify = createVerifier({
    key: secretBytes(secret, 'createTokenVerifier'),
    algorithms: ['HS256'],
    // The resolver keeps its own cache keyed by the raw token (cheaper than fast-jwt's hashed keys).
    cache: false,
  });
  return (token) => {
    let payload: unknown;
    try {
      payload = verify(token);
    } catch (error) {
      throw tokenError(error);
    }
    return readClaims(payload);
  };
}

function secretBytes(secret: string, caller: string): Buffer {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError(`${caller} needs a non-empty secret (the SECRET_KEY setting).`);
  }
  return Buffer.from(secret, 'utf8');
}

function readClaims(payload: unknown): VerifiedToken {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw invalid('malformed', 'The access token payload is not a JSON object.');
  }
  const claims = payload as Record<string, unknown>;

  const sub = claims['sub'];
  if (sub !== undefined && typeof sub !== 'string') {
    throw invalid('invalid_claims', 'The access token\'s "sub" claim must be a string.');
  }

  // A `roles` claim that is present but not a string array rejects the token; it is never read as
  // "no roles", which would quietly change what the caller may see.
  const roles = claims['roles'];
  if (roles !== undefined && !(Array.isArray(roles) && roles.every((role) => typeof role === 'string'))) {
    throw invalid('invalid_claims', 'The access token\'s "roles" claim must be an array of strings.');
  }

  // fast-jwt has already rejected a non-numeric or past `exp`.
  const exp = claims['exp'];
  return {
    sub: sub ?? null,
    roles: roles ? [...(roles as string[])] : [],
    expiresAt: typeof exp === 'number' ? exp * 1000 : Number.POSITIVE_INFINITY,
    claims: Object.freeze(claims),
  };
}

/** Maps fast-jwt's error codes to a 401 with a stable `reason`; the token itself is never quoted. */
function tokenError(error: unknown): UnauthenticatedError {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  switch (code) {
    case TOKEN_ERROR_CODES.expired:
      return expiredTokenError();
    case TOKEN_ERROR_CODES.inactive:
      return notYetValidError();
    case TOKEN_ERROR_CODES.invalidAlgorithm:
      return invalid('invalid_algorithm', 'The access token is not signed with an accepted algorithm.');
    case TOKEN_ERROR_CODES.invalidSignature:
    case TOKEN_ERROR_CODES.missingSignature:
      return invalid('invalid_signature', 'The access token signature is invalid.');
    case TOKEN_ERROR_CODES.invalidClaimType:
    case TOKEN_ERROR_CODES.invalidClaimValue:
      return invalid('invalid_claims', 'The access token has a claim of the wrong type.');
    case TOKEN_ERROR_CODES.malformed:
    case TOKEN_ERROR_CODES.invalidPayload:
    case TOKEN_ERROR_CODES.invalidType:
      return invalid('malformed', 'The access token is malformed; send a JWT as "Authorization: Bearer <token>".');
    default:
      return invalid('invalid_token', 'The access token could not be verified.');
  }
}

/** 401 for a token past its `exp` (also used by the resolver's cache). */
export function expiredTokenError(): UnauthenticatedError {
  return invalid('token_expired', 'The access token has expired; sign in again to get a new one.');
}

/** 401 for a token whose `nbf` is still ahead (also used for provider tokens and the resolver's cache). */
export function notYetValidError(): UnauthenticatedError {
  return invalid('token_not_yet_valid', 'The access token is not valid yet (its "nbf" claim is in the future).');
}

function invalid(reason: string, message: string): UnauthenticatedError {
  return new UnauthenticatedError(message, [{ message, reason }]);
}
