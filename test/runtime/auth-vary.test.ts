/**
 * `Vary: Authorization, Cookie` on Core routes: on every JSON answer whose caller has restricted
 * fields — success, introspection and every kind of error — and on nothing else. Core decides it
 * where it knows the answer is JSON (`sendCore`, a `preSerialization` hook for serialized objects, the
 * content type of what a handler returns), not in an `onSend` hook, so each way out is covered here.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CoreAPIRoute,
  CoreJSONResponse,
  NotFoundError,
  ScopedDependencyMiddleware,
  appExceptionHandler,
  coreContextPlugin,
  signToken,
  useCoreRequest,
  varyOnCredentials,
} from '@core/runtime';
import { POLICIES, SECRET } from './auth-fixtures.js';

const CREDENTIAL_VARY = 'Authorization, Cookie';

let app: FastifyInstance;
beforeAll(async () => {
  app = Fastify();
  useCoreRequest(app);
  app.setErrorHandler(appExceptionHandler);
  await app.register(ScopedDependencyMiddleware);
  await app.register(coreContextPlugin, { secret: SECRET, policies: POLICIES });
  const view = 'tasks:view';
  const routes: Parameters<typeof CoreAPIRoute>[0][] = [
    { method: 'GET', url: '/envelope', action: view, handler: async () => new CoreJSONResponse({ ok: true }) },
    {
      method: 'GET',
      url: '/schema',
      action: view,
      exposeSchema: () => ({ schema: { type: 'object' }, restrictedFields: [] }),
      handler: async () => new CoreJSONResponse(null),
    },
    { method: 'DELETE', url: '/envelope', action: 'tasks:delete', handler: async () => new CoreJSONResponse(null) },
    {
      method: 'GET',
      url: '/validated/:id',
      action: view,
      schema: { params: Type.Object({ id: Type.Integer() }) },
      handler: async () => new CoreJSONResponse(null),
    },
    { method: 'POST', url: '/body', action: view, handler: async () => new CoreJSONResponse(null) },
    {
      method: 'GET',
      url: '/missing',
      action: view,
      handler: async () => {
        throw new NotFoundError('No such task.');
      },
    },
    { method: 'GET', url: '/object', action: view, handler: async () => ({ plain: 'object' }) },
    {
      method: 'GET',
      url: '/json-text',
      action: view,
      handler: async (_request, reply) => {
        reply.type('application/problem+json');
        return '{"typed":"by the handler"}';
      },
    },
    {
      method: 'GET',
      url: '/sent-by-handler',
      action: view,
      handler: async (_request, reply) => {
        varyOnCredentials(reply);
        return reply.type('application/json').send('{"sent":"by the handler"}');
      },
    },
    {
      method: 'GET',
      url: '/vary-set-by-handler',
      action: view,
      handler: async (_request, reply) => {
        // Already there: merged with, not replaced, and a name given in another case is not repeated.
        reply.header('vary', 'Accept-Encoding, cookie');
        return new CoreJSONResponse({ ok: true });
      },
    },
    {
      method: 'GET',
      url: '/text',
      action: view,
      handler: async (_request, reply) => {
        reply.type('text/plain; charset=utf-8');
        return 'plain text';
      },
    },
    {
      method: 'GET',
      url: '/own-error-handler',
      action: view,
      errorHandler: (_error, _request, reply) => void reply.code(418).send({ own: 'error body' }),
      handler: async () => {
        throw new Error('handled by the route');
      },
    },
  ];
  // The same answers from synchronous handlers, which the route sends without a promise.
  routes.push(
    { method: 'GET', url: '/sync/envelope', action: view, handler: () => new CoreJSONResponse({ ok: true }) },
    {
      method: 'GET',
      url: '/sync/missing',
      action: view,
      handler: () => {
        throw new NotFoundError('No such task.');
      },
    },
    { method: 'GET', url: '/sync/object', action: view, handler: () => ({ plain: 'object' }) },
    { method: 'GET', url: '/sync/nothing', action: view, handler: () => undefined },
    { method: 'GET', url: '/nothing', action: view, handler: async () => undefined },
  );
  for (const route of routes) app.route(CoreAPIRoute(route));
  app.get('/plain', async () => ({ not: 'a Core route' }));
  await app.ready();
});
afterAll(() => app.close());

const token = (role: string) => signToken({ sub: `user-${role}`, roles: [role] }, SECRET);
const callers: Record<string, Record<string, string>> = {
  admin: { authorization: `Bearer ${token('admin')}` }, // no restricted field
  viewer: { authorization: `Bearer ${token('viewer')}` }, // restricted fields
  viewerByCookie: { cookie: `access_token=${token('viewer')}` },
  anonymous: {}, // anonymous has a restricted field in these policies
  badToken: { authorization: 'Bearer not-a-token' }, // rejected → anonymous
};

describe('Vary on Core routes', () => {
  it.each([
    // caller, method, url, expected status, expected Vary
    ['viewer', 'GET', '/envelope', 200, CREDENTIAL_VARY],
    ['viewerByCookie', 'GET', '/envelope', 200, CREDENTIAL_VARY],
    ['admin', 'GET', '/envelope', 200, undefined],
    ['viewer', 'GET', '/schema?schema=true', 200, CREDENTIAL_VARY],
    ['admin', 'GET', '/schema?schema=true', 200, undefined],
    // Errors are JSON envelopes too, whichever stage they come from.
    ['viewer', 'DELETE', '/envelope', 403, CREDENTIAL_VARY],
    ['admin', 'GET', '/validated/abc', 422, undefined],
    ['viewer', 'GET', '/validated/abc', 422, CREDENTIAL_VARY],
    ['viewer', 'GET', '/missing', 404, CREDENTIAL_VARY],
    ['anonymous', 'GET', '/envelope', 401, CREDENTIAL_VARY],
    ['badToken', 'GET', '/envelope', 401, CREDENTIAL_VARY],
    ['viewer', 'GET', '/own-error-handler', 418, CREDENTIAL_VARY],
    // What the handler returns or sends itself.
    ['viewer', 'GET', '/object', 200, CREDENTIAL_VARY],
    ['admin', 'GET', '/object', 200, undefined],
    ['viewer', 'GET', '/json-text', 200, CREDENTIAL_VARY],
    ['viewer', 'GET', '/sent-by-handler', 200, CREDENTIAL_VARY],
    ['viewer', 'GET', '/vary-set-by-handler', 200, 'Accept-Encoding, cookie, Authorization'],
    ['admin', 'GET', '/vary-set-by-handler', 200, 'Accept-Encoding, cookie'],
    ['viewer', 'GET', '/text', 200, undefined],
    // Not a Core route.
    ['viewer', 'GET', '/plain', 200, undefined],
  ] as const)('%s %s %s → %i, Vary %s', async (caller, method, url, status, vary) => {
    const res = await app.inject({ method, url, headers: callers[caller] });
    expect(res.statusCode, res.body).toBe(status);
    expect(res.headers['vary']).toBe(vary);
    if (status >= 400 && status !== 418) expect(res.json()).toMatchObject({ success: false, data: null });
  });

  it('a body the parser refuses (415, before the guard) still varies for a restricted caller', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/body',
      headers: { ...callers.viewer, 'content-type': 'text/plain' },
      payload: 'x',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    expect(res.headers['vary']).toBe(CREDENTIAL_VARY);
  });
});

describe('synchronous handlers', () => {
  it.each([
    ['/sync/envelope', '/envelope'],
    ['/sync/missing', '/missing'],
    ['/sync/object', '/object'],
    // Undefined, nothing sent: an empty 200, as Fastify answers an async handler's undefined.
    ['/sync/nothing', '/nothing'],
  ])('%s answers as the async %s does', async (sync, async) => {
    for (const caller of ['viewer', 'admin']) {
      const [a, b] = await Promise.all([
        app.inject({ method: 'GET', url: sync, headers: callers[caller] }),
        app.inject({ method: 'GET', url: async, headers: callers[caller] }),
      ]);
      expect(a.statusCode, a.body).toBe(b.statusCode);
      expect(a.body).toBe(b.body);
      expect(a.headers['content-type']).toBe(b.headers['content-type']);
      expect(a.headers['vary']).toBe(b.headers['vary']);
    }
  });
});
