import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  Container,
  CONTEXT_RESOLVER,
  assertPermission,
  ContextResolver,
  JwtContextResolver,
  UnauthenticatedError,
  signToken,
  type CoreContext,
} from '@core/runtime';
import { POLICIES, SECRET, buildApp, craftToken, inSeconds, type WhoAmI } from './auth-fixtures.js';

let app: FastifyInstance;
beforeAll(async () => {
  app = await buildApp();
});
afterAll(() => app.close());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const tokenFor = (...roles: string[]) => signToken({ sub: `user-${roles.join('+') || 'none'}`, roles }, SECRET);

async function whoami(headers: Record<string, string | undefined> = {}): Promise<WhoAmI> {
  const res = await app.inject({ method: 'GET', url: '/whoami', headers });
  expect(res.statusCode).toBe(200);
  return res.json<WhoAmI>();
}

async function guard(action: string, headers: Record<string, string> = {}): Promise<{ status: number; code: unknown }> {
  const res = await app.inject({ method: 'GET', url: '/guard', query: { action }, headers });
  return { status: res.statusCode, code: res.statusCode === 200 ? null : res.json<{ code: unknown }>().code };
}

describe('permissions: wildcards, exact matching, union, unknown roles, anonymous', () => {
  it.each([
    // roles (null = no credential), action, expected status
    { name: '* grants anything', roles: ['admin'], action: 'reports:export', status: 200 },
    { name: '<table>:* grants that table', roles: ['editor'], action: 'tasks:delete', status: 200 },
    { name: '<table>:* does not grant another table', roles: ['editor'], action: 'projects:delete', status: 403 },
    {
      name: '<table>:* does not grant a table sharing the prefix',
      roles: ['editor'],
      action: 'tasksx:view',
      status: 403,
    },
    { name: '<table>:* does not grant the bare table name', roles: ['editor'], action: 'tasks', status: 403 },
    { name: 'exact match', roles: ['viewer'], action: 'tasks:view', status: 200 },
    { name: 'other action of the same table', roles: ['viewer'], action: 'tasks:delete', status: 403 },
    { name: 'no trimming: "tasks:view " ≠ "tasks:view"', roles: ['viewer'], action: 'tasks:view ', status: 403 },
    { name: 'no case folding: "Tasks:view" ≠ "tasks:view"', roles: ['shouty'], action: 'tasks:view', status: 403 },
    { name: 'no case folding, exact case matches', roles: ['shouty'], action: 'Tasks:view', status: 200 },
    { name: 'union: second role adds tasks:*', roles: ['viewer', 'editor'], action: 'tasks:delete', status: 200 },
    {
      name: 'union: second role adds projects:view',
      roles: ['viewer', 'editor'],
      action: 'projects:view',
      status: 200,
    },
    { name: 'unknown role grants nothing', roles: ['ghost'], action: 'tasks:view', status: 403 },
    { name: 'unknown role beside a known one', roles: ['viewer', 'ghost'], action: 'tasks:view', status: 200 },
    { name: 'a token without roles grants nothing', roles: [], action: 'tasks:listview', status: 403 },
    { name: 'anonymous: permitted action', roles: null, action: 'tasks:listview', status: 200 },
    { name: 'anonymous: not permitted → 401, not 403', roles: null, action: 'tasks:view', status: 401 },
  ])('$name', async ({ roles, action, status }) => {
    const headers = roles === null ? {} : bearer(tokenFor(...roles));
    const result = await guard(action, headers);
    expect(result.status).toBe(status);
    if (status === 401) expect(result.code).toBe('UNAUTHENTICATED');
    if (status === 403) expect(result.code).toBe('FORBIDDEN');
  });
});

describe('context: union of permissions, intersection of restrictions', () => {
  const everyRestriction = ['tasks.assignee_email', 'tasks.budget', 'tasks.notes'];
  it.each([
    {
      name: 'one role',
      roles: ['viewer'],
      permissions: ['tasks:listview', 'tasks:view'],
      restricted: ['tasks.assignee_email', 'tasks.budget'],
    },
    {
      name: 'two roles: union / intersection',
      roles: ['viewer', 'editor'],
      permissions: ['projects:view', 'tasks:*', 'tasks:listview', 'tasks:view'],
      restricted: ['tasks.budget'],
    },
    {
      name: 'an unrestricted role lifts every restriction',
      roles: ['admin', 'viewer'],
      permissions: ['*', 'tasks:listview', 'tasks:view'],
      restricted: [],
    },
    {
      name: 'an unknown role does not relax restrictions',
      roles: ['viewer', 'ghost'],
      permissions: ['tasks:listview', 'tasks:view'],
      restricted: ['tasks.assignee_email', 'tasks.budget'],
    },
    {
      name: 'only unknown roles: nothing granted, every restriction',
      roles: ['ghost'],
      permissions: [],
      restricted: everyRestriction,
    },
    { name: 'no roles: nothing granted, every restriction', roles: [], permissions: [], restricted: everyRestriction },
  ])('$name', async ({ roles, permissions, restricted }) => {
    const me = await whoami(bearer(tokenFor(...roles)));
    expect(me).toMatchObject({ authenticated: true, reason: null, roles, permissions, restricted });
  });

  it('no credential → role anonymous, with its permissions and restrictions', async () => {
    expect(await whoami()).toEqual({
      sub: null,
      roles: ['anonymous'],
      permissions: ['tasks:listview'],
      restricted: ['tasks.assignee_email'],
      authenticated: false,
      reason: null,
    });
  });

  it('anonymous absent from the policies: no permission (401) and the most restrictive view', async () => {
    const { anonymous: _dropped, ...roles } = POLICIES.roles;
    const strict = await buildApp({ secret: SECRET, policies: { roles } });
    try {
      const me = (await strict.inject({ url: '/whoami' })).json<WhoAmI>();
      expect(me.permissions).toEqual([]);
      expect(me.restricted).toEqual(['tasks.assignee_email', 'tasks.budget', 'tasks.notes']);
      expect((await strict.inject({ url: '/guard?action=tasks:listview' })).statusCode).toBe(401);
    } finally {
      await strict.close();
    }
  });
});

describe('credentials: where the token comes from', () => {
  const viewer = signToken({ sub: 'u1', roles: ['viewer'] }, SECRET);
  const admin = signToken({ sub: 'u2', roles: ['admin'] }, SECRET);
  it.each([
    { name: 'Authorization: Bearer', headers: { authorization: `Bearer ${viewer}` }, sub: 'u1' },
    { name: 'scheme is case-insensitive', headers: { authorization: `bearer   ${viewer}` }, sub: 'u1' },
    { name: 'spaces and a tab after the scheme', headers: { authorization: `Bearer  \t ${viewer}` }, sub: 'u1' },
    { name: 'spaces before the scheme', headers: { authorization: `  BEARER ${viewer}` }, sub: 'u1' },
    { name: 'access_token cookie', headers: { cookie: `access_token=${viewer}` }, sub: 'u1' },
    {
      name: 'cookie among others, spaces and quotes',
      headers: { cookie: `theme=dark;  access_token = "${viewer}" ; lang=en` },
      sub: 'u1',
    },
    {
      name: 'header wins over cookie',
      headers: { authorization: `Bearer ${viewer}`, cookie: `access_token=${admin}` },
      sub: 'u1',
    },
    {
      name: 'another scheme is ignored, cookie used',
      headers: { authorization: 'Basic dTpw', cookie: `access_token=${admin}` },
      sub: 'u2',
    },
    {
      name: 'similar cookie names are not it',
      headers: { cookie: `xaccess_token=${admin}; access_tokens=${admin}` },
      sub: null,
    },
    { name: 'empty cookie (after logout) is no credential', headers: { cookie: 'access_token=' }, sub: null },
    { name: 'another scheme alone is no credential', headers: { authorization: 'Basic dTpw' }, sub: null },
  ])('$name', async ({ headers, sub }) => {
    const me = await whoami(headers);
    expect(me.sub).toBe(sub);
    expect(me.authenticated).toBe(sub !== null);
    expect(me.reason).toBeNull();
  });
});

describe('rejected credentials: plain routes run as anonymous, guarded routes answer 401', () => {
  const good = signToken({ sub: 'u1', roles: ['viewer'] }, SECRET);
  const [goodHeader, goodPayload, goodSignature] = good.split('.');
  const forgedPayload = Buffer.from(JSON.stringify({ sub: 'u1', roles: ['admin'] })).toString('base64url');
  it.each([
    {
      name: 'alg none, no signature',
      token: craftToken({ sub: 'x', roles: ['admin'] }, { alg: 'none' }),
      reason: 'invalid_signature',
    },
    {
      name: 'alg none with a signature',
      token: craftToken({ sub: 'x', roles: ['admin'] }, { alg: 'none' }) + goodSignature,
      reason: 'invalid_algorithm',
    },
    {
      name: 'HS512 with the right secret',
      token: craftToken({ sub: 'x', roles: ['admin'] }, { alg: 'HS512' }),
      reason: 'invalid_algorithm',
    },
    {
      name: 'HS256 with a wrong secret',
      token: craftToken({ sub: 'x', roles: ['admin'] }, { secret: 'another-secret-of-enough-length-000000' }),
      reason: 'invalid_signature',
    },
    {
      name: 'payload swapped under a valid signature',
      token: `${goodHeader}.${forgedPayload}.${goodSignature}`,
      reason: 'invalid_signature',
    },
    {
      name: 'expired',
      token: craftToken({ sub: 'x', roles: ['admin'], exp: inSeconds(-10) }),
      reason: 'token_expired',
    },
    {
      name: 'not valid yet (nbf)',
      token: craftToken({ sub: 'x', roles: ['admin'], nbf: inSeconds(600) }),
      reason: 'token_not_yet_valid',
    },
    {
      name: 'exp of the wrong type',
      token: craftToken({ sub: 'x', roles: ['admin'], exp: 'tomorrow' }),
      reason: 'invalid_claims',
    },
    { name: 'garbage', token: 'not-a-token', reason: 'malformed' },
    { name: 'two segments', token: `${goodHeader}.${goodPayload}`, reason: 'malformed' },
    { name: 'empty bearer', token: '', reason: 'malformed' },
    { name: 'roles is a string', token: craftToken({ sub: 'x', roles: 'admin' }), reason: 'invalid_claims' },
    { name: 'roles holds a number', token: craftToken({ sub: 'x', roles: ['viewer', 1] }), reason: 'invalid_claims' },
    { name: 'roles is an object', token: craftToken({ sub: 'x', roles: { admin: true } }), reason: 'invalid_claims' },
    { name: 'roles is null', token: craftToken({ sub: 'x', roles: null }), reason: 'invalid_claims' },
    { name: 'sub is a number', token: craftToken({ sub: 42, roles: ['viewer'] }), reason: 'invalid_claims' },
  ])('$name', async ({ token, reason }) => {
    const headers = { authorization: `Bearer ${token}` };
    const me = await whoami(headers);
    expect(me).toMatchObject({ sub: null, roles: ['anonymous'], authenticated: false, reason });
    // tasks:listview is granted to anonymous: a bad credential still gets 401, so the client learns it.
    expect(await guard('tasks:listview', headers)).toEqual({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('a rejected cookie is reported the same way', async () => {
    const headers = { cookie: `access_token=${craftToken({ sub: 'x', roles: ['admin'] }, { alg: 'HS512' })}` };
    expect((await whoami(headers)).reason).toBe('invalid_algorithm');
    expect((await guard('tasks:listview', headers)).status).toBe(401);
  });

  it('the 401 body never echoes the token', async () => {
    const token = craftToken({ sub: 'x', roles: ['admin'] }, { secret: 'wrong-secret-wrong-secret-wrong-secret' });
    const res = await app.inject({ url: '/guard?action=tasks:view', headers: bearer(token) });
    expect(res.statusCode).toBe(401);
    expect(res.body).not.toContain(token.split('.')[2]);
  });
});

describe('verified-token cache', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('re-checks exp on every hit: a cached token stops working once it expires', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const resolver = new JwtContextResolver({ secret: SECRET, policies: POLICIES });
    const cached = await buildApp({ resolver });
    try {
      const token = signToken({ sub: 'u1', roles: ['viewer'], expiresIn: 60 }, SECRET);
      const headers = bearer(token);
      expect((await cached.inject({ url: '/guard?action=tasks:view', headers })).statusCode).toBe(200);
      expect(resolver.cachedTokenCount).toBe(1);
      vi.setSystemTime(new Date('2030-01-01T00:00:59Z'));
      expect((await cached.inject({ url: '/guard?action=tasks:view', headers })).statusCode).toBe(200);
      vi.setSystemTime(new Date('2030-01-01T00:01:01Z'));
      const res = await cached.inject({ url: '/whoami', headers });
      expect(res.json<WhoAmI>()).toMatchObject({ authenticated: false, reason: 'token_expired' });
      expect((await cached.inject({ url: '/guard?action=tasks:view', headers })).statusCode).toBe(401);
    } finally {
      await cached.close();
    }
  });

  it('is bounded (least recently used tokens are evicted)', async () => {
    const resolver = new JwtContextResolver({ secret: SECRET, policies: POLICIES, cacheSize: 3 });
    const bounded = await buildApp({ resolver });
    try {
      const tokens = Array.from({ length: 10 }, (_, i) => signToken({ sub: `u${i}`, roles: ['viewer'] }, SECRET));
      for (const token of tokens) {
        const me = (await bounded.inject({ url: '/whoami', headers: bearer(token) })).json<WhoAmI>();
        expect(me.authenticated).toBe(true);
        expect(resolver.cachedTokenCount).toBeLessThanOrEqual(3);
      }
      expect(resolver.cachedTokenCount).toBe(3);
    } finally {
      await bounded.close();
    }
  });

  it('evicts the least recently used token; every hit refreshes, repeated hits on the newest too', () => {
    const resolver = new JwtContextResolver({ secret: SECRET, policies: POLICIES, cacheSize: 3 });
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((sub) => signToken({ sub, roles: ['viewer'] }, SECRET));
    // A hit returns the cached context object; a miss verifies again and builds a new one.
    const resolve = (token: string | undefined) => resolver.resolveToken(token!);
    const [ctxA, ctxB, ctxC] = [resolve(a), resolve(b), resolve(c)];
    expect(resolve(a)).toBe(ctxA); // order b, c, a
    expect(resolve(a)).toBe(ctxA); // already the newest: stays b, c, a
    resolve(d); // evicts b → c, a, d
    expect(resolver.cachedTokenCount).toBe(3);
    expect(resolve(c)).toBe(ctxC); // a, d, c
    expect(resolve(a)).toBe(ctxA); // d, c, a
    expect(resolve(b)).not.toBe(ctxB); // evicted, verified again; evicts d → c, a, b
    expect(resolve(c)).toBe(ctxC);
    expect(resolve(a)).toBe(ctxA);
  });

  it('does not cache rejected tokens', () => {
    const resolver = new JwtContextResolver({ secret: SECRET, policies: POLICIES });
    expect(() => resolver.resolveToken(craftToken({ roles: ['admin'] }, { alg: 'HS512' }))).toThrow(
      UnauthenticatedError,
    );
    expect(resolver.cachedTokenCount).toBe(0);
  });
});

describe('replaceable resolver', () => {
  /** An API-key resolver, asynchronous on purpose (as a session store lookup would be). */
  class ApiKeyResolver extends ContextResolver {
    override async resolve(request: FastifyRequest): Promise<CoreContext | null> {
      const key = request.headers['x-api-key'];
      if (key === undefined) return null;
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (key === 'boom') throw new Error('session store unreachable');
      if (key !== 'k-123')
        throw new UnauthenticatedError('Unknown API key.', [{ message: 'Unknown API key.', reason: 'unknown_key' }]);
      return {
        sub: 'svc',
        roles: ['service'],
        permissions: new Set(['tasks:view']),
        restrictedFields: new Set(['tasks.notes']),
      };
    }
    override anonymousContext(): CoreContext {
      return { sub: null, roles: ['anonymous'], permissions: new Set(), restrictedFields: new Set() };
    }
  }

  let custom: FastifyInstance;
  beforeAll(async () => {
    custom = await buildApp({ resolver: new ApiKeyResolver() });
  });
  afterAll(() => custom.close());

  it.each([
    { name: 'valid key', headers: { 'x-api-key': 'k-123' }, sub: 'svc', reason: null, guard: 200 },
    { name: 'JWTs mean nothing to it', headers: bearer(tokenFor('admin')), sub: null, reason: null, guard: 401 },
    { name: 'unknown key', headers: { 'x-api-key': 'nope' }, sub: null, reason: 'unknown_key', guard: 401 },
  ])('$name', async ({ headers, sub, reason, guard: status }) => {
    const me = (await custom.inject({ url: '/whoami', headers })).json<WhoAmI>();
    expect(me).toMatchObject({ sub, reason });
    expect((await custom.inject({ url: '/guard?action=tasks:view', headers })).statusCode).toBe(status);
  });

  it('can be registered in the container instead of passed as an option', async () => {
    const registry = new Container().singleton(CONTEXT_RESOLVER, { useClass: ApiKeyResolver });
    const app = await buildApp({ container: registry, secret: SECRET, policies: POLICIES });
    try {
      const me = (await app.inject({ url: '/whoami', headers: { 'x-api-key': 'k-123' } })).json<WhoAmI>();
      expect(me.sub).toBe('svc');
      // The registered resolver wins over the JWT default that secret + policies would build.
      expect((await app.inject({ url: '/whoami', headers: bearer(tokenFor('admin')) })).json<WhoAmI>().sub).toBeNull();
    } finally {
      await app.close();
    }
  });

  it('a resolver crash fails the request (500) instead of running it as anonymous', async () => {
    const res = await custom.inject({ url: '/whoami', headers: { 'x-api-key': 'boom' } });
    expect(res.statusCode).toBe(500);
  });
});

describe('registration', () => {
  it('without resolver, secret or policies the plugin refuses to load, saying what it needs', async () => {
    await expect(buildApp({ secret: SECRET })).rejects.toThrow(
      /needs either \{ resolver \} or both \{ secret, policies \}/,
    );
  });

  it('assertPermission without the plugin is a configuration error, never a pass', async () => {
    const bare = Fastify();
    bare.get('/x', { preHandler: async (request) => assertPermission(request, 'tasks:view') }, async () => ({
      ok: true,
    }));
    try {
      const res = await bare.inject({ url: '/x' });
      expect(res.statusCode).toBe(500);
      expect(res.json<{ message: string }>().message).toMatch(/register coreContextPlugin/);
    } finally {
      await bare.close();
    }
  });
});
