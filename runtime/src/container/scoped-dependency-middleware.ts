import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { container as defaultContainer, type Container } from './container.js';
import { ContainerError } from './container-errors.js';
import type { Scope } from './scope.js';
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
 * An aborted request's handler usually finishes and Fastify then runs `onSend`, which disposes the
 * scope. An async handler that returns nothing gives Fastify nothing to send, so no hook tells us it
 * finished: this bound keeps such scopes from never being disposed.
 */
export const DEFAULT_ABORT_GRACE_MS = 10_000;

interface RequestScopeState {
  readonly scope: Scope;
  /** `onSend` ran: the handler (or error handler) has produced the reply. */
  replied: boolean;
  /** `onRequestAbort` ran: the client is gone and `onResponse` will not come. */
  aborted: boolean;
  timer: NodeJS.Timeout | undefined;
  disposal: Promise<void> | undefined;
}

const plugin: FastifyPluginCallback<ScopedDependencyOptions> = (app, options, done) => {
  const problem = checkOptions(options);
  if (problem) return done(new ContainerError(`ScopedDependencyMiddleware: ${problem}`));
  if (app.hasRequestDecorator('diScope')) {
    return done(new ContainerError('ScopedDependencyMiddleware is already registered on this app; register it once.'));
  }
  const target = options.container ?? defaultContainer;
  const graceMs = options.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
  const states = new WeakMap<FastifyRequest, RequestScopeState>();

  // Placeholder so every request object has the same shape; the real scope is set in onRequest.
  app.decorateRequest('diScope', null as unknown as Scope);

  /** Disposes the request's scope exactly once, whichever of the hooks below gets there first. */
  const finish = (request: FastifyRequest, state: RequestScopeState): Promise<void> => {
    if (state.disposal) return state.disposal;
    clearTimeout(state.timer);
    state.disposal = state.scope.dispose().then(() => {
      try {
        options.onScopeDisposed?.(state.scope, request);
      } catch (err) {
        request.log.error({ err }, 'onScopeDisposed callback failed');
      }
    });
    return state.disposal;
  };

  // Callback style on purpose: `next` runs inside `als.run`, so every later hook, the body parser
  // and the handler inherit the scope. (`enterWith` would leak it into the next keep-alive request.)
  app.addHook('onRequest', (request, _reply, next) => {
    const scope = target.createScope({ logger: request.log });
    states.set(request, { scope, replied: false, aborted: false, timer: undefined, disposal: undefined });
    request.diScope = scope;
    try {
      options.onScopeCreated?.(scope, request);
    } catch (err) {
      return next(err instanceof Error ? err : new Error(String(err)));
    }
    scope.run(() => next());
  });

  app.addHook('onSend', (request, _reply, payload, next) => {
    const state = states.get(request);
    if (state) {
      state.replied = true;
      // The client left while the handler ran; no onResponse will come, and the handler is done now.
      if (state.aborted) void finish(request, state);
    }
    next(null, payload);
  });

  // The normal end, including handlers that threw (the error reply also ends here).
  app.addHook('onResponse', (request, _reply, next) => {
    const state = states.get(request);
    if (!state) return next();
    finish(request, state).then(() => next(), next);
  });

  // The client closed the connection before the response ended: Fastify will not run onResponse.
  // Wait for the handler (its onSend) so it never works with disposed services, within graceMs.
  app.addHook('onRequestAbort', (request, next) => {
    const state = states.get(request);
    if (state && !state.disposal) {
      state.aborted = true;
      if (state.replied) void finish(request, state);
      else {
        state.timer = setTimeout(() => {
          request.log.warn({ scope: state.scope.id, graceMs }, 'request aborted and its handler has not replied; disposing its scope');
          void finish(request, state);
        }, graceMs);
        state.timer.unref();
      }
    }
    next();
  });

  done();
};

function checkOptions(options: ScopedDependencyOptions): string | undefined {
  const { container, onScopeCreated, onScopeDisposed, abortGraceMs } = options;
  if (container !== undefined && typeof (container as Partial<Container>).createScope !== 'function') {
    return `options.container must be a Container; received ${describeValue(container)}.`;
  }
  for (const [key, value] of [['onScopeCreated', onScopeCreated], ['onScopeDisposed', onScopeDisposed]] as const) {
    if (value !== undefined && typeof value !== 'function') return `options.${key} must be a function; received ${describeValue(value)}.`;
  }
  if (abortGraceMs !== undefined && !(typeof abortGraceMs === 'number' && Number.isFinite(abortGraceMs) && abortGraceMs >= 0)) {
    return `options.abortGraceMs must be a number of milliseconds ≥ 0; received ${describeValue(abortGraceMs)}.`;
  }
  return undefined;
}

/**
 * Opens a DI scope per request (exposed as `request.diScope` and active for `Inject`), and disposes
 * it exactly once when the request is over: after the response (also when the handler threw), or,
 * for a request the client aborted, once its handler has finished (at most `abortGraceMs` later).
 * Wrapped with fastify-plugin, so it covers every route of the app, plain Fastify routes included.
 * Register it before any hook that needs scoped services.
 */
export const ScopedDependencyMiddleware = fastifyPlugin(plugin, { name: '@core/scoped-dependency', fastify: '5.x' });
