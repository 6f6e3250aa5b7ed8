/** Shared by the auth tests: a secret, policies, a hand-rolled token crafter and a small app. */
import { createHmac } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  assertPermission,
  coreContextPlugin,
  getContext,
  type CoreContextPluginOptions,
  type PolicyDocument,
} from '@core/runtime';

export const SECRET = 'test-secret-0123456789abcdef0123456789abcdef';

export const POLICIES: PolicyDocument = {
  roles: {
    admin: { permissions: ['*'], restricted_fields: [] },
    viewer: {
      permissions: ['tasks:view', 'tasks:listview'],
      restricted_fields: ['tasks.assignee_email', 'tasks.budget'],
    },
    editor: { permissions: ['tasks:*', 'projects:view'], restricted_fields: ['tasks.budget', 'tasks.notes'] },
    shouty: { permissions: ['Tasks:view'], restricted_fields: [] },
    anonymous: { permissions: ['tasks:listview'], restricted_fields: ['tasks.assignee_email'] },
  },
};

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * Builds a JWT by hand so tests can produce what no well-behaved signer would: `alg: none`, HS512,
 * odd claims. `alg` picks the HMAC (HS256/384/512) or, for `none`, an empty signature.
 */
export function craftToken(
  payload: Record<string, unknown>,
  {
    alg = 'HS256',
    secret = SECRET,
    header = {},
  }: { alg?: string; secret?: string; header?: Record<string, unknown> } = {},
): string {
  const input = `${b64url({ alg, typ: 'JWT', ...header })}.${b64url(payload)}`;
  const hash = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[alg];
  const signature =
    hash === undefined ? '' : createHmac(hash, Buffer.from(secret, 'utf8')).update(input).digest('base64url');
  return `${input}.${signature}`;
}

/** `now + seconds` as a JWT NumericDate. */
export const inSeconds = (seconds: number): number => Math.floor(Date.now() / 1000) + seconds;

export interface WhoAmI {
  sub: string | null;
  roles: string[];
  permissions: string[];
  restricted: string[];
  authenticated: boolean;
  reason: string | null;
}

/**
 * An app with the context plugin and two routes: `GET /whoami` (plain, unguarded: reports the active
 * context and the recorded auth state) and `GET /guard?action=…` (guarded by `assertPermission`).
 */
export async function buildApp(
  options: CoreContextPluginOptions = { secret: SECRET, policies: POLICIES },
): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(coreContextPlugin, options);
  app.get('/whoami', async (request): Promise<WhoAmI> => {
    const ctx = getContext();
    return {
      sub: ctx.sub,
      roles: [...ctx.roles],
      permissions: [...ctx.permissions].sort(),
      restricted: [...ctx.restrictedFields].sort(),
      authenticated: request.coreAuth?.authenticated ?? false,
      reason: request.coreAuth?.error?.details[0]?.reason ?? null,
    };
  });
  app.get<{ Querystring: { action: string } }>(
    '/guard',
    { preHandler: async (request) => assertPermission(request, request.query.action) },
    async () => ({ ok: true }),
  );
  await app.ready();
  return app;
}
