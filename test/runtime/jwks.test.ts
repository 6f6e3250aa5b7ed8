/**
 * Tokens from an identity provider, below the task app: the AUTH_* settings, the key store's fetch
 * rules (cooldown, outage, background refresh), the memo of verified tokens and the claim mapping.
 * Every key set comes from a real HTTP server on 127.0.0.1 (see jwks-fixtures.ts).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  appExceptionHandler,
  assertPermission,
  coreContextPlugin,
  getContext,
  JwtContextResolver,
  loadSettings,
  SettingsError,
  signToken,
  type AuthSettings,
  type CoreContextPluginOptions,
} from '@core/runtime';
import { loadAuthSettings } from '../../runtime/src/settings/settings.js';
import { POLICIES, SECRET } from './auth-fixtures.js';
import {
  AUDIENCE,
  ISSUER,
  inSeconds,
  JwksServer,
  makeKey,
  signWith,
  unsignedToken,
  type TestKey,
} from './jwks-fixtures.js';

/** AUTH_* settings as an app would read them (development: the test server speaks plain http). */
function authSettings(env: Record<string, string>): AuthSettings {
  return loadAuthSettings({ cwd: '/nonexistent', env: { ENVIRONMENT: 'development', ...env } });
}

interface WhoAmI {
  sub: string | null;
  roles: string[];
  permissions: string[];
  authenticated: boolean;
}

/** A small app: `/whoami` (not guarded) and `/guard?action=…`, with Core's error envelope. */
async function buildApp(options: CoreContextPluginOptions): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(coreContextPlugin, options);
  app.setErrorHandler(appExceptionHandler);
  app.get('/whoami', async (request): Promise<WhoAmI> => {
    const ctx = getContext();
    return {
      sub: ctx.sub,
      roles: [...ctx.roles],
      permissions: [...ctx.permissions].sort(),
      authenticated: request.coreAuth?.authenticated ?? false,
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

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('AUTH_* settings', () => {
  const base = { SECRET_KEY: 'k'.repeat(48) };

  it('defaults: no key set, RS256 and ES256, `roles` and `sub`, 30 s of skew and cooldown, 10 min refresh, 5 s timeout', () => {
    expect(loadSettings({ cwd: '/nonexistent', env: base }).auth).toEqual({
      jwksUrl: undefined,
      algorithms: ['RS256', 'ES256'],
      issuer: undefined,
      audience: undefined,
      rolesClaim: ['roles'],
      subjectClaim: ['sub'],
      clockSkewS: 30,
      allowLocalTokens: false,
      jwksCooldownS: 30,
      jwksRefreshS: 600,
      jwksTimeoutS: 5,
    });
  });

  it('reads every setting; algorithm names are matched without regard to case', () => {
    const auth = loadAuthSettings({
      cwd: '/nonexistent',
      env: {
        ENVIRONMENT: 'production',
        AUTH_JWKS_URL: 'https://tenant.example.com/.well-known/jwks.json',
        AUTH_ALGORITHMS: 'rs256, eddsa,PS256,RS256',
        AUTH_ISSUER: 'https://tenant.example.com/',
        AUTH_AUDIENCE: 'api-1, api-2',
        AUTH_ROLES_CLAIM: '["https://example.com/roles"]',
        AUTH_SUBJECT_CLAIM: 'ext.user_id',
        AUTH_CLOCK_SKEW_S: '5',
        AUTH_ALLOW_LOCAL_TOKENS: 'true',
        AUTH_JWKS_COOLDOWN_S: '0.5',
        AUTH_JWKS_REFRESH_S: '60',
        AUTH_JWKS_TIMEOUT_S: '2',
      },
    });
    expect(auth).toEqual({
      jwksUrl: 'https://tenant.example.com/.well-known/jwks.json',
      algorithms: ['RS256', 'EdDSA', 'PS256'],
      issuer: 'https://tenant.example.com/',
      audience: ['api-1', 'api-2'],
      rolesClaim: ['https://example.com/roles'],
      subjectClaim: ['ext', 'user_id'],
      clockSkewS: 5,
      allowLocalTokens: true,
      jwksCooldownS: 0.5,
      jwksRefreshS: 60,
      jwksTimeoutS: 2,
    });
  });

  it.each([
    {
      name: 'plain http outside development',
      env: { ENVIRONMENT: 'production', AUTH_JWKS_URL: 'http://id.example.com/jwks.json' },
      message: /AUTH_JWKS_URL must use https outside development \(ENVIRONMENT=production\)/,
    },
    { name: 'not a URL', env: { AUTH_JWKS_URL: 'id.example.com/jwks.json' }, message: /AUTH_JWKS_URL is not a URL/ },
    {
      name: 'another scheme',
      env: { AUTH_JWKS_URL: 'file:///etc/jwks.json' },
      message: /AUTH_JWKS_URL must be an https URL/,
    },
    {
      name: 'a password in the URL',
      env: { AUTH_JWKS_URL: 'https://u:hunter2@id.example.com/jwks' },
      message: /^AUTH_JWKS_URL must not contain a user name or password; key sets are public\.$/,
    },
    {
      name: 'an HMAC algorithm',
      env: { AUTH_JWKS_URL: 'https://id.example.com/jwks', AUTH_ALGORITHMS: 'RS256,HS256' },
      message: /cannot list HS256.*AUTH_ALLOW_LOCAL_TOKENS=true/,
    },
    {
      name: 'alg none',
      env: { AUTH_JWKS_URL: 'https://id.example.com/jwks', AUTH_ALGORITHMS: 'none' },
      message: /AUTH_ALGORITHMS lists "none", which is not one of RS256/,
    },
    {
      name: 'an empty algorithm list',
      env: { AUTH_JWKS_URL: 'https://id.example.com/jwks', AUTH_ALGORITHMS: ' , ' },
      message: /AUTH_ALGORITHMS is empty/,
    },
    {
      name: 'a dotted path with an empty segment',
      env: { AUTH_JWKS_URL: 'https://id.example.com/jwks', AUTH_ROLES_CLAIM: 'realm_access..roles' },
      message: /AUTH_ROLES_CLAIM must be a dotted path/,
    },
    {
      name: 'a JSON array that is not one of names',
      env: { AUTH_JWKS_URL: 'https://id.example.com/jwks', AUTH_SUBJECT_CLAIM: '["a", 1]' },
      message: /AUTH_SUBJECT_CLAIM must be a dotted path/,
    },
    {
      name: 'broken JSON',
      env: { AUTH_JWKS_URL: 'https://id.example.com/jwks', AUTH_ROLES_CLAIM: '["https://x/roles"' },
      message: /AUTH_ROLES_CLAIM must be/,
    },
    {
      name: 'a negative skew',
      env: { AUTH_CLOCK_SKEW_S: '-1' },
      message: /AUTH_CLOCK_SKEW_S must be a number of seconds of at least 0/,
    },
    {
      name: 'a refresh under a second',
      env: { AUTH_JWKS_REFRESH_S: '0.5' },
      message: /AUTH_JWKS_REFRESH_S must be a number of seconds of at least 1/,
    },
    {
      name: 'a boolean that is not one',
      env: { AUTH_ALLOW_LOCAL_TOKENS: 'sure' },
      message: /AUTH_ALLOW_LOCAL_TOKENS must be true or false/,
    },
    {
      name: 'an issuer without a key set (it would be ignored)',
      env: { AUTH_ISSUER: 'https://id.example.com/', AUTH_ROLES_CLAIM: 'groups' },
      message: /^AUTH_ISSUER, AUTH_ROLES_CLAIM are set but AUTH_JWKS_URL is not, so they would be ignored/,
    },
  ])('refuses $name, saying what to do', ({ env, message }) => {
    expect(() => loadSettings({ cwd: '/nonexistent', env: { ...base, ...env } })).toThrow(SettingsError);
    expect(() => loadSettings({ cwd: '/nonexistent', env: { ...base, ...env } })).toThrow(message);
  });

  it('tolerates a plain-http key set in development only', () => {
    const env = { ...base, AUTH_JWKS_URL: 'http://127.0.0.1:8080/jwks' };
    expect(loadSettings({ cwd: '/nonexistent', env: { ...env, ENVIRONMENT: 'development' } }).auth.jwksUrl).toBe(
      'http://127.0.0.1:8080/jwks',
    );
    expect(() => loadSettings({ cwd: '/nonexistent', env: { ...env, ENVIRONMENT: 'staging' } })).toThrow(
      /must use https outside development/,
    );
  });

  it('the context plugin reads them itself when given only { secret, policies }, and refuses to start on a bad one', async () => {
    vi.stubEnv('ENVIRONMENT', 'production');
    vi.stubEnv('AUTH_JWKS_URL', 'http://id.example.com/jwks.json');
    try {
      await expect(buildApp({ secret: SECRET, policies: POLICIES })).rejects.toThrow(
        /AUTH_JWKS_URL must use https outside development/,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('provider tokens', () => {
  let server: JwksServer;
  let rsa: TestKey;
  let ec: TestKey;
  const apps: FastifyInstance[] = [];

  beforeAll(async () => {
    rsa = makeKey('RS256');
    ec = makeKey('ES256');
    server = await JwksServer.start([rsa, ec]);
  });
  afterAll(async () => {
    await server.close();
  });
  afterEach(async () => {
    server.mode = 'ok';
    server.publish(rsa, ec);
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  /** An app whose resolver is returned too, so a test can drive the key store. */
  async function appWith(
    env: Record<string, string> = {},
  ): Promise<{ app: FastifyInstance; resolver: JwtContextResolver }> {
    const auth = authSettings({
      AUTH_JWKS_URL: server.url,
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
      AUTH_JWKS_COOLDOWN_S: '0.2',
      ...env,
    });
    const resolver = new JwtContextResolver({ secret: SECRET, policies: POLICIES, auth });
    const app = await buildApp({ resolver });
    app.addHook('onClose', async () => resolver.close());
    apps.push(app);
    await resolver.provider!.keys.refresh(); // the warm-up fetch, awaited so counts start from a loaded set
    return { app, resolver };
  }

  const whoami = async (app: FastifyInstance, token: string) => app.inject({ url: '/whoami', headers: bearer(token) });

  it('reads the subject and roles from the configured claims', async () => {
    const { app } = await appWith({
      AUTH_ROLES_CLAIM: 'realm_access.roles',
      AUTH_SUBJECT_CLAIM: '["https://example.com/user.id"]',
    });
    const token = await signWith(rsa, {
      realm_access: { roles: ['viewer', 'offline_access'] },
      'https://example.com/user.id': 'u-42',
      roles: ['admin'],
    });
    const res = await whoami(app, token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      sub: 'u-42',
      roles: ['viewer', 'offline_access'],
      permissions: ['tasks:listview', 'tasks:view'],
      authenticated: true,
    });
  });

  it('a token without the roles claim is an authenticated caller granted nothing (not the anonymous role)', async () => {
    const { app } = await appWith({ AUTH_ROLES_CLAIM: 'realm_access.roles' });
    const token = await signWith(rsa, { roles: ['admin'] });
    expect((await whoami(app, token)).json()).toMatchObject({
      sub: 'user-1',
      roles: [],
      permissions: [],
      authenticated: true,
    });
    // Anonymous callers may list tasks (POLICIES); this caller may not.
    expect((await app.inject({ url: '/guard?action=tasks:listview' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/guard?action=tasks:listview', headers: bearer(token) })).statusCode).toBe(403);
  });

  it.each([
    { name: 'roles that are not a string array', claims: { roles: 'admin' }, reason: 'invalid_claims' },
    { name: 'a subject that is not a string', claims: { sub: 42 }, reason: 'invalid_claims' },
    { name: 'no exp', claims: { exp: undefined }, reason: 'invalid_claims' },
  ])('refuses $name (401 $reason)', async ({ claims, reason }) => {
    const { app } = await appWith();
    const res = await app.inject({
      url: '/guard?action=tasks:listview',
      headers: bearer(await signWith(rsa, {}, { claims })),
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.details[0].reason).toBe(reason);
  });

  it('remembers a verified token (no second verification) and re-checks its expiry on every hit', async () => {
    const { app, resolver } = await appWith({ AUTH_CLOCK_SKEW_S: '0' });
    const token = await signWith(ec, { roles: ['viewer'], exp: inSeconds(60) });
    expect((await whoami(app, token)).json().authenticated).toBe(true);
    expect(resolver.cachedTokenCount).toBe(1);
    // A remembered token resolves synchronously: no key lookup, no promise.
    expect(resolver.resolveToken(token)).not.toBeInstanceOf(Promise);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 61_000);
      const res = await app.inject({ url: '/guard?action=tasks:view', headers: bearer(token) });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.details[0].reason).toBe('token_expired');
    } finally {
      vi.useRealTimers();
    }
  });

  it('drops a remembered token once its key leaves the key set (background refresh)', async () => {
    const { app, resolver } = await appWith();
    const token = await signWith(rsa, { roles: ['viewer'] });
    expect((await whoami(app, token)).json().authenticated).toBe(true);
    server.publish(ec); // the provider withdraws the RSA key
    await resolver.provider!.keys.refresh();
    const res = await app.inject({ url: '/guard?action=tasks:view', headers: bearer(token) });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.details[0].reason).toBe('unknown_key');
  });

  it('a failed refresh keeps the keys it had', async () => {
    const { app, resolver } = await appWith();
    server.mode = 'error';
    await resolver.provider!.keys.refresh();
    await server.down();
    await resolver.provider!.keys.refresh();
    try {
      const res = await whoami(app, await signWith(rsa, { roles: ['viewer'] }));
      expect(res.statusCode).toBe(200);
      expect(res.json().roles).toEqual(['viewer']);
    } finally {
      await server.up();
    }
  });

  it('a flood of unknown kids costs one fetch per cooldown, all answered 401', async () => {
    const { app } = await appWith({ AUTH_JWKS_COOLDOWN_S: '30' });
    const stranger = makeKey('ES256');
    const before = server.requests;
    const tokens = await Promise.all(
      Array.from({ length: 50 }, (_, i) => signWith(stranger, {}, { header: { kid: `made-up-${i}` } })),
    );
    const statuses = await Promise.all(
      tokens.map(
        async (token) => (await app.inject({ url: '/guard?action=tasks:view', headers: bearer(token) })).statusCode,
      ),
    );
    expect(statuses).toEqual(tokens.map(() => 401));
    expect(server.requests - before).toBe(0); // the warm-up fetch started the cooldown
  });

  it('after the cooldown, one unknown kid refetches once: concurrent ones share the fetch', async () => {
    // A long enough cooldown that all twenty requests land within it, however slow the machine.
    const { app } = await appWith({ AUTH_JWKS_COOLDOWN_S: '1' });
    await sleep(1050);
    const before = server.requests;
    const stranger = makeKey('ES256');
    const tokens = await Promise.all(
      Array.from({ length: 20 }, (_, i) => signWith(stranger, {}, { header: { kid: `made-up-${i}` } })),
    );
    const statuses = await Promise.all(
      tokens.map(async (token) => (await app.inject({ url: '/whoami', headers: bearer(token) })).statusCode),
    );
    expect(statuses.every((status) => status === 200)).toBe(true); // not guarded: the bad token only makes the caller anonymous
    expect(server.requests - before).toBe(1);
  });

  it('HS256 signed with SECRET_KEY and alg none are refused from the header alone: no key lookup, no fetch', async () => {
    const { app } = await appWith({ AUTH_JWKS_COOLDOWN_S: '0.2' });
    await sleep(250); // an unknown kid would now refetch
    const before = server.requests;
    for (const token of [
      signToken({ sub: 'a', roles: ['admin'] }, SECRET),
      unsignedToken({ roles: ['admin'] }, 'made-up'),
    ]) {
      const res = await app.inject({ url: '/guard?action=tasks:view', headers: bearer(token) });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.details[0].reason).toBe('invalid_algorithm');
    }
    expect(server.requests - before).toBe(0);
  });

  it('during an outage: known keys keep working; an unknown kid answers 503 with Retry-After, without a fetch per request', async () => {
    const { app, resolver } = await appWith({ AUTH_JWKS_COOLDOWN_S: '5' });
    server.mode = 'error';
    await resolver.provider!.keys.refresh(); // fails: the cooldown now runs from a failure
    const before = server.requests;
    const rotated = await signWith(makeKey('RS256'), { roles: ['admin'] });
    for (let i = 0; i < 5; i += 1) {
      const res = await app.inject({ url: '/guard?action=tasks:view', headers: bearer(rotated) });
      expect(res.statusCode).toBe(503);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(5);
      expect(res.json()).toMatchObject({
        success: false,
        data: null,
        error: { code: 'SERVICE_UNAVAILABLE', details: [{ reason: 'keys_unavailable' }] },
      });
    }
    expect(server.requests - before).toBe(0);
    const known = await whoami(app, await signWith(rsa, { roles: ['viewer'] }));
    expect(known.statusCode).toBe(200);
    expect(known.json().roles).toEqual(['viewer']);
  });

  it('a token without kid is accepted when one key fits its algorithm, refused when several do', async () => {
    const noKid = await signWith(rsa, { roles: ['admin'] }, { header: { kid: undefined } });
    const { app: single } = await appWith();
    expect((await single.inject({ url: '/guard?action=tasks:view', headers: bearer(noKid) })).statusCode).toBe(200);
    server.publish(rsa, makeKey('RS256'), ec);
    const { app: several } = await appWith();
    const res = await several.inject({ url: '/guard?action=tasks:view', headers: bearer(noKid) });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.details[0].reason).toBe('unknown_key');
  });
});
