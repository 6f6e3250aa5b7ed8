import type { FastifyPluginCallback, FastifyRequest } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { container, type Container } from '../container/container.js';
import { createToken, type InjectionToken } from '../container/token.js';
import { hasPermission, type CoreContext } from '../context/context.js';
import { continueIn, decorateRequestStore, requestStoreFor } from '../container/request-store.js';
import { ForbiddenError, UnauthenticatedError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import { loadAuthSettings, type AuthSettings } from '../settings/settings.js';
import { extractCredential } from './credentials.js';
import type { PolicyDocument, PolicySet } from './policies.js';
import { type ContextResolver, JwtContextResolver } from './resolver.js';

/** What the context plugin found out about the caller of one request. */
export interface CoreAuthState {
  /** The context the request runs with (the anonymous one when there is no valid credential). */
  readonly context: CoreContext;
  /** True when a valid credential was presented. */
  readonly authenticated: boolean;
  /** Set when a credential was presented but rejected (invalid, expired, malformed). */
  readonly error?: UnauthenticatedError;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `coreContextPlugin` for every request; null only when the plugin is not registered. */
    coreAuth: CoreAuthState | null;
  }
}

export interface CoreContextPluginOptions {
  /**
   * A custom resolver (sessions, OIDC…). Without it, one registered in the DI container under
   * `CONTEXT_RESOLVER` is used (`container.singleton(CONTEXT_RESOLVER, { useClass: MyResolver })`), and
   * without that a `JwtContextResolver` is built from `secret` and `policies`.
   */
  resolver?: ContextResolver;
  /** Where to look for a registered resolver; the default container. */
  container?: Container;
  /** `SECRET_KEY`, for the default JWT resolver. */
  secret?: string;
  /** Policies (object, `PolicySet` or path of `policies.json`), for the default JWT resolver. */
  policies?: PolicySet | PolicyDocument | string | URL;
  /** Verified-token cache size of the default resolver (0 = off). */
  tokenCacheSize?: number;
  /**
   * Tokens from an identity provider, for the default JWT resolver. Default: the `AUTH_*` settings
   * read from the environment and `.env` (`loadAuthSettings()`), so an app that passes only
   * `{ secret, policies }` accepts its provider's tokens once `AUTH_JWKS_URL` is set.
   */
  auth?: AuthSettings;
}

/** The container token under which an app may register its own `ContextResolver`. */
export const CONTEXT_RESOLVER: InjectionToken<ContextResolver> = createToken<ContextResolver>('ContextResolver');

/**
 * Resolves the caller once per request and runs the rest of the request inside that context
 * (`getContext()` works in every later hook, the handler and anything it awaits).
 *
 * Why a callback-style `onRequest` hook that continues with `done` inside AsyncLocalStorage's `run`:
 * the whole remaining hook chain is started from inside `done`, so `run` scopes it exactly.
 * `enterWith` would leak a request's context into the next request on a keep-alive socket. The
 * context shares one store with the DI scope (see `context/request-store.ts`): when
 * `ScopedDependencyMiddleware`'s hook ran first and opened the request's store, this hook only sets
 * the context in it, so a request costs one `run`, and one store on every promise it creates.
 *
 * The plugin never fails a request on its own: a bad credential makes the request anonymous and is
 * recorded in `request.coreAuth.error`; guarded routes call `assertPermission`, which turns it into a 401.
 */
const coreContext: FastifyPluginCallback<CoreContextPluginOptions> = (app, options, done) => {
  let resolver: ContextResolver;
  try {
    const registry = options.container ?? container;
    if (options.resolver !== undefined) resolver = options.resolver;
    else if (registry.has(CONTEXT_RESOLVER)) resolver = registry.resolve(CONTEXT_RESOLVER);
    else {
      const own = defaultResolver(options, app.log);
      // Built here, so stopped here: its background refresh of the provider's keys ends with the app.
      app.addHook('onClose', (_instance, closed) => {
        own.close();
        closed();
      });
      resolver = own;
    }
  } catch (error) {
    done(error as Error);
    return;
  }

  app.decorateRequest('coreAuth', null);
  decorateRequestStore(app);

  app.addHook('onRequest', function resolveCoreContext(request, _reply, next) {
    let outcome: CoreContext | null | Promise<CoreContext | null>;
    try {
      outcome = resolver.resolve(request);
    } catch (error) {
      rejected(resolver, request, error, next);
      return;
    }
    if (outcome instanceof Promise) {
      outcome.then(
        (context) => accepted(resolver, request, context, next),
        (error: unknown) => rejected(resolver, request, error, next),
      );
    } else {
      accepted(resolver, request, outcome, next);
    }
  });

  done();
};

export const coreContextPlugin = fastifyPlugin(coreContext, { name: 'core-context', fastify: '5.x' });

type Next = (error?: Error) => void;

function accepted(resolver: ContextResolver, request: FastifyRequest, context: CoreContext | null, next: Next): void {
  if (context === null) {
    const anonymous = resolver.anonymousContext();
    request.coreAuth = { context: anonymous, authenticated: false };
    enter(request, anonymous, next);
  } else {
    request.coreAuth = { context, authenticated: true };
    enter(request, context, next);
  }
}

function rejected(resolver: ContextResolver, request: FastifyRequest, error: unknown, next: Next): void {
  const anonymous = resolver.anonymousContext();
  if (error instanceof UnauthenticatedError) {
    request.coreAuth = { context: anonymous, authenticated: false, error: withCredentialPath(error, request) };
    request.log.debug({ reason: error.details[0]?.reason }, 'credential rejected; continuing as anonymous');
    enter(request, anonymous, next);
  } else {
    // A resolver crash or outage is not the caller's fault: fail the request (even where anonymous
    // callers are allowed: the caller sent a credential and would silently lose its rights), but still
    // inside a context so error-path hooks never fall back to the unrestricted SYSTEM_CONTEXT.
    request.coreAuth = { context: anonymous, authenticated: false };
    enter(request, anonymous, next, error instanceof Error ? error : new Error(String(error)));
  }
}

/** Sets the request's context and continues the hook chain inside the request's store. */
function enter(request: FastifyRequest, context: CoreContext, next: Next, error?: Error): void {
  const store = requestStoreFor(request);
  store.context = context;
  continueIn(store, next, error);
}

function defaultResolver(options: CoreContextPluginOptions, logger: Logger): JwtContextResolver {
  if (options.secret === undefined || options.policies === undefined) {
    throw new TypeError(
      'coreContextPlugin needs either { resolver } or both { secret, policies } ' +
        '(e.g. app.register(coreContextPlugin, { secret: settings.secretKey, policies: "src/policies.json" })).',
    );
  }
  return new JwtContextResolver({
    secret: options.secret,
    policies: options.policies,
    auth: options.auth ?? loadAuthSettings(),
    logger,
    ...(options.tokenCacheSize === undefined ? {} : { cacheSize: options.tokenCacheSize }),
  });
}

/**
 * The route guard (call it from a preHandler). In order:
 * - a credential was sent but rejected → `UnauthenticatedError` (401), even if anonymous callers could
 *   do the action: the client should learn that its token is bad;
 * - the context has the permission → returns;
 * - no credential (anonymous lacks it) → `UnauthenticatedError` (401);
 * - authenticated but lacking it → `ForbiddenError` (403).
 */
export function assertPermission(request: FastifyRequest, action: string): void {
  const auth = request.coreAuth;
  if (auth === null || auth === undefined) {
    throw new Error(
      `assertPermission(${JSON.stringify(action)}) found no caller context: register coreContextPlugin on the app before the routes that it guards.`,
    );
  }
  if (auth.error !== undefined) throw auth.error;
  if (hasPermission(auth.context, action)) return;
  if (!auth.authenticated) {
    const message = `Authentication is required to perform ${JSON.stringify(action)}.`;
    throw new UnauthenticatedError(message, [
      { path: credentialPath(request), message, reason: 'credentials_required' },
    ]);
  }
  const message = `Your roles do not grant ${JSON.stringify(action)}.`;
  throw new ForbiddenError(message, [{ path: credentialPath(request), message, reason: 'permission_denied' }]);
}

/** Where the caller's credential is (or would go): the detail path of a 401 or 403. */
function credentialPath(request: FastifyRequest): string {
  return extractCredential(request.headers).source === 'cookie' ? 'headers.cookie' : 'headers.authorization';
}

/**
 * A resolver's 401 with the credential's place as the path of each detail that has none. A copy: a
 * resolver may hand the same error to requests that sent their token in different places.
 */
function withCredentialPath(error: UnauthenticatedError, request: FastifyRequest): UnauthenticatedError {
  if (error.details.length > 0 && error.details.every((detail) => detail.path !== undefined)) return error;
  const path = credentialPath(request);
  const details =
    error.details.length > 0
      ? error.details.map((detail) => ({ ...detail, path: detail.path ?? path }))
      : [{ path, message: error.message }];
  return new UnauthenticatedError(error.message, details);
}
