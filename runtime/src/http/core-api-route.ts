import type { FastifyReply, FastifyRequest, RouteOptions, onSendHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { assertPermission } from '../auth/index.js';
import { getContext, type CoreContext } from '../context/context.js';
import { CoreJSONResponse } from './core-json-response.js';
import { appExceptionHandler } from './error-handler.js';
import { appendVary } from './vary.js';

/** What `?schema=true` answers for one route: the JSON Schema and the restriction entries that shaped it. */
export type SchemaSource = (ctx: CoreContext) => { schema: unknown; restrictedFields: readonly string[] };

/** Per-route metadata Core reads, under `config.core`. */
export interface CoreRouteConfig {
  /** The permission action guarding the route, or null for an unguarded Core route. */
  action: string | null;
  /** True when `?schema=true` answers the route's schema (the seed's `expose_schema`). */
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

const VARY_ON_CREDENTIALS = ['Authorization', 'Cookie'];

/**
 * Route options with Core's behaviour (the seed's `CoreAPIRoute`): the permission guard, schema
 * introspection, the envelope with Core's JSON encoding, and `Vary: Authorization, Cookie` on JSON
 * responses whenever the caller's restricted set is non-empty (the body depends on who asks, so shared
 * caches must key on the credentials). Routes registered without it are untouched.
 *
 * ```ts
 * app.route(CoreAPIRoute({ method: 'GET', url: '/tasks/stats', action: 'tasks:view', handler: async () => new CoreJSONResponse(stats) }));
 * ```
 */
export function CoreAPIRoute(options: CoreRouteOptions): RouteOptions {
  const { action, exposeSchema, handler, preHandler, onSend, config, ...rest } = options;
  const core: CoreRouteConfig = { action: action ?? null, exposeSchema: exposeSchema !== undefined };

  const guard: preHandlerAsyncHookHandler = async function corePreHandler(request, reply) {
    if (action) assertPermission(request, action);
    if (exposeSchema && (request.query as Record<string, unknown> | undefined)?.schema === 'true') {
      // Introspection never runs the handler, so a POST/PUT/PATCH with ?schema=true writes nothing.
      const { schema, restrictedFields } = exposeSchema(getContext());
      return sendCore(reply, new CoreJSONResponse(schema, { message: 'Schema generated successfully', meta: { restricted_fields: restrictedFields } }));
    }
  };

  const vary: onSendHookHandler = function coreVary(_request, reply, payload, done) {
    if (getContext().restrictedFields.size > 0 && /json/i.test(String(reply.getHeader('content-type') ?? ''))) {
      appendVary(reply, VARY_ON_CREDENTIALS);
    }
    done(null, payload);
  };

  return {
    // Route-level, so a Core route answers with the contract's envelope even when the app sets its
    // error handler after the route's plugin was registered (Fastify copies handlers per context).
    errorHandler: appExceptionHandler,
    ...rest,
    config: { ...(config as object), core },
    preHandler: [guard, ...toArray(preHandler)],
    onSend: [vary, ...toArray(onSend)],
    handler: async function coreHandler(request, reply) {
      const result = await handler(request, reply);
      if (result instanceof CoreJSONResponse) return sendCore(reply, result);
      return result;
    },
  } as RouteOptions;
}

/** Sends a `CoreJSONResponse`: status, headers, and the rendered envelope as the payload. */
export function sendCore(reply: FastifyReply, response: CoreJSONResponse): FastifyReply {
  reply.code(response.status).type('application/json; charset=utf-8');
  for (const [name, value] of Object.entries(response.options.headers ?? {})) reply.header(name, value);
  return reply.send(response.render());
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}
