import net from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  Container,
  Inject,
  ScopedDependencyMiddleware,
  currentScope,
  type Scope,
  type ScopedDependencyOptions,
} from '@core/runtime';

/** Fresh service classes per app, so counters never leak between tests. */
function services() {
  let made = 0;
  class RequestState {
    readonly id = ++made;
    owner: string | undefined;
    disposeCalls = 0;
    dispose() {
      this.disposeCalls++;
    }
  }
  class TaskService {
    constructor(readonly state = Inject(RequestState)) {}
  }
  return { RequestState, TaskService };
}

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** An app with the middleware, counting scopes through the options' callbacks. */
async function harness(
  options: Omit<ScopedDependencyOptions, 'container' | 'onScopeCreated' | 'onScopeDisposed'> = {},
) {
  const { RequestState, TaskService } = services();
  const container = new Container().scoped(RequestState).scoped(TaskService);
  const created: Scope[] = [];
  const disposed: Scope[] = [];
  const app = Fastify();
  apps.push(app);
  await app.register(ScopedDependencyMiddleware, {
    ...options,
    container,
    onScopeCreated: (scope, request) => {
      expect(request.diScope).toBe(scope);
      created.push(scope);
    },
    onScopeDisposed: (scope) => void disposed.push(scope),
  });
  const states = new Set<InstanceType<typeof RequestState>>();
  const remember = <T extends InstanceType<typeof RequestState>>(state: T): T => {
    states.add(state);
    return state;
  };
  return { app, container, created, disposed, states, remember, RequestState, TaskService };
}

describe('ScopedDependencyMiddleware over fastify.inject', () => {
  it('gives each request its own scope; handler defaults, constructor defaults and request.diScope agree', async () => {
    const h = await harness();
    h.app.get('/whoami', async (request, _reply, service = Inject(h.TaskService)) => ({
      scope: request.diScope.id,
      state: h.remember(service.state).id,
      sameInHandler: Inject(h.RequestState) === service.state,
      sameViaDiScope: request.diScope.resolve(h.RequestState) === service.state,
      active: currentScope() === request.diScope,
    }));
    const first = (await h.app.inject('/whoami')).json();
    const second = (await h.app.inject('/whoami')).json();
    for (const body of [first, second]) {
      expect(body).toMatchObject({ sameInHandler: true, sameViaDiScope: true, active: true });
    }
    expect(second.state).not.toBe(first.state);
    expect(second.scope).not.toBe(first.scope);
    await vi.waitFor(() => expect(h.disposed).toHaveLength(2));
    expect(h.disposed.map((s) => s.id)).toEqual(h.created.map((s) => s.id));
    expect([...h.states].map((s) => s.disposeCalls)).toEqual([1, 1]);
  });

  it('disposes the scope once when the handler throws', async () => {
    const h = await harness();
    h.app.get('/fails', async (_request, _reply, state = Inject(h.RequestState)) => {
      h.remember(state);
      throw new Error('handler failed');
    });
    const res = await h.app.inject('/fails');
    expect(res.statusCode).toBe(500);
    await vi.waitFor(() => expect(h.disposed).toHaveLength(1));
    expect([...h.states].map((s) => s.disposeCalls)).toEqual([1]);
    expect(h.created).toHaveLength(1);
  });

  it('reaches plain routes inside encapsulated plugins, hooks before the handler, and handlers after body parsing', async () => {
    const h = await harness();
    const seenInHook = new WeakMap<object, unknown>();
    await h.app.register(async (child) => {
      child.addHook('preHandler', async (request) => {
        seenInHook.set(request, Inject(h.RequestState));
      });
      child.post('/plain/echo', async (request, _reply, state = Inject(h.RequestState)) => ({
        body: request.body,
        sameAsHook: seenInHook.get(request) === state,
        scope: currentScope()?.id ?? null,
      }));
    });
    const res = await h.app.inject({ method: 'POST', url: '/plain/echo', payload: { title: 'x' } });
    expect(res.json()).toEqual({ body: { title: 'x' }, sameAsHook: true, scope: h.created[0].id });
  });

  it('500 concurrent requests: one instance each, created == disposed, none sees another’s', async () => {
    const h = await harness();
    h.app.get('/concurrent', async (request, _reply, service = Inject(h.TaskService)) => {
      const state = h.remember(service.state);
      state.owner ??= request.id;
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4)));
      const later = Inject(h.RequestState);
      return { state: state.id, consistent: later === state && state.owner === request.id };
    });
    const responses = await Promise.all(Array.from({ length: 500 }, () => h.app.inject('/concurrent')));
    const bodies = responses.map((res) => res.json<{ state: number; consistent: boolean }>());
    expect(bodies.every((body) => body.consistent)).toBe(true);
    expect(new Set(bodies.map((body) => body.state)).size).toBe(500);
    expect(h.created).toHaveLength(500);
    await vi.waitFor(() => expect(h.disposed).toHaveLength(500));
    expect(new Set(h.disposed).size).toBe(500);
    expect([...h.states].every((state) => state.disposeCalls === 1)).toBe(true);
  });

  const badOptions: Array<[string, object, RegExp]> = [
    ['container', { container: {} }, /options\.container must be a Container; received an object/],
    ['callback', { onScopeCreated: 'log' }, /options\.onScopeCreated must be a function; received the string "log"/],
    ['grace', { abortGraceMs: -1 }, /options\.abortGraceMs must be a number of milliseconds ≥ 0; received number -1/],
  ];
  it.each(badOptions)('rejects a wrong %s option when the app loads', async (_, options, message) => {
    const app = Fastify();
    apps.push(app);
    await expect(app.register(ScopedDependencyMiddleware, options as ScopedDependencyOptions).ready()).rejects.toThrow(
      message,
    );
  });

  it('refuses to be registered twice', async () => {
    const app = Fastify();
    apps.push(app);
    await app.register(ScopedDependencyMiddleware, { container: new Container() });
    await expect(app.register(ScopedDependencyMiddleware, { container: new Container() }).ready()).rejects.toThrow(
      /already registered on this app/,
    );
  });
});

describe('ScopedDependencyMiddleware over real sockets', () => {
  async function listen(app: FastifyInstance): Promise<number> {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
    return address.port;
  }

  function deferred() {
    let resolve!: () => void;
    const promise = new Promise<void>((done) => (resolve = done));
    return { promise, resolve };
  }

  /** Sends a GET on a raw socket, waits until the handler runs, then closes the socket. */
  async function abortWhileHandling(port: number, path: string, handlerEntered: Promise<void>): Promise<void> {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\n\r\n`));
    socket.on('error', () => {});
    await handlerEntered;
    socket.destroy();
  }

  it('an aborted request is disposed once its handler has finished, never while it still runs', async () => {
    const h = await harness();
    const entered = deferred();
    const release = deferred();
    const aborted = deferred();
    const disposeCallsSeenByHandler: number[] = [];
    h.app.addHook('onRequestAbort', (_request, done) => {
      aborted.resolve();
      done();
    });
    h.app.get('/slow', async (_request, _reply, state = Inject(h.RequestState)) => {
      h.remember(state);
      entered.resolve();
      await release.promise;
      disposeCallsSeenByHandler.push(state.disposeCalls);
      return { ok: true };
    });
    const port = await listen(h.app);

    await abortWhileHandling(port, '/slow', entered.promise);
    await aborted.promise;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.disposed).toHaveLength(0); // the handler is still running

    release.resolve();
    await vi.waitFor(() => expect(h.disposed).toHaveLength(1));
    expect(disposeCallsSeenByHandler).toEqual([0]);
    expect([...h.states].map((s) => s.disposeCalls)).toEqual([1]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.disposed).toHaveLength(1); // never twice
  });

  it('an aborted request whose handler then throws is disposed once the error reply is made, not after the grace time', async () => {
    const h = await harness({ abortGraceMs: 60_000 });
    const entered = deferred();
    const release = deferred();
    const aborted = deferred();
    h.app.addHook('onRequestAbort', (_request, done) => {
      aborted.resolve();
      done();
    });
    h.app.get('/throws', async (_request, _reply, state = Inject(h.RequestState)) => {
      h.remember(state);
      entered.resolve();
      await release.promise;
      throw new Error('failed after the client left');
    });
    const port = await listen(h.app);

    await abortWhileHandling(port, '/throws', entered.promise);
    await aborted.promise;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h.disposed).toHaveLength(0);
    release.resolve();
    await vi.waitFor(() => expect(h.disposed).toHaveLength(1));
    expect([...h.states].map((s) => s.disposeCalls)).toEqual([1]);
  });

  it('an aborted request whose handler returns nothing is disposed after abortGraceMs', async () => {
    const graceMs = 150;
    const h = await harness({ abortGraceMs: graceMs });
    const entered = deferred();
    const aborted = deferred();
    h.app.addHook('onRequestAbort', (_request, done) => {
      aborted.resolve();
      done();
    });
    h.app.get('/silent', async (_request, _reply, state = Inject(h.RequestState)) => {
      h.remember(state);
      entered.resolve();
      await aborted.promise; // returning undefined after the abort: Fastify sends nothing, runs no onSend
    });
    const port = await listen(h.app);

    await abortWhileHandling(port, '/silent', entered.promise);
    await aborted.promise;
    const abortedAt = Date.now();
    await vi.waitFor(() => expect(h.disposed).toHaveLength(1));
    expect(Date.now() - abortedAt).toBeGreaterThanOrEqual(graceMs - 20);
    expect([...h.states].map((s) => s.disposeCalls)).toEqual([1]);
  });

  it('keep-alive requests on one connection each get a new scope, and none leaks out', async () => {
    const h = await harness();
    h.app.get('/id', async (request) => ({ scope: request.diScope.id, state: Inject(h.RequestState).id }));
    const port = await listen(h.app);
    const ids: Array<{ scope: number; state: number }> = [];
    for (let i = 0; i < 5; i++)
      ids.push((await (await fetch(`http://127.0.0.1:${port}/id`)).json()) as { scope: number; state: number });
    expect(new Set(ids.map((id) => id.scope)).size).toBe(5);
    expect(new Set(ids.map((id) => id.state)).size).toBe(5);
    await vi.waitFor(() => expect(h.disposed).toHaveLength(5));
    expect(currentScope()).toBeUndefined();
  });
});
