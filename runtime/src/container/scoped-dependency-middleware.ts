import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { continueIn, decorateRequestStore, requestStoreFor } from './request-store.js';
import { container as defaultContainer, type Container } from './container.js';
import { ContainerError } from './container-errors.js';
import { ScopeImpl, type Scope } from './scope.js';
import { describeValue } from './token.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's DI scope, opened by `ScopedDependencyMiddleware` in its `onRequest` hook. */
    diScope: Scope;
  }
}

export interface ScopedDependencyOptions {
  /** The container scopes are created from; defaults to the exported `container`. */
  container?: Container;
  /** Called right after a request's scope is created (metrics, tests). */
  onScopeCreated?: (scope: Scope, request: FastifyRequest) => void;
  /** Called once a request's scope has been disposed (metrics, tests). */
  onScopeDisposed?: (scope: Scope, request: FastifyRequest) => void;
  /**
   * After the client aborts, how long to wait for the handler to finish before disposing anyway.
   * Default `DEFAULT_ABORT_GRACE_MS`.
   */
  abortGraceMs?: number;
}

/**
 * An aborted request's handler usually finishes and sends its reply, which disposes the scope. An
 * async handler that returns nothing gives Fastify nothing to send, so nothing tells us it finished:
 * this bound keeps such scopes from never being disposed.
 */
export const DEFAULT_ABORT_GRACE_MS = 10_000;

/**
 * Per-request state, kept on the request itself (a decorated field, so every request has the same
 * shape and nothing is looked up in a side table): the reply whose end disposes the scope, or null
 * once the scope has been handed to disposal — which makes disposal happen exactly once.
 */
const kPendingReply = Symbol('core.diScope.pendingReply');

type ScopedRequest = FastifyRequest & { [kPendingReply]: FastifyReply | null };

const plugin: FastifyPluginCallback<ScopedDependencyOptions> = (app, options, done) => {
  const problem = checkOptions(options);
  if (problem) return done(new ContainerError(`ScopedDependencyMiddleware: ${problem}`));
  if (app.hasRequestDecorator('diScope')) {
    return done(new ContainerError('ScopedDependencyMiddleware is already registered on this app; register it once.'));
  }
  const target = options.container ?? defaultContainer;
  const graceMs = options.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
  const { onScopeCreated, onScopeDisposed } = options;

  // Placeholders so every request object has the same shape; the real values are set in onRequest.
  app.decorateRequest('diScope', null as unknown as Scope);
  app.decorateRequest(kPendingReply, null);
  decorateRequestStore(app);

  const disposed = (request: FastifyRequest, scope: Scope): void => {
    try {
      onScopeDisposed?.(scope, request);
    } catch (err) {
      request.log.error({ err }, 'onScopeDisposed callback failed');
    }
  };

  /**
   * Disposes the request's scope exactly once, whichever path gets there first. Synchronous (no
   * promise) when the scope created nothing with an asynchronous disposer, which is the usual case.
   */
  const finish = (request: ScopedRequest): Promise<void> | undefined => {
    if (request[kPendingReply] === null) return undefined;
    request[kPendingReply] = null;
    const scope = request.diScope;
    const pending = scope instanceof ScopeImpl ? scope.disposeNow() : scope.dispose();
    if (pending === undefined) {
      disposed(request, scope);
      return undefined;
    }
    return pending.then(() => disposed(request, scope));
  };

  // Callback style on purpose: `next` runs inside `als.run`, so every later hook, the body parser
  // and the handler inherit the scope. (`enterWith` would leak it into the next keep-alive request.)
  // The scope shares one AsyncLocalStorage store with the caller's context (see request-store.ts):
  // whichever of this hook and the context plugin's runs first opens it, the other joins it.
  app.addHook('onRequest', (request, reply, next) => {
    const scope = target.createScope({ logger: request.log });
    request.diScope = scope;
    (request as ScopedRequest)[kPendingReply] = reply;
    try {
      onScopeCreated?.(scope, request);
    } catch (err) {
      return next(err instanceof Error ? err : new Error(String(err)));
    }
    if (scope instanceof ScopeImpl) {
      const store = requestStoreFor(request);
      store.scope = scope;
      continueIn(store, next);
    } else {
      // A container whose createScope returns its own Scope implementation: let it enter itself.
      scope.run(() => next());
    }
  });

  // The normal end, including handlers that threw (the error reply also ends here).
  app.addHook('onResponse', (request, _reply, next) => {
    const pending = finish(request as ScopedRequest);
    if (pending === undefined) next();
    else void pending.then(() => next());
  });

  // The client closed the connection before the response ended: Fastify will not run onResponse.
  // Wait for the handler to reply, so it never works with disposed services, within graceMs.
  app.addHook('onRequestAbort', (request, next) => {
    const reply = (request as ScopedRequest)[kPendingReply];
    if (reply !== null) {
      if (reply.sent || reply.raw.headersSent) void finish(request as ScopedRequest);
      else disposeWhenReplied(request as ScopedRequest, reply);
    }
    next();
  });

  /**
   * The handler of an aborted request is still running. Its reply (Fastify sends a handler's result,
   * or its error, through `reply.send`) says it is done; that one reply's `send` is wrapped for this,
   * so the normal path needs no `onSend` hook. A handler that never replies is covered by the timer.
   */
  const disposeWhenReplied = (request: ScopedRequest, reply: FastifyReply): void => {
    const timer = setTimeout(() => {
      request.log.warn(
        { scope: request.diScope.id, graceMs },
        'request aborted and its handler has not replied; disposing its scope',
      );
      void finish(request);
    }, graceMs);
    timer.unref();
    const send = reply.send;
    reply.send = function sendAfterAbort(this: FastifyReply, ...args: Parameters<FastifyReply['send']>) {
      clearTimeout(timer);
      try {
        return send.apply(this, args);
      } finally {
        void finish(request);
      }
    } as FastifyReply['send'];
  };

  done();
};

function checkOptions(options: ScopedDependencyOptions): string | undefined {
  const { container, onScopeCreated, onScopeDisposed, abortGraceMs } = options;
  if (container !== undefined && typeof (container as Partial<Container>).createScope !== 'function') {
    return `options.container must be a Container; received ${describeValue(container)}.`;
  }
  for (const [key, value] of [
    ['onScopeCreated', onScopeCreated],
    ['onScopeDisposed', onScopeDisposed],
  ] as const) {
    if (value !== undefined && typeof value !== 'function')
      return `options.${key} must be a function; received ${describeValue(value)}.`;
  }
  if (
    abortGraceMs !== undefined &&
    !(typeof abortGraceMs === 'number' && Number.isFinite(abortGraceMs) && abortGraceMs >= 0)
  ) {
    return `options.abortGraceMs must be a number of milliseconds ≥ 0; received ${describeValue(abortGraceMs)}.`;
  }
  return undefined;
}

/**
 * Opens a DI scope per request (exposed as `request.diScope` and active for `Inject`), and disposes
 * it exactly once when the request is over: after the response (also when the handler threw), or,
 * for a request the client aborted, once its handler has finished (at most `abortGraceMs` later).
 * A scope that created nothing with an asynchronous disposer is disposed synchronously in `onResponse`.
 * Wrapped with fastify-plugin, so it covers every route of the app, plain Fastify routes included.
 * Register it before any hook that needs scoped services.
 */
export const ScopedDependencyMiddleware = fastifyPlugin(plugin, { name: '@core/scoped-dependency', fastify: '5.x' });
