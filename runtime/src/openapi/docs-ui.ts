import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Fastify from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import type { StaticDocumentSpec } from '@fastify/swagger'; // also declares the `app.swagger()` decorator
import { CORE_PLAIN_ROUTE } from '../http/error-handler.js';
import type {} from './plugin.js'; // declares `app.coreDocsDisabled`

export interface SwaggerUiOnDemandOptions {
  /** Where the page is served, e.g. `/docs`: the page itself, `<prefix>/json`, `<prefix>/yaml` and `<prefix>/static/*`. */
  routePrefix: string;
}

/** Headers of the docs app's response that belong to its own connection, not to ours. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

/**
 * The Swagger UI of `@fastify/swagger-ui`, loaded on the first request to `routePrefix` instead of
 * at start. Registering the UI eagerly loads @fastify/static, send and the UI's own modules: about
 * 50–70 ms of every start and 13 MB of idle RSS, for a page few production requests ever open.
 *
 * The app registers two hidden routes, `<prefix>` and `<prefix>/*`. The first request to either
 * builds a small Fastify instance with @fastify/swagger in static mode (the document is the app's own
 * `app.swagger()`, complete by then) and @fastify/swagger-ui under the same prefix; each request is
 * then answered by injecting it there. The app's own hooks (its request log line) run as for any route.
 * The UI's 404 becomes the app's own 404 envelope, and its 5xx an error for the app's error handler.
 *
 * Register it after `coreOpenApi` (or `@fastify/swagger`) and before the routes, as `@fastify/swagger-ui` would be.
 */
async function docsUi(app: FastifyInstance, options: SwaggerUiOnDemandOptions): Promise<void> {
  if (app.coreDocsDisabled === true) return; // DOCS_ENABLED=false: no UI either
  const prefix = options.routePrefix.replace(/\/+$/, '');
  let ui: Promise<FastifyInstance> | undefined;

  const load = async (): Promise<FastifyInstance> => {
    const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([
      import('@fastify/swagger'),
      import('@fastify/swagger-ui'),
    ]);
    const docs = Fastify({ logger: false });
    // app.swagger() is typed as any OpenAPI version's document; static mode's option names only 2.0 and 3.0.
    const document = app.swagger() as StaticDocumentSpec['document'];
    await docs.register(swagger, { mode: 'static', specification: { document } });
    await docs.register(swaggerUi, { routePrefix: prefix });
    await docs.ready();
    return docs;
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    // A failed load (the package missing) is tried again on the next request, not cached.
    ui ??= load().catch((err: unknown) => {
      ui = undefined;
      throw err;
    });
    const res = await (await ui).inject({
      method: request.method as 'GET' | 'HEAD',
      url: request.url,
      headers: request.headers,
    });
    if (res.statusCode === 404) return reply.callNotFound();
    if (res.statusCode >= 500) throw new Error(`the docs UI answered ${res.statusCode} for ${request.url}`);
    reply.code(res.statusCode);
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) reply.header(name, value);
    }
    return reply.send(res.rawPayload);
  };

  app.get(prefix, CORE_PLAIN_ROUTE, handler);
  app.get(`${prefix}/*`, CORE_PLAIN_ROUTE, handler);
  app.addHook('onClose', async () => {
    const loaded = ui;
    ui = undefined;
    await loaded?.then(
      (docs) => docs.close(),
      () => undefined,
    );
  });
}

/** Not encapsulated: the routes sit in the app's own context, so the UI's 404 is the app's 404. */
export const swaggerUiOnDemand = fastifyPlugin(docsUi, {
  fastify: '5.x',
  name: 'core-swagger-ui-on-demand',
  dependencies: ['@fastify/swagger'],
});
