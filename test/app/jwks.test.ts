/**
 * Tokens from an identity provider through the task app, enabled by settings alone: the fixture's
 * `src/main.ts` is unchanged (it registers the context plugin with `{ secret, policies }`) and only the
 * AUTH_* environment variables point it at a key set served by a real HTTP server on 127.0.0.1.
 *
 * The app runs with ENVIRONMENT=development because the test key set is plain http, which is refused
 * anywhere else.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dbManager, signToken, type PolicyDocument } from '@core/runtime';
import { buildApp } from '../../fixtures/apps/tasks/src/main.js';
import { describePerDatabase } from '../helpers/databases.js';
import {
  AUDIENCE,
  ISSUER,
  inSeconds,
  JwksServer,
  makeKey,
  signWith,
  unsignedToken,
  type TestKey,
} from '../runtime/jwks-fixtures.js';

const SECRET = 'k'.repeat(48);

/** The fixture's roles, with anonymous callers allowed to list tasks (so a bad token is not just "no rights"). */
const POLICIES: PolicyDocument = {
  roles: {
    admin: { permissions: ['*'], restricted_fields: [] },
    viewer: { permissions: ['tasks:view', 'tasks:listview'], restricted_fields: ['tasks.assignee_email'] },
    anonymous: { permissions: ['tasks:listview'], restricted_fields: ['tasks.assignee_email'] },
  },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * `describe` per database around one fixture app built from the environment `env()` (AUTH_* and
 * friends), read when the suite starts so it may name a server an outer `beforeAll` started;
 * `beforeBuild` runs just before each build.
 */
function describeJwksApp(
  title: string,
  env: () => Record<string, string>,
  body: (app: () => FastifyInstance) => void,
  beforeBuild?: () => Promise<void>,
): void {
  describePerDatabase(title, ({ url }) => {
    let app: FastifyInstance;
    beforeAll(async () => {
      await beforeBuild?.();
      const variables = {
        DATABASE_URL: url(),
        ENVIRONMENT: 'development',
        SECRET_KEY: SECRET,
        LOG_LEVEL: 'silent',
        ...env(),
      };
      for (const [name, value] of Object.entries(variables)) vi.stubEnv(name, value);
      try {
        app = await buildApp({ policies: POLICIES });
      } finally {
        vi.unstubAllEnvs();
      }
      await dbManager.db.resetSchema();
      await app.ready();
    });
    afterAll(async () => {
      await app?.close();
      await dbManager.close();
    });
    body(() => app);
  });
}

function expectEnvelope(res: LightMyRequestResponse, status: number, code: string, reason?: string): void {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toMatchObject({ success: false, data: null, error: { code } });
  if (reason !== undefined) expect(res.json().error.details[0].reason).toBe(reason);
}

describe('identity-provider tokens: RS256/ES256, realm_access.roles', () => {
  let server: JwksServer;
  let rsa: TestKey;
  let ec: TestKey;

  beforeAll(async () => {
    rsa = makeKey('RS256');
    ec = makeKey('ES256');
    server = await JwksServer.start([rsa, ec]);
  });
  afterAll(async () => {
    await server.close();
  });

  describeJwksApp(
    'keycloak-style',
    () => ({
      AUTH_JWKS_URL: server.url,
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
      AUTH_ROLES_CLAIM: 'realm_access.roles',
      AUTH_JWKS_COOLDOWN_S: '0.3',
      AUTH_JWKS_TIMEOUT_S: '1',
    }),
    (app) => {
      const list = (headers: Record<string, string> = {}) => app().inject({ method: 'GET', url: '/tasks/', headers });
      const keycloak = (key: TestKey, roles: string[], claims: Record<string, unknown> = {}) =>
        signWith(key, { realm_access: { roles }, ...claims });

      it('JWKS server down and no key cached → 503 with Retry-After, even where anonymous callers are allowed', async () => {
        const token = await keycloak(rsa, ['viewer']);
        for (let i = 0; i < 2; i += 1) {
          const res = await list(bearer(token));
          expectEnvelope(res, 503, 'SERVICE_UNAVAILABLE', 'keys_unavailable');
          expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
          await sleep(350); // past the cooldown: the next one fetches again, and fails again
        }
        expect((await list()).statusCode).toBe(200); // no token: anonymous, unaffected
        await server.up();
        await sleep(350);
        expect((await list(bearer(token))).statusCode).toBe(200); // back without a restart
      });

      it('accepts RS256 and ES256 tokens with the expected issuer and audience; roles come from realm_access.roles', async () => {
        const admin = await keycloak(ec, ['admin']);
        const created = await app().inject({
          method: 'POST',
          url: '/tasks/',
          headers: { ...bearer(admin), 'content-type': 'application/json' },
          payload: { title: 'from the identity provider', assignee_email: 'a@example.com' },
        });
        expect(created.statusCode).toBe(201);
        const viewer = await list(bearer(await keycloak(rsa, ['viewer'])));
        expect(viewer.statusCode).toBe(200);
        expect(viewer.json().data).toEqual([expect.objectContaining({ title: 'from the identity provider' })]);
        expect(viewer.json().data[0]).not.toHaveProperty('assignee_email'); // the viewer's restriction applied
        const asAdmin = await list(bearer(admin));
        expect(asAdmin.json().data[0].assignee_email).toBe('a@example.com');
      });

      it('a token without the roles claim is authenticated with no roles: 403 where anonymous gets 200', async () => {
        expectEnvelope(await list(bearer(await signWith(rsa, { roles: ['admin'] }))), 403, 'FORBIDDEN');
        expect((await list()).statusCode).toBe(200);
      });

      const refused: Array<{ name: string; token: () => Promise<string>; reason: string }> = [
        {
          name: 'another issuer',
          token: () => keycloak(rsa, ['admin'], { iss: 'https://evil.example/realms/core' }),
          reason: 'invalid_issuer',
        },
        {
          name: 'another audience',
          token: () => keycloak(rsa, ['admin'], { aud: 'someone-else' }),
          reason: 'invalid_audience',
        },
        {
          name: 'expired (beyond the clock skew)',
          token: () => keycloak(ec, ['admin'], { exp: inSeconds(-60), iat: inSeconds(-600) }),
          reason: 'token_expired',
        },
        {
          name: 'nbf in the future (beyond the clock skew)',
          token: () => keycloak(ec, ['admin'], { nbf: inSeconds(120) }),
          reason: 'token_not_yet_valid',
        },
        { name: 'signed by an unknown key', token: () => keycloak(makeKey('RS256'), ['admin']), reason: 'unknown_key' },
        {
          name: 'signed by an unknown key that reuses a published kid',
          token: () => keycloak(makeKey('RS256', rsa.kid), ['admin']),
          reason: 'invalid_signature',
        },
        {
          name: 'HS256 signed with SECRET_KEY',
          token: async () => signToken({ sub: 'a', roles: ['admin'] }, SECRET),
          reason: 'invalid_algorithm',
        },
        {
          name: 'alg none',
          token: async () => unsignedToken({ realm_access: { roles: ['admin'] } }, rsa.kid),
          reason: 'invalid_algorithm',
        },
        {
          name: 'EdDSA (not in AUTH_ALGORITHMS)',
          token: () => keycloak(makeKey('EdDSA'), ['admin']),
          reason: 'invalid_algorithm',
        },
      ];
      it.each(refused)(
        'refuses a token $name → 401 ($reason), even where anonymous callers are allowed',
        async ({ token, reason }) => {
          expectEnvelope(await list(bearer(await token())), 401, 'UNAUTHENTICATED', reason);
        },
      );

      it('the same token in the access_token cookie works too', async () => {
        const res = await list({ cookie: `access_token=${await keycloak(ec, ['viewer'])}` });
        expect(res.statusCode).toBe(200);
      });

      it('a rotated key (new kid published) is accepted without a restart; a withdrawn one stops working', async () => {
        const rotated = makeKey('RS256');
        const old = await keycloak(rsa, ['viewer']);
        expect((await list(bearer(old))).statusCode).toBe(200);
        server.publish(rsa, ec, rotated);
        await sleep(350);
        expect((await list(bearer(await keycloak(rotated, ['viewer'])))).statusCode).toBe(200);
        // The provider withdraws the old key; the next fetch (here on another unknown kid) learns it.
        server.publish(ec, rotated);
        await sleep(350);
        await list(bearer(await keycloak(makeKey('RS256'), ['viewer'])));
        expectEnvelope(await list(bearer(old)), 401, 'UNAUTHENTICATED', 'unknown_key');
        server.publish(rsa, ec);
      });

      it('a hanging JWKS server → 503 within the timeout (1 s); known keys keep working meanwhile', async () => {
        server.mode = 'hang';
        try {
          await sleep(350);
          const started = Date.now();
          const res = await list(bearer(await keycloak(makeKey('ES256'), ['viewer'])));
          const elapsed = Date.now() - started;
          expectEnvelope(res, 503, 'SERVICE_UNAVAILABLE', 'keys_unavailable');
          expect(elapsed).toBeGreaterThanOrEqual(900);
          expect(elapsed).toBeLessThan(3000); // well before the 5 s default, let alone a hung request
          expect((await list(bearer(await keycloak(ec, ['viewer'])))).statusCode).toBe(200);
        } finally {
          server.mode = 'ok';
        }
      });
    },
    // Down while each app starts: its first fetch fails, so it begins with no key at all.
    () => server.down(),
  );
});

describe('identity-provider tokens: EdDSA, a namespaced roles claim, local tokens allowed', () => {
  let server: JwksServer;
  let ed: TestKey;
  let rs: TestKey;
  const ROLES = 'https://core.example/roles';

  beforeAll(async () => {
    ed = makeKey('EdDSA');
    rs = makeKey('RS256');
    server = await JwksServer.start([ed, rs]);
  });
  afterAll(async () => {
    await server.close();
  });

  describeJwksApp(
    'auth0-style',
    () => ({
      AUTH_JWKS_URL: server.url,
      AUTH_ALGORITHMS: 'EdDSA',
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: `other-api,${AUDIENCE}`,
      AUTH_ROLES_CLAIM: JSON.stringify([ROLES]),
      AUTH_ALLOW_LOCAL_TOKENS: 'true',
    }),
    (app) => {
      const list = (token: string) => app().inject({ method: 'GET', url: '/tasks/', headers: bearer(token) });

      it('accepts an EdDSA token and reads roles from a claim whose name contains dots', async () => {
        const admin = await signWith(ed, { [ROLES]: ['admin'] });
        const res = await app().inject({
          method: 'POST',
          url: '/tasks/',
          headers: { ...bearer(admin), 'content-type': 'application/json' },
          payload: { title: 'ed' },
        });
        expect(res.statusCode).toBe(201);
        // Dotted-path reading would look for {"https://core": {"example/roles": …}} and find nothing.
        expectEnvelope(
          await app().inject({
            method: 'DELETE',
            url: `/tasks/${res.json().data.id}`,
            headers: bearer(await signWith(ed, { roles: ['admin'] })),
          }),
          403,
          'FORBIDDEN',
        );
      });

      it('an audience list accepts a token for any of them', async () => {
        expect((await list(await signWith(ed, { [ROLES]: ['viewer'], aud: ['account', AUDIENCE] }))).statusCode).toBe(
          200,
        );
        expectEnvelope(
          await list(await signWith(ed, { [ROLES]: ['viewer'], aud: 'account' })),
          401,
          'UNAUTHENTICATED',
          'invalid_audience',
        );
      });

      it('with AUTH_ALLOW_LOCAL_TOKENS=true, HS256 tokens signed with SECRET_KEY still work; alg none and other HMACs do not', async () => {
        const local = signToken({ sub: 'dev', roles: ['admin'] }, SECRET);
        const res = await app().inject({
          method: 'POST',
          url: '/tasks/',
          headers: { ...bearer(local), 'content-type': 'application/json' },
          payload: { title: 'local' },
        });
        expect(res.statusCode).toBe(201);
        expectEnvelope(await list(unsignedToken({ [ROLES]: ['admin'] })), 401, 'UNAUTHENTICATED', 'invalid_algorithm');
        const hs512 = `${Buffer.from(JSON.stringify({ alg: 'HS512', typ: 'JWT' })).toString('base64url')}.${Buffer.from('{}').toString('base64url')}.x`;
        expectEnvelope(await list(hs512), 401, 'UNAUTHENTICATED', 'invalid_algorithm');
      });

      it('an RS256 token is refused when only EdDSA is configured, though its key is published', async () => {
        expectEnvelope(
          await list(await signWith(rs, { [ROLES]: ['admin'] })),
          401,
          'UNAUTHENTICATED',
          'invalid_algorithm',
        );
      });
    },
  );
});
