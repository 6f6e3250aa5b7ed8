import type { IncomingHttpHeaders } from 'node:http';

/** Name of the cookie that may carry the access token when no `Authorization: Bearer` header is sent. */
export const ACCESS_TOKEN_COOKIE = 'access_token';

/**
 * Where the caller's token came from. `token` is null when the request carries no credential; an empty
 * string means a credential was attempted but is empty (`Authorization: Bearer` with nothing after it).
 */
export interface Credential {
  token: string | null;
  source: 'authorization' | 'cookie' | null;
}

const NO_CREDENTIAL: Credential = Object.freeze({ token: null, source: null });
const BEARER = /^\s*bearer(?:\s+(.*))?$/i;

/**
 * Reads the credential: `Authorization: Bearer <token>` first (scheme case-insensitive, RFC 7235), else
 * the `access_token` cookie. An `Authorization` header with another scheme (e.g. Basic, set by a proxy)
 * is not Core's credential and is ignored. An empty cookie value (what a logout typically leaves
 * behind) counts as no credential.
 */
export function extractCredential(headers: IncomingHttpHeaders): Credential {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    // The usual spelling first: the same result as the expression's, which scans the whole token
    // case-insensitively on every request.
    if (authorization.startsWith('Bearer ')) return { token: authorization.slice(7).trim(), source: 'authorization' };
    const match = BEARER.exec(authorization);
    if (match) return { token: (match[1] ?? '').trim(), source: 'authorization' };
  }
  const cookie = headers.cookie;
  if (typeof cookie === 'string') {
    const token = readCookie(cookie, ACCESS_TOKEN_COOKIE);
    if (token) return { token, source: 'cookie' };
  }
  return NO_CREDENTIAL;
}

/**
 * The value of cookie `name` in a `Cookie` header, or null. Tolerates spaces around names and values
 * and a double-quoted value; percent-decodes when the value is encoded. The first occurrence wins
 * (browsers send the most specific path first). Only this one cookie is parsed, so no dependency.
 */
export function readCookie(header: string, name: string): string | null {
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1).trim();
    if (value.includes('%')) {
      try {
        value = decodeURIComponent(value);
      } catch {
        // Not valid percent-encoding: keep the raw value; verification will reject it if it is bad.
      }
    }
    return value;
  }
  return null;
}
