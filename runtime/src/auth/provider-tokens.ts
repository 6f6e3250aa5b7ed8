import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { ServiceUnavailableError, UnauthenticatedError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { AuthSettings } from '../settings/settings.js';
import { JwksKeyStore, KeysUnavailableError } from './jwks-keys.js';
import { expiredTokenError, notYetValidError, type VerifiedToken } from './jwt.js';

/**
 * Tokens issued by an identity provider (RS/PS/ES/EdDSA), verified with jose against the provider's
 * key set, with the issuer, audience, lifetime and the configured subject and roles claims checked.
 */

/** A verified provider token, with what its memo entry needs to know later. */
export interface ProviderVerifiedToken extends VerifiedToken {
  /** From when the token is valid (its `nbf` less the clock skew), epoch ms; -Infinity without `nbf`. */
  notBefore: number;
  /** The `kid` of the key that verified it (null when the token names none). */
  kid: string | null;
  /** The key store's generation when it was verified. */
  generation: number;
}

export type ProviderAuthSettings = AuthSettings & { readonly jwksUrl: string };

export class ProviderTokenVerifier {
  readonly keys: JwksKeyStore;
  private readonly settings: ProviderAuthSettings;
  private readonly options: JWTVerifyOptions;

  constructor(settings: ProviderAuthSettings, logger?: Logger) {
    this.settings = settings;
    this.keys = new JwksKeyStore({
      url: settings.jwksUrl,
      timeoutMs: settings.jwksTimeoutS * 1000,
      cooldownMs: settings.jwksCooldownS * 1000,
      refreshMs: settings.jwksRefreshS * 1000,
      ...(logger === undefined ? {} : { logger }),
    });
    this.options = {
      algorithms: [...settings.algorithms],
      clockTolerance: settings.clockSkewS, // seconds in jose
      // A provider token that never expires would outlive every revocation; providers always set `exp`.
      requiredClaims: ['exp'],
      ...(settings.issuer === undefined ? {} : { issuer: settings.issuer }),
      ...(settings.audience === undefined ? {} : { audience: [...settings.audience] }),
    };
  }

  /**
   * Which verifier a token goes to, from its header alone, so a token refused anyway never causes a
   * key lookup (nor a fetch): `local` for HS256 when local tokens are allowed, `provider` for an
   * accepted algorithm; any other `alg` (`none`, HS256 signed with SECRET_KEY, RSA-OAEP…) is a 401.
   */
  route(token: string): 'local' | 'provider' {
    let alg: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw invalid('malformed', 'The access token is malformed; send a JWT as "Authorization: Bearer <token>".');
    }
    if (typeof alg !== 'string') throw invalid('malformed', 'The access token header has no "alg".');
    if (alg === 'HS256' && this.settings.allowLocalTokens) return 'local';
    if ((this.settings.algorithms as readonly string[]).includes(alg)) return 'provider';
    if (/^HS\d+$/i.test(alg)) {
      throw invalid(
        'invalid_algorithm',
        'The access token is signed with a shared secret; this API accepts tokens signed by its identity provider.',
      );
    }
    throw invalid(
      'invalid_algorithm',
      `The access token is signed with ${JSON.stringify(alg)}; accepted: ${this.settings.algorithms.join(', ')}.`,
    );
  }

  /** Verifies a provider token; 401 (`UnauthenticatedError`) when it is not acceptable, 503 when no key can be had. */
  async verify(token: string): Promise<ProviderVerifiedToken> {
    let payload: JWTPayload;
    let kid: unknown;
    try {
      ({
        payload,
        protectedHeader: { kid },
      } = await jwtVerify(token, this.keys.getKey, this.options));
    } catch (error) {
      throw verificationError(error);
    }
    const skew = this.settings.clockSkewS;
    // Same instants as jose's checks (whole seconds, skew applied), in the form the memo compares.
    const exp = payload.exp!;
    const nbf = payload.nbf;
    return {
      sub: readSubject(payload, this.settings.subjectClaim),
      roles: readRoles(payload, this.settings.rolesClaim),
      expiresAt: Math.ceil(exp + skew) * 1000 - 1,
      notBefore: typeof nbf === 'number' ? Math.ceil(nbf - skew) * 1000 : Number.NEGATIVE_INFINITY,
      kid: typeof kid === 'string' ? kid : null,
      generation: this.keys.generation,
      claims: Object.freeze(payload as Record<string, unknown>),
    };
  }
}

/** The value at a claim path, or undefined; only the payload's own keys count (never `constructor`…). */
export function claimAt(payload: unknown, path: readonly string[]): unknown {
  let value = payload;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, segment))
      return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

/** A claim path as the setting would spell it: `realm_access.roles`, or the JSON-array form. */
export function formatClaimPath(path: readonly string[]): string {
  return path.some((segment) => segment.includes('.')) ? JSON.stringify(path) : path.join('.');
}

function readSubject(payload: JWTPayload, path: readonly string[]): string | null {
  const sub = claimAt(payload, path);
  if (sub === undefined) return null;
  if (typeof sub !== 'string')
    throw invalid('invalid_claims', `The access token's ${formatClaimPath(path)} claim must be a string.`);
  return sub;
}

/**
 * A token without the roles claim is an authenticated caller with no roles: it is granted nothing,
 * not the anonymous role's permissions. A claim that is there but not a string array rejects the
 * token rather than being read as "no roles".
 */
function readRoles(payload: JWTPayload, path: readonly string[]): string[] {
  const roles = claimAt(payload, path);
  if (roles === undefined) return [];
  if (!Array.isArray(roles) || !roles.every((role) => typeof role === 'string')) {
    throw invalid('invalid_claims', `The access token's ${formatClaimPath(path)} claim must be an array of strings.`);
  }
  return [...(roles as string[])];
}

/** jose's errors → 401 with a stable `reason` (the token is never quoted), or 503 when no key can be had. */
function verificationError(error: unknown): Error {
  if (error instanceof KeysUnavailableError) {
    const message = 'The identity provider cannot be reached to check the access token; try again shortly.';
    return new ServiceUnavailableError(message, [{ message, reason: 'keys_unavailable' }], error.retryAfterS);
  }
  if (error instanceof errors.JWTExpired) return expiredTokenError();
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
        return notYetValidError();
      case 'iss':
        return invalid(
          'invalid_issuer',
          'The access token was not issued by the identity provider this API trusts ("iss").',
        );
      case 'aud':
        return invalid(
          'invalid_audience',
          'The access token is meant for another audience ("aud"); request one for this API.',
        );
      case 'exp':
        return invalid(
          'invalid_claims',
          'The access token has no valid "exp" claim; tokens from the identity provider must expire.',
        );
      default:
        return invalid('invalid_claims', `The access token's "${error.claim}" claim is not acceptable.`);
    }
  }
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return invalid('invalid_signature', 'The access token signature is invalid.');
  if (error instanceof errors.JOSEAlgNotAllowed)
    return invalid('invalid_algorithm', 'The access token is not signed with an accepted algorithm.');
  if (error instanceof errors.JWKSNoMatchingKey) {
    return invalid(
      'unknown_key',
      'No signing key of the identity provider matches the access token\'s key id ("kid").',
    );
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return invalid(
      'unknown_key',
      'The access token names no key id ("kid") and several of the identity provider\'s keys could have signed it.',
    );
  }
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  ) {
    return invalid('malformed', 'The access token is malformed; send a JWT as "Authorization: Bearer <token>".');
  }
  if (error instanceof errors.JOSEError) return invalid('invalid_token', 'The access token could not be verified.');
  // Not the token's fault (e.g. a provider key jose refuses to use): a 500, logged with its cause.
  return error instanceof Error ? error : new Error(String(error));
}

function invalid(reason: string, message: string): UnauthenticatedError {
  return new UnauthenticatedError(message, [{ message, reason }]);
}
