import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import Fastify from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import type { FastifyDynamicSwaggerOptions, StaticDocumentSpec } from '@fastify/swagger';
import type {} from '../auth/plugin.js'; // declares `request.coreAuth`
import { loadPolicies, type PolicyDocument, type PolicySet } from '../auth/policies.js';
import { hasPermission } from '../context/context.js';
import { boundRequiredFields } from '../schema/claim-bound.js';
import { describeSchema, type SchemaInfo } from '../schema/schema-info.js';
import type { Json } from './components.js';
import { buildDocument, CORE_ROUTE_MARK } from './document.js';
import type { CoreRouteEntry } from './operations.js';
import { CORE_PLAIN_ROUTE } from '../http/error-handler.js';

export interface CoreOpenApiOptions {
  /**
   * The app's settings: `projectName` is the document's title; `docsEnabled: false` (the default with
   * `ENVIRONMENT=production`) keeps the documents and the UI unserved, while `app.swagger()` still works.
   */
  settings?: { readonly projectName: string; readonly docsEnabled?: boolean };
  /** The title, when not `settings.projectName`. */
  title?: string;
  /** The API's version (`info.version`); default `0.1.0`. */
  version?: string;
  description?: string;
  /** `info.license`, e.g. `{ name: 'MIT', identifier: 'MIT' }`; without it lint tools warn. */
  license?: { name: string; identifier?: string; url?: string };
  /** Default `[{ url: '/' }]`: the document's paths are relative to wherever it was fetched from. */
  servers?: { url: string; description?: string }[];
  /**
   * The policies the app's context plugin uses (`src/policies.json`). With them, a field some role may
   * not see is optional in the shared document, and an action the anonymous role holds is documented
   * as callable without a credential.
   */
  policies?: PolicySet | PolicyDocument | string | URL;
  /** Where the document is served: `<prefix>/json` and `<prefix>/yaml`; default `/docs`. */
  routePrefix?: string;
}

/** Set on the app by `coreOpenApi`: true when the settings turned the documents and the UI off. */
export const DOCS_DISABLED = 'coreDocsDisabled';

declare module 'fastify' {
  interface FastifyInstance {
    [DOCS_DISABLED]?: boolean;
  }
}

/** How many callers' documents are kept (one per distinct set of restrictions and permissions). */
const CALLER_CACHE_SIZE = 32;

interface CallerDocument {
  readonly json: Json;
  yaml?: Promise<string>;
}

/**
 * The OpenAPI 3.1 document of a Core app, at `/docs/json` and `/docs/yaml`, unauthenticated. It
 * registers `@fastify/swagger` (so `app.swagger()` and the docs UI work as before) and writes Core's
 * routes itself, from what the routers declare: operationIds, request bodies and responses as named
 * components, every status a route can answer, the credentials it takes. Nothing here changes how a
 * request is validated or answered: the routes keep Core's own parsing and serialization.
 *
 * A request with a valid credential gets its caller's document: fields the caller cannot see are
 * left out. Without one (or with an invalid one) it gets the shared document, also `app.swagger()`.
 *
 * Register it where `@fastify/swagger` would go: before the routes, so every route is seen.
 * ```ts
 * await app.register(coreOpenApi, { settings, policies });
 * await app.register(swaggerUiOnDemand, { routePrefix: '/docs' });
 * ```
 */
async function openApi(app: FastifyInstance, options: CoreOpenApiOptions): Promise<void> {
  const { default: swagger } = await import('@fastify/swagger');
  const prefix = (options.routePrefix ?? '/docs').replace(/\/+$/, '');
  const policies = options.policies === undefined ? undefined : loadPolicies(options.policies);
  const roles = (policies?.roleNames ?? []).map(
    (role) => policies!.contextFor({ sub: null, roles: [role] }).restrictedFields,
  );
  const anonymous = policies?.anonymousContext();
  const anonymousMay = (action: string): boolean => anonymous !== undefined && hasPermission(anonymous, action);

  // Filled while the swagger plugin builds its document (once: it caches it), read by every view.
  const entries: CoreRouteEntry[] = [];
  let base: Json | undefined;

  const swaggerOptions: FastifyDynamicSwaggerOptions = {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: options.title ?? options.settings?.projectName ?? 'API',
        version: options.version ?? '0.1.0',
        ...(options.description === undefined ? {} : { description: options.description }),
        ...(options.license === undefined ? {} : { license: options.license }),
      },
      servers: options.servers ?? [{ url: '/' }],
    },
    // Named schemas an app adds with `app.addSchema({ $id })` keep their name as components.
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => (typeof json['$id'] === 'string' ? json['$id'] : `def-${i}`),
    },
    transform: ({ schema, url, route }) => {
      const core = route.config?.core;
      if (core === undefined) return { schema, url };
      const doc = route.config?.coreOpenApi;
      const mark = entries.push({ action: core.action, doc, summary: schema?.summary }) - 1;
      if (doc === undefined) return { schema: { ...schema, [CORE_ROUTE_MARK]: mark } as FastifySchema, url };
      // `/tasks/` and `/tasks` both answer; the document names the collection without the slash.
      const canonical = url.length > 1 ? url.replace(/\/+$/, '') : url;
      const marked = { [CORE_ROUTE_MARK]: mark, ...(schema?.hide === true ? { hide: true } : {}) };
      return { schema: marked as FastifySchema, url: canonical };
    },
    transformObject: (document) => {
      base = structuredClone('openapiObject' in document ? document.openapiObject : document.swaggerObject) as Json;
      return buildDocument(base, entries, { restricted: null, roles }, anonymousMay);
    },
  };
  await app.register(swagger, swaggerOptions);

  app.decorate(DOCS_DISABLED, options.settings?.docsEnabled === false);
  if (options.settings?.docsEnabled === false) return;

  const callers = new Map<string, CallerDocument>();
  const documentFor = (request: FastifyRequest): CallerDocument | undefined => {
    const auth = request.coreAuth;
    if (!auth?.authenticated) return undefined;
    const shared = app.swagger() as Json; // builds `base` on first use
    const { context } = auth;
    const restricted = context.restrictedFields;
    const actions = [...new Set(entries.map((entry) => entry.action))].filter(
      (action): action is string => action !== null,
    );
    const permitted = actions.filter((action) => hasPermission(context, action));
    // Fields the caller's row scope binds to a claim are optional in its create and replace bodies.
    const bound = (info: SchemaInfo, mode: 'create' | 'replace') => boundRequiredFields(info, context, mode);
    const boundKey = boundSignature(entries, bound);
    // Callers with the same restrictions, permitted operations and claim-bound fields see the same document.
    const key = `${[...restricted].sort().join('\n')}\0${permitted.join('\n')}\0${boundKey}`;
    let found = callers.get(key);
    if (found === undefined) {
      const may = (action: string): boolean => hasPermission(context, action);
      found = {
        json:
          base === undefined ? shared : buildDocument(base, entries, { restricted, roles, may, bound }, anonymousMay),
      };
      if (callers.size >= CALLER_CACHE_SIZE) callers.delete(callers.keys().next().value!);
      callers.set(key, found);
    }
    return found;
  };

  // The answer depends on the credential: shared caches must neither keep nor mix callers' documents.
  const perCaller = (reply: FastifyReply): FastifyReply =>
    reply.header('vary', 'Authorization, Cookie').header('cache-control', 'private');

  app.get(`${prefix}/json`, CORE_PLAIN_ROUTE, async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = documentFor(request);
    return perCaller(reply)
      .type('application/json; charset=utf-8')
      .send(caller?.json ?? app.swagger());
  });
  app.get(`${prefix}/yaml`, CORE_PLAIN_ROUTE, async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = documentFor(request);
    perCaller(reply);
    let text: string | Promise<string> = app.swagger({ yaml: true });
    if (caller !== undefined) {
      caller.yaml ??= toYaml(caller.json).catch((error: unknown) => {
        delete caller.yaml;
        throw error;
      });
      text = caller.yaml;
    }
    return reply.type('application/x-yaml').send(await text);
  });
}

/**
 * Which create and replace bodies lose required fields to `bound` (a caller's claim-bound fields): the
 * part of a caller's document that depends on its row scope, as a cache key.
 */
function boundSignature(
  entries: readonly CoreRouteEntry[],
  bound: (info: SchemaInfo, mode: 'create' | 'replace') => { readonly key: string } | undefined,
): string {
  const parts = new Set<string>();
  for (const entry of entries) {
    const resource = entry.doc?.resource;
    if (resource === undefined) continue;
    for (const [schema, mode] of [
      [resource.createSchema, 'create'],
      [resource.updateSchema, 'replace'],
    ] as const) {
      const info = describeSchema(schema);
      const found = bound(info, mode);
      if (found !== undefined) parts.add(`${info.id}:${mode}:${found.key}`);
    }
  }
  return [...parts].sort().join('\n');
}

/** YAML as the swagger plugin writes it (its static mode), so both spellings read the same. */
async function toYaml(document: Json): Promise<string> {
  const { default: swagger } = await import('@fastify/swagger');
  const instance = Fastify({ logger: false });
  try {
    await instance.register(swagger, {
      mode: 'static',
      specification: { document: document as unknown as StaticDocumentSpec['document'] },
    });
    await instance.ready();
    return instance.swagger({ yaml: true });
  } finally {
    await instance.close();
  }
}

/** Not encapsulated: `app.swagger()` and the document's routes belong to the app itself. */
export const coreOpenApi = fastifyPlugin(openApi, { fastify: '5.x', name: 'core-openapi' });
