/**
 * Calling an app as a given caller in tests: tokens with any claims (`signToken` signs only `sub` and
 * `roles`, row filters read others) and `app.inject` with that token.
 */
import { createHmac } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An HS256 token signed with `secret`, carrying exactly these claims (plus `exp`, an hour ahead). */
export function signClaimsWith(secret: string, claims: Record<string, unknown>): string {
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ exp: Math.floor(Date.now() / 1000) + 3600, ...claims })}`;
  return `${head}.${createHmac('sha256', Buffer.from(secret, 'utf8')).update(head).digest('base64url')}`;
}

/** `app.inject` with the token as a bearer credential (none for null); a payload is sent as JSON. */
export type CallAs = (
  token: string | null,
  method: InjectOptions['method'],
  url: string,
  payload?: unknown,
  headers?: Record<string, string>,
) => Promise<LightMyRequestResponse>;

export function callerOf(app: FastifyInstance): CallAs {
  return (token, method, url, payload, headers = {}) =>
    app.inject({
      method,
      url,
      headers: {
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
}
