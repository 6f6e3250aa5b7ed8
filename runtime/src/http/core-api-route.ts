import type {
  FastifyReply,
  FastifyRequest,
  RouteOptions,
  preHandlerHookHandler,
  preSerializationHookHandler,
} from 'fastify';
import { assertPermission } from '../auth/plugin.js';
import { getContext, type CoreContext } from '../context/context.js';
import { CoreJSONResponse } from './core-json-response.js';
import { appExceptionHandler } from './error-handler.js';
import { varyOnCredentials, varyOnCredentialsIfJson } from './vary.js';

/** What `?schema=true` answers for one route: the JSON Schema and the restriction entries that shaped it. */
export type SchemaSource = (ctx: CoreContext) => { schema: unknown; restrictedFields: readonly string[] };

/** Per-route metadata Core reads, under `config.core`. */
export interface CoreRouteConfig {
  /** The permission action guarding the route, or null for an unguarded Core route. */
  action: string | null;
  /** True when `?schema=true` answers the route's schema. */
  exposeSchema: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    core?: CoreRouteConfig;
  }
}

export type CoreRouteHandler = (request: FastifyRequest, reply: FastifyReply) => unknown;

export interface CoreRouteOptions extends Omit<RouteOptions, 'handler'> {
  /** Permission action (`tasks:view`) checked before anything else; omit for an unguarded route. */
  action?: string;
  /** Answer `?schema=true` from this source without running the handler. */
  exposeSchema?: SchemaSource;
  /** Returns a `CoreJSONResponse` (sent as the envelope), or anything Fastify can send. */
  handler: CoreRouteHandler;
}

/**
 * Route options with Core's behaviour: the permission guard, schema
 * introspection, the envelope with Core's JSON encoding, and `Vary: Authorization, Cookie` on JSON
 * responses whenever the caller's restricted set is non-empty (the body depends on who asks, so shared
 * caches must key on the credentials). Routes registered without it are untouched.
 *
 * ```ts
 * app.route(CoreAPIRoute({ method: 'GET', url: '/tasks/stats', action: 'tasks:view', handler: async () => new CoreJSONResponse(stats) }));
 * ```
 *
 * Where `Vary` is decided, without an `onSend` hook (a route with no `onSend` hook skips Fastify's
 * onSend stage altogether):
 * - a `CoreJSONResponse` (the handler's result, or `?schema=true`): in `sendCore`, which knows it sends JSON;
 * - an object Fastify serializes as JSON (the error envelope of `appExceptionHandler` or a route's own
 *   error handler, a plain object returned by the handler): in a `preSerialization` hook, which Fastify
 *   runs for object payloads only, so the `CoreJSONResponse` path never enters it;
 * - anything else the handler returns (text, a buffer, a stream): by the content type it set.
 * A handler that calls `reply.send(text)` itself with a JSON content type should call
 * `varyOnCredentials(reply)`: Core does not see that send.
 */
export function CoreAPIRoute(options: CoreRouteOptions): RouteOptions {
  const { action, exposeSchema, handler, preHandler, preSerialization, config, ...rest } = options;
  const core: CoreRouteConfig = { action: action ?? null, exposeSchema: exposeSchema !== undefined };

  // Callback style: no promise per request. Sending the schema ends the request here (no `done`).
  const guard: preHandlerHookHandler = function corePreHandler(request, reply, done) {
    try {
      if (action) assertPermission(request, action);
      if (exposeSchema && (request.query as Record<string, unknown> | undefined)?.schema === 'true') {
        // Introspection never runs the handler, so a POST/PUT/PATCH with ?schema=true writes nothing.
        const { schema, restrictedFields } = exposeSchema(getContext());
        sendCore(
          reply,
          new CoreJSONResponse(schema, {
            message: 'Schema generated successfully',
            meta: { restricted_fields: restrictedFields },
          }),
        );
        return;
      }
    } catch (error) {
      done(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    done();
  };

  const vary: preSerializationHookHandler<unknown> = function coreVary(_request, reply, payload, done) {
    varyOnCredentialsIfJson(reply);
    done(null, payload);
  };

  return {
    // Route-level, so a Core route answers with the contract's envelope even when the app sets its
    // error handler after the route's plugin was registered (Fastify copies handlers per context).
    errorHandler: appExceptionHandler,
    ...rest,
    config: { ...(config as object), core },
    // An unguarded route without introspection has nothing to check: no preHandler stage of its own.
    preHandler: action || exposeSchema ? [guard, ...toArray(preHandler)] : toArray(preHandler),
    preSerialization: [vary, ...toArray(preSerialization)],
    // A synchronous result is answered at once: no promise (with AsyncLocalStorage every promise also
    // runs Node's async hooks).
    handler: function coreHandler(request, reply) {
      const result = handler(request, reply);
      if (isThenable(result)) return result.then((value: unknown) => answer(reply, value));
      // Fastify's meaning of undefined from an async handler: an empty reply unless one was sent.
      if (result === undefined) return Promise.resolve();
      return answer(reply, result);
    },
  } as RouteOptions;
}

/** What the route gives Fastify for a handler's `result`: a `CoreJSONResponse` is sent here (undefined). */
function answer(reply: FastifyReply, result: unknown): unknown {
  if (result instanceof CoreJSONResponse) {
    sendCore(reply, result);
    return undefined;
  }
  // Text, buffers or streams the handler typed as JSON itself (objects also pass `vary` above).
  if (result !== undefined && !reply.sent) varyOnCredentialsIfJson(reply);
  return result;
}

/**
 * Sends a `CoreJSONResponse`: status, headers, `Vary: Authorization, Cookie` for a restricted caller,
 * and the rendered envelope as the payload.
 */
export function sendCore(reply: FastifyReply, response: CoreJSONResponse): FastifyReply {
  reply.code(response.status).type('application/json; charset=utf-8');
  const { headers } = response.options;
  // `for…in`, not `Object.entries`: no array of pairs per response.
  if (headers !== undefined) for (const name in headers) reply.header(name, headers[name]);
  varyOnCredentials(reply);
  return reply.send(response.render());
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null | undefined)?.then === 'function';
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}
