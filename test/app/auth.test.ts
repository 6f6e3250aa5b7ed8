/**
 * Authentication and permissions through the app (docs/http.md, "Credentials"; docs/security.md): bearer header and `access_token`
 * cookie, HS256 only, `exp` honoured, a malformed `roles` claim rejected, the policies' permissions
 * matched exactly, and the guard of every scaffolded route.
 */
import { createHmac } from 'node:crypto';
import type { HTTPMethods } from 'fastify';
import { expect, it } from 'vitest';
import { signToken } from '@core/runtime';
import { describeFixtureApp, SECRET } from './helpers.js';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWT built by hand, to send what `signToken` never produces. */
function craftToken(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: string | null,
  hmac = 'sha256',
): string {
  const head = `${b64(header)}.${b64(payload)}`;
  const signature = key === null ? '' : createHmac(hmac, Buffer.from(key, 'utf8')).update(head).digest('base64url');
  return `${head}.${signature}`;
}

const now = (): number => Math.floor(Date.now() / 1000);
const ADMIN_CLAIMS = { sub: 'a', roles: ['admin'] };

const ROUTES = [
  ['POST', '/tasks/', 'create'],
  ['GET', '/tasks/:id', 'view'],
  ['PUT', '/tasks/:id', 'update'],
  ['PATCH', '/tasks/:id', 'update'],
  ['DELETE', '/tasks/:id', 'delete'],
  ['GET', '/tasks/', 'listview'],
  ['POST', '/tasks/search', 'listview'],
] as const;

function payloadFor(method: HTTPMethods, path: string): Record<string, unknown> | undefined {
  if (path.endsWith('/search')) return {};
  return method === 'POST' || method === 'PUT' || method === 'PATCH' ? { title: 'auth' } : undefined;
}

describeFixtureApp('authentication and permissions', (ctx) => {
  const call = async (method: HTTPMethods, path: string, headers: Record<string, string>) => {
    const task = await ctx.createTask({ title: 'guarded', assignee_email: 'g@example.com' });
    const payload = payloadFor(method, path);
    return ctx.app.inject({
      method,
      url: path.replace(':id', task.id),
      headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
      ...(payload ? { payload } : {}),
    });
  };

  it.each(ROUTES)('no credential → anonymous (no permission) → %s %s is 401 UNAUTHENTICATED', async (method, path) => {
    const res = await call(method, path, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'UNAUTHENTICATED' } });
    expect(await ctx.countTasks()).toBe(1);
  });

  it('the bearer header and the access_token cookie both authenticate', async () => {
    const admin = ctx.token(['admin']);
    const variants: Record<string, string>[] = [
      { authorization: `Bearer ${admin}` },
      { authorization: `bearer ${admin}` },
      { cookie: `theme=dark; access_token=${admin}` },
    ];
    for (const headers of variants) {
      const res = await call('GET', '/tasks/', headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(200);
      expect(res.json().data[0].assignee_email).toBe('g@example.com');
    }
    const viewerByCookie = await call('GET', '/tasks/', { cookie: `access_token=${ctx.token(['viewer'])}` });
    expect(viewerByCookie.statusCode).toBe(200);
    expect(viewerByCookie.json().data[0]).not.toHaveProperty('assignee_email');
    expect(viewerByCookie.headers['vary']).toBe('Authorization, Cookie');
  });

  it.each([
    ['expired', () => craftToken({ alg: 'HS256', typ: 'JWT' }, { ...ADMIN_CLAIMS, exp: now() - 60 }, SECRET)],
    ['signed with another secret', () => signToken({ sub: 'a', roles: ['admin'] }, 'x'.repeat(48))],
    ['alg none, no signature', () => craftToken({ alg: 'none', typ: 'JWT' }, ADMIN_CLAIMS, null)],
    ['alg none, with a signature', () => craftToken({ alg: 'none', typ: 'JWT' }, ADMIN_CLAIMS, SECRET)],
    ['HS512 with the right secret', () => craftToken({ alg: 'HS512', typ: 'JWT' }, ADMIN_CLAIMS, SECRET, 'sha512')],
    ['HS384 with the right secret', () => craftToken({ alg: 'HS384', typ: 'JWT' }, ADMIN_CLAIMS, SECRET, 'sha384')],
    [
      'HS256 header over an HS512 signature',
      () => craftToken({ alg: 'HS256', typ: 'JWT' }, ADMIN_CLAIMS, SECRET, 'sha512'),
    ],
    ['roles a string', () => craftToken({ alg: 'HS256', typ: 'JWT' }, { sub: 'a', roles: 'admin' }, SECRET)],
    ['roles with a number', () => craftToken({ alg: 'HS256', typ: 'JWT' }, { sub: 'a', roles: ['admin', 1] }, SECRET)],
    ['roles an object', () => craftToken({ alg: 'HS256', typ: 'JWT' }, { sub: 'a', roles: { admin: true } }, SECRET)],
    ['sub a number', () => craftToken({ alg: 'HS256', typ: 'JWT' }, { sub: 7, roles: ['admin'] }, SECRET)],
    ['not a JWT', () => 'definitely-not-a-jwt'],
    ['empty bearer', () => ''],
  ])('a token %s → 401 on every guarded route, by header and by cookie', async (_what, make) => {
    const token = make();
    const variants: Record<string, string>[] = [
      { authorization: `Bearer ${token}` },
      ...(token ? [{ cookie: `access_token=${token}` }] : []),
    ];
    for (const headers of variants) {
      const res = await call('GET', '/tasks/', headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json().error.code).toBe('UNAUTHENTICATED');
      expect(res.body).not.toContain('g@example.com');
      if (token.length > 10) expect(res.body).not.toContain(token);
    }
    const before = await ctx.countTasks();
    const write = await ctx.app.inject({
      method: 'POST',
      url: '/tasks/',
      headers: { authorization: `Bearer ${token}` },
      payload: { title: 'nope' },
    });
    expect(write.statusCode).toBe(401);
    expect(await ctx.countTasks()).toBe(before);
  });

  it('a hand-crafted valid HS256 token is accepted (the crafting above is sound)', async () => {
    const token = craftToken({ alg: 'HS256', typ: 'JWT' }, { ...ADMIN_CLAIMS, exp: now() + 60 }, SECRET);
    expect((await call('GET', '/tasks/', { authorization: `Bearer ${token}` })).statusCode).toBe(200);
  });

  it.each([
    // [roles, route index → expected status]
    [['viewer'], { create: 403, view: 200, update: 403, delete: 403, listview: 200 }],
    [['editor'], { create: 201, view: 200, update: 200, delete: 200, listview: 200 }],
    [['admin'], { create: 201, view: 200, update: 200, delete: 200, listview: 200 }],
    // Unknown roles grant nothing; names match exactly (no case folding).
    [['ghost'], { create: 403, view: 403, update: 403, delete: 403, listview: 403 }],
    [['Admin'], { create: 403, view: 403, update: 403, delete: 403, listview: 403 }],
    [['admin '], { create: 403, view: 403, update: 403, delete: 403, listview: 403 }],
    [[], { create: 403, view: 403, update: 403, delete: 403, listview: 403 }],
    // A token naming the anonymous role gets what anonymous gets: nothing, but as a 403.
    [['anonymous'], { create: 403, view: 403, update: 403, delete: 403, listview: 403 }],
    // Permissions are the union over known roles; an unknown role next to a known one changes nothing.
    [['viewer', 'ghost'], { create: 403, view: 200, update: 403, delete: 403, listview: 200 }],
    [['viewer', 'editor'], { create: 201, view: 200, update: 200, delete: 200, listview: 200 }],
  ] as const)('roles %j', async (roles, expected) => {
    const authorization = `Bearer ${ctx.token(roles)}`;
    for (const [method, path, action] of ROUTES) {
      const res = await call(method, path, { authorization });
      expect(res.statusCode, `${method} ${path}`).toBe(expected[action]);
      if (res.statusCode === 403)
        expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'FORBIDDEN' } });
    }
  });

  it('viewer DELETE → 403 and the record stays', async () => {
    const task = await ctx.createTask({ title: 'stays' });
    const res = await ctx.request('viewer', { method: 'DELETE', url: `/tasks/${task.id}` });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('FORBIDDEN');
    expect(await ctx.readTask(task.id)).not.toBeNull();
  });

  it('the restricted set of several roles is the intersection: viewer + admin sees everything', async () => {
    await ctx.createTask({ title: 'x', assignee_email: 'both@example.com' });
    const res = await call('GET', '/tasks/', { authorization: `Bearer ${ctx.token(['viewer', 'admin'])}` });
    expect(res.body).toContain('both@example.com');
    expect(res.headers['vary']).toBeUndefined();
  });

  it('a bad token is a 401 even when a valid cookie is also sent (the header wins)', async () => {
    const res = await call('GET', '/tasks/', {
      authorization: 'Bearer nope',
      cookie: `access_token=${ctx.token(['admin'])}`,
    });
    expect(res.statusCode).toBe(401);
  });

  it('an Authorization header of another scheme is not a credential: the cookie is used', async () => {
    const res = await call('GET', '/tasks/', {
      authorization: 'Basic dXNlcjpwYXNz',
      cookie: `access_token=${ctx.token(['admin'])}`,
    });
    expect(res.statusCode).toBe(200);
  });

  it('an unguarded plain route answers anonymous callers and callers with bad tokens alike', async () => {
    for (const headers of [{}, { authorization: 'Bearer nope' }]) {
      const res = await ctx.app.inject({ method: 'GET', url: '/health', headers });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
    }
  });
});
