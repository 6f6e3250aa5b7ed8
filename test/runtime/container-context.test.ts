/**
 * The DI scope and the caller context share one AsyncLocalStorage store per request (one `run`),
 * yet behave as two independent values: each plugin's hook sets its own, in either registration
 * order; `runWithContext` keeps the scope and `scope.run` keeps the context; a request served inside
 * another request (or inside `runWithContext`) never changes the outer one's. Plus the request
 * scope's disposal: synchronous when nothing asynchronous is to be disposed, awaited otherwise.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  Container,
  Inject,
  SYSTEM_CONTEXT,
  ScopedDependencyMiddleware,
  coreContextPlugin,
  currentScope,
  getContext,
  runWithContext,
  signToken,
  type CoreContext,
  type Scope,
} from '@core/runtime';
import { POLICIES, SECRET } from './auth-fixtures.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

const bearer = (sub: string, role: string) => ({
  authorization: `Bearer ${signToken({ sub, roles: [role] }, SECRET)}`,
});

class RequestState {}

/** What a hook or handler sees: the caller's `sub` (or `system`) and the active scope's id. */
const seen = () => ({
  sub: getContext() === SYSTEM_CONTEXT ? 'system' : (getContext().sub ?? 'anonymous'),
  scope: currentScope()?.id ?? null,
});

async function appWith(order: 'scope first' | 'context first', container = new Container().scoped(RequestState)) {
  const app = Fastify();
  apps.push(app);
  const register = {
    scope: () => app.register(ScopedDependencyMiddleware, { container }),
    context: () => app.register(coreContextPlugin, { secret: SECRET, policies: POLICIES }),
  };
  if (order === 'scope first') {
    await register.scope();
    app.addHook('onRequest', (request, _reply, done) => {
      (request as unknown as { between: unknown }).between = seen();
      done();
    });
    await register.context();
  } else {
    await register.context();
    await register.scope();
  }
  return { app, container };
}

describe('one request store, two values', () => {
  it.each(['scope first', 'context first'] as const)(
    '%s: the handler sees its own context and scope, and one AsyncLocalStorage run per request',
    async (order) => {
      const { app } = await appWith(order);
      app.get('/both', async (request) => ({ ...seen(), diScope: request.diScope.id }));
      await app.ready();
      const run = vi.spyOn(AsyncLocalStorage.prototype, 'run');
      const enterWith = vi.spyOn(AsyncLocalStorage.prototype, 'enterWith');
      const res = await app.inject({ url: '/both', headers: bearer('ann', 'viewer') });
      const body = res.json<{ sub: string; scope: number; diScope: number }>();
      expect(body.sub).toBe('ann');
      expect(body.scope).toBe(body.diScope);
      expect(run).toHaveBeenCalledTimes(1);
      expect(enterWith).not.toHaveBeenCalled();
    },
  );

  it('a hook between the two plugins sees the scope but no caller context yet', async () => {
    const { app } = await appWith('scope first');
    app.get('/between', async (request) => ({
      between: (request as unknown as { between: unknown }).between,
      diScope: request.diScope.id,
    }));
    const body = (await app.inject({ url: '/between', headers: bearer('ann', 'viewer') })).json<{
      between: { sub: string; scope: number };
      diScope: number;
    }>();
    expect(body.between).toEqual({ sub: 'system', scope: body.diScope });
  });

  it('a hook between the plugins that moves the chain into a context of its own does not hide the caller resolved after it', async () => {
    const app = Fastify();
    apps.push(app);
    await app.register(ScopedDependencyMiddleware, { container: new Container().scoped(RequestState) });
    const job: CoreContext = { sub: 'job', roles: ['job'], permissions: new Set(), restrictedFields: new Set() };
    app.addHook('onRequest', (_request, _reply, done) => runWithContext(job, () => done()));
    await app.register(coreContextPlugin, { secret: SECRET, policies: POLICIES });
    app.get('/moved', async (request) => ({ ...seen(), diScope: request.diScope.id }));
    const body = (await app.inject({ url: '/moved', headers: bearer('ann', 'viewer') })).json<{
      sub: string;
      scope: number;
      diScope: number;
    }>();
    expect(body).toEqual({ sub: 'ann', scope: body.diScope, diScope: body.diScope });
  });

  it('runWithContext inside a request keeps the scope; scope.run keeps the context; both end with their callback', async () => {
    const { app, container } = await appWith('scope first');
    const other: CoreContext = { sub: 'job', roles: ['job'], permissions: new Set(), restrictedFields: new Set() };
    app.get('/nested', async (_request, _reply, state = Inject(RequestState)) => {
      const inContext = await runWithContext(other, async () => {
        await Promise.resolve();
        return { ...seen(), sameState: Inject(RequestState) === state };
      });
      const otherScope: Scope = container.createScope();
      const inScope = otherScope.run(() => ({ ...seen(), sameState: Inject(RequestState) === state }));
      await otherScope.dispose();
      return { outer: seen(), inContext, inScope, otherScope: otherScope.id };
    });
    const body = (await app.inject({ url: '/nested', headers: bearer('ann', 'admin') })).json();
    expect(body.inContext).toEqual({ sub: 'job', scope: body.outer.scope, sameState: true });
    expect(body.inScope).toEqual({ sub: 'ann', scope: body.otherScope, sameState: false });
    expect(body.outer.sub).toBe('ann');
  });

  it('a request served inside another one (or inside runWithContext) gets its own values and leaves the outer ones alone', async () => {
    const { app } = await appWith('scope first');
    app.get('/inner', async () => seen());
    app.get('/outer', async () => {
      const before = seen();
      const inner = (await app.inject({ url: '/inner', headers: bearer('bob', 'viewer') })).json();
      return { before, inner, after: seen() };
    });
    const outside: CoreContext = {
      sub: 'script',
      roles: ['script'],
      permissions: new Set(['*']),
      restrictedFields: new Set(),
    };
    const body = await runWithContext(outside, async () => {
      const res = await app.inject({ url: '/outer', headers: bearer('ann', 'admin') });
      expect(getContext()).toBe(outside);
      expect(currentScope()).toBeUndefined();
      return res.json();
    });
    expect(body.before.sub).toBe('ann');
    expect(body.inner.sub).toBe('bob');
    expect(body.inner.scope).not.toBe(body.before.scope);
    expect(body.after).toEqual(body.before);
  });
});

describe('request scope disposal', () => {
  const MICROTASK = 'a microtask queued before the disposal';

  /** An app whose handler creates `make()` in the request scope; records the order of events at the end. */
  async function disposalApp(make: (events: string[]) => object) {
    const events: string[] = [];
    class Resource {}
    const container = new Container().scoped(Resource, { useFactory: () => make(events) });
    const app = Fastify();
    apps.push(app);
    // Registered before the middleware: its onResponse hook runs first and queues a microtask.
    app.addHook('onResponse', (_request, _reply, done) => {
      queueMicrotask(() => events.push(MICROTASK));
      done();
    });
    await app.register(ScopedDependencyMiddleware, {
      container,
      onScopeDisposed: () => void events.push('onScopeDisposed'),
    });
    app.addHook('onResponse', (_request, _reply, done) => {
      events.push('a later onResponse hook');
      done();
    });
    app.get('/', async (_request, _reply, resource = Inject(Resource)) => ({ made: resource !== undefined }));
    return { app, events };
  }

  it.each([
    ['nothing disposable', () => ({}), ['onScopeDisposed', 'a later onResponse hook', MICROTASK]],
    [
      'a synchronous disposer',
      (events: string[]) => ({ dispose: () => void events.push('disposed') }),
      ['disposed', 'onScopeDisposed', 'a later onResponse hook', MICROTASK],
    ],
  ])('%s: disposed synchronously in onResponse, with no promise in between', async (_name, make, expected) => {
    const { app, events } = await disposalApp(make);
    expect((await app.inject('/')).statusCode).toBe(200);
    await vi.waitFor(() => expect(events).toContain(MICROTASK));
    expect(events).toEqual(expected);
  });

  it('an asynchronous disposer is awaited before the later onResponse hooks run', async () => {
    const { app, events } = await disposalApp((list) => ({
      [Symbol.asyncDispose]: async () => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        list.push('disposed');
      },
    }));
    expect((await app.inject('/')).statusCode).toBe(200);
    await vi.waitFor(() => expect(events).toContain('a later onResponse hook'));
    expect(events).toEqual([MICROTASK, 'disposed', 'onScopeDisposed', 'a later onResponse hook']);
  });
});
