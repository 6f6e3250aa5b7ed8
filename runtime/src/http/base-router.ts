import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Type, type TObject, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { container } from '../container/container.js';
import { Inject } from '../container/inject.js';
import type { Token } from '../container/token.js';
import { getContext } from '../context/context.js';
import { dbManager } from '../db/database.js';
import { etagOf } from '../data/etag.js';
import { BaseService } from '../data/service.js';
import type { Base, ModelClass } from '../model/base.js';
import type { Page, PageParams } from '../model/types.js';
import { ValidationError } from '../errors.js';
import type { ContextSchema } from '../schema/context-schema.js';
import { SearchRequestSchema, type SearchRequest } from '../search/search-request.js';
import { resourceRouteConfig, type CoreRouteDoc, type ResourceOperation } from './route-doc.js';
import { CoreAPIRoute, type CoreRouteOptions, type SchemaSource } from './core-api-route.js';
import { CoreJSONResponse } from './core-json-response.js';
import { useCoreRequest } from './core-request.js';
import { allowedMethods, methodNotAllowedOr404, useCoreErrors } from './error-handler.js';
import type { PageMeta } from './envelope.js';
import { atUrl, ID_PARAM, LIST_QUERY, VIEW_URL } from './url-errors.js';

type OutputRow = Record<string, unknown>;

// The OpenAPI keywords Core sets on its routes, declared exactly as @fastify/swagger declares them so
// the two augmentations merge when an app installs it.
declare module 'fastify' {
  interface FastifySchema {
    tags?: readonly string[];
    summary?: string;
  }
}

/**
 * What the router needs of a service: the `BaseService` surface, typed structurally so any service
 * class with these methods (a `BaseService` subclass, or a hand-written one) can back a router.
 */
export interface RouterService<C, U> {
  /** With `etag`, the returned row carries the record's ETag (`etagOf(row)`), read with it. */
  get(id: unknown, options?: { include?: string[]; etag?: boolean }): Promise<OutputRow>;
  getList(params?: PageParams & { include?: string[] }): Promise<Page<OutputRow>>;
  search(request: SearchRequest): Promise<Page<OutputRow>>;
  create(input: C): Promise<OutputRow>;
  /**
   * `ifMatch` is the `If-Match` header: write only if the record's ETag matches, else throw a 412
   * (`PreconditionFailedError`); `etag` asks for the new ETag on the returned row (`etagOf(row)`).
   * A replace resets only the `fields` absent from `input` (the update schema's fields), never `keep`.
   */
  update(
    id: unknown,
    input: U,
    options?: {
      replace?: boolean;
      keep?: Iterable<string>;
      fields?: Iterable<string>;
      ifMatch?: string;
      etag?: boolean;
    },
  ): Promise<OutputRow>;
  delete(id: unknown, options?: { ifMatch?: string }): Promise<void>;
  /**
   * The record's current ETag, null when there is none; `include` is checked as `get` checks it, before
   * any SQL. Without this method, GET sends no `ETag`.
   */
  etag?(id: unknown, options?: { include?: string[] }): Promise<string | null>;
}

type SchemaClass = typeof ContextSchema;

interface IdParams {
  id: string;
}

interface ListQuery {
  limit?: number;
  offset?: number;
  cursor?: string;
  include?: string;
  schema?: string;
}

const PAGE_KEYS = ['limit', 'offset', 'cursor'] as const;

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const ListQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ description: 'Page size (default 50)' })),
  offset: Type.Optional(Type.Integer({ description: 'Rows to skip (offset pagination)' })),
  cursor: Type.Optional(Type.String({ description: 'Opaque cursor from a previous page (keyset pagination)' })),
  include: Type.Optional(
    Type.String({ description: 'Relations to embed, comma-separated: `project,comments.author`' }),
  ),
  schema: Type.Optional(Type.String({ description: '`true`: answer the JSON Schema of this route instead' })),
});

const ViewQuerySchema = Type.Object({
  include: ListQuerySchema.properties.include,
  schema: ListQuerySchema.properties.schema,
});

const SchemaOnlyQuery = Type.Object({ schema: ListQuerySchema.properties.schema });

/**
 * What the seven endpoint methods of a `BaseRouter` share, built once per mount by `routes(app)`.
 * Everything here is decided when the routes are registered, never per request.
 */
export interface ResourceRoutes {
  /** The full mount path (`/api/v1/tasks`): what `Location` and the `Link` header start with. */
  readonly prefix: string;
  /** The router's `tags`, as the routes' OpenAPI tags. */
  readonly tags: string[];
  /** `{ id }`, the path parameters of the by-id routes as the router validates them. */
  readonly params: TObject<{ id: TSchema }>;
  /** The by-id routes' first hook: a reserved word in the id's place (`search`, empty) is a 405. */
  readonly onRequest: onRequestHookHandler;
  /** The route `config` that tells the OpenAPI document which resource operation a route is. */
  config(operation: ResourceOperation): { coreOpenApi: CoreRouteDoc };
  /** `source` when the router has `exposeSchemas` (`?schema=true` answers it), else undefined. */
  expose(source: SchemaSource): SchemaSource | undefined;
}

/**
 * Scaffolds the seven secure endpoints of one resource (docs/http.md) from a model, three context
 * schemas and a service. Subclass it, set the fields, and register `.router` on the app:
 *
 * ```ts
 * export class TaskRouter extends BaseRouter<TaskCreateInput, TaskUpdateInput> {
 *   readonly model = Task;
 *   readonly createSchema = TaskCreate;
 *   readonly updateSchema = TaskUpdate;
 *   readonly schemaOut = TaskOut;
 *   readonly service = TaskService;
 *   readonly prefix = '/tasks';
 *   readonly tags = ['tasks'];
 *   readonly exposeSchemas = true;
 * }
 * await app.register(new TaskRouter().router);
 * ```
 *
 * | route | method | guard | success |
 * |---|---|---|---|
 * | `POST /` | `create` | create | 201, `Location` |
 * | `GET /:id` | `get` | view | 200 |
 * | `PUT /:id` (replace) | `replace` | update | 200 |
 * | `PATCH /:id` (partial) | `update` | update | 200 |
 * | `DELETE /:id` | `delete` | delete | 200, `data: null` |
 * | `GET /` | `list` | listview | 200, array |
 * | `POST /search` | `search` | listview | 200, array |
 *
 * Each route comes from its own method, which returns the route's `CoreAPIRoute` options (or
 * undefined to leave the route out); `routes(app)` registers them in the order above. Override one
 * to change that endpoint alone: the others, and what the OpenAPI document says of each (its
 * `config` and `schema`), stay as they are.
 *
 * ```ts
 * export class TaskRouter extends BaseRouter<TaskCreateInput, TaskUpdateInput> {
 *   // …the fields above…
 *
 *   // GET /tasks/:id also says how long a client may cache the record; the handler stays Core's.
 *   protected override get(resource: ResourceRoutes): CoreRouteOptions | undefined {
 *     const route = super.get(resource);
 *     return route && { ...route, onSend: cachePrivately };
 *   }
 *
 *   // No DELETE /tasks/:id: that URL answers 405 with the methods it still serves.
 *   protected override delete(): undefined {
 *     return undefined;
 *   }
 * }
 * ```
 *
 * The service is resolved per request from the request's DI scope. Override `routes(app)` (calling
 * `super.routes(app)`) to add endpoints of your own under the same prefix.
 */
export abstract class BaseRouter<C extends object, U extends object> {
  abstract readonly model: ModelClass;
  abstract readonly createSchema: SchemaClass;
  abstract readonly updateSchema: SchemaClass;
  abstract readonly schemaOut: SchemaClass;
  abstract readonly service: Token<RouterService<C, U>>;
  abstract readonly prefix: string;
  readonly tags: readonly string[] = [];
  readonly exposeSchemas: boolean = false;

  /** The Fastify plugin registering the routes under `prefix` (both `/tasks` and `/tasks/` answer). */
  get router(): FastifyPluginAsync {
    return async (app) => {
      await app.register(
        async (scoped) => {
          // In the router's own context: Fastify copies body parsers into a plugin when it is created, so
          // the JSON-only parser must not depend on the app configuring it first.
          useCoreRequest(scoped);
          // Likewise the error and not-found handlers: errors of the router's own 404 route, and the
          // 405 of a method its paths do not serve, answer in the envelope whatever the app set.
          const reserved = this.reservedIds();
          useCoreErrors(scoped, { ignoreMatch: (params) => params.id !== undefined && reserved.has(params.id) });
          this.routes(scoped);
          scoped.addHook('onReady', () => this.prepareService(scoped));
        },
        { prefix: this.prefix },
      );
    };
  }

  /**
   * Builds the service once, in a DI scope of its own, when the app is ready, so its repository exists
   * before the first request: a repository that overrides `buildBaseQuery` registers its row scope when
   * it is built, and other resources' includes and relation paths must obey it from the first request.
   */
  private prepareService(app: FastifyInstance): void {
    const scope = container.createScope();
    try {
      scope.resolve(this.service);
    } catch (err) {
      app.log.warn(
        { err, router: this.constructor.name },
        'the service could not be built before the first request: a row scope its repository declares in code ' +
          '(buildBaseQuery) applies to other resources only once a request has built it; see docs/security.md',
      );
    } finally {
      void scope.dispose();
    }
  }

  /** The service for the current request, from its DI scope. */
  protected resolveService(): RouterService<C, U> {
    return Inject(this.service);
  }

  /**
   * Registers the seven endpoints, each from its method, in the order of the class comment's table;
   * override to add your own (and call `super.routes(app)`). `app` is the router's own context:
   * `app.prefix` is the full mount path (e.g. `/api/v1/tasks`).
   */
  protected routes(app: FastifyInstance): void {
    const resource = this.resourceRoutes(app);
    register(app, this.create(resource));
    register(app, this.get(resource));
    register(app, this.replace(resource));
    register(app, this.update(resource));
    register(app, this.delete(resource));
    register(app, this.list(resource));
    register(app, this.search(resource));
  }

  /** What the endpoint methods share, for the router mounted at `app.prefix`. */
  protected resourceRoutes(app: FastifyInstance): ResourceRoutes {
    const tags = [...this.tags];
    const params = Type.Object({ id: this.idSchema() });
    // What the OpenAPI document says of each route (bodies, responses, statuses), read from this router.
    const description = {
      entity: this.model.name,
      name: this.model.tableName,
      tags,
      createSchema: this.createSchema,
      updateSchema: this.updateSchema,
      schemaOut: this.schemaOut,
      id: params.properties.id,
      service: this.service,
    };
    const exposeSchemas = this.exposeSchemas;
    return {
      prefix: app.prefix,
      tags,
      params,
      onRequest: rejectReservedIds(this.reservedIds()),
      config: (operation) => resourceRouteConfig(operation, description),
      expose: (source) => (exposeSchemas ? source : undefined),
    };
  }

  /** `POST /`: creates one record; 201 with the record and its `Location`. */
  protected create(resource: ResourceRoutes): CoreRouteOptions | undefined {
    const base = resource.prefix;
    const out = this.schemaOut;
    return {
      method: 'POST',
      url: '/',
      action: this.model.actions().CREATE,
      config: resource.config('create'),
      schema: { tags: resource.tags, summary: `Create one ${this.model.name}`, querystring: SchemaOnlyQuery },
      exposeSchema: resource.expose((ctx) => ({
        schema: this.createSchema.jsonSchema(ctx),
        restrictedFields: this.createSchema.restrictedFieldsFor(ctx),
      })),
      handler: (request) => {
        const ctx = getContext();
        const input = this.createSchema.parse(request.body, ctx, { mode: 'create' }) as C;
        const service = this.resolveService();
        // BaseService's own `create` answers without a promise where the write ran at once (SQLite):
        // with AsyncLocalStorage every promise also runs Node's async hooks.
        const created = usesOwnCreate<C>(service) ? service.createDirect(input) : service.create(input);
        const respond = (row: OutputRow): CoreJSONResponse =>
          new CoreJSONResponse(row, {
            status: 201,
            serializeData: out.serializer(ctx),
            headers: { location: `${base}/${String(row[this.primaryKey()])}` },
          });
        return created instanceof Promise ? created.then(respond) : respond(created);
      },
    };
  }

  /** `GET /:id`: one record, with its `ETag` when the service has `etag`. */
  protected get(resource: ResourceRoutes): CoreRouteOptions | undefined {
    const out = this.schemaOut;
    return {
      method: 'GET',
      url: '/:id',
      onRequest: resource.onRequest,
      action: this.model.actions().VIEW,
      config: resource.config('get'),
      schema: {
        tags: resource.tags,
        summary: `Get one ${this.model.name}`,
        params: resource.params,
        querystring: ViewQuerySchema,
      },
      exposeSchema: resource.expose(outputSchema(out)),
      handler: (request) => {
        const { id } = request.params as IdParams;
        const service = this.resolveService();
        const include = includeOf(request);
        if (!usesOwnGet(service)) return this.getThroughService(service, id, include);
        // BaseService's own `get` reads the tag with the row, in one statement, and answers without a
        // promise where the read is synchronous (SQLite): with AsyncLocalStorage every promise also
        // runs Node's async hooks.
        let read: OutputRow | Promise<OutputRow>;
        try {
          read = service.getDirect(id, { include, etag: true });
        } catch (error) {
          throw atUrl(error, VIEW_URL);
        }
        return read instanceof Promise
          ? this.getThroughService(service, id, include, read)
          : this.getResponse(read, etagOf(read));
      },
    };
  }

  /**
   * GET by id through the service's `get` (`read`: the tagged read already under way), for services
   * of any kind.
   */
  private async getThroughService(
    service: RouterService<C, U>,
    id: string,
    include: string[] | undefined,
    read?: Promise<OutputRow>,
  ): Promise<CoreJSONResponse> {
    let row: OutputRow;
    let tag: string | null | undefined;
    try {
      if (service.etag) {
        row = await (read ?? service.get(id, { include, etag: true }));
        tag = etagOf(row);
        if (tag === undefined) {
          // A service whose `get` does not attach it: the tag is read first, as a tag older than its
          // row can only cause a needless 412, never a lost update.
          tag = await service.etag(id, { include });
          row = await service.get(id, { include });
        }
      } else {
        row = await service.get(id, { include });
      }
    } catch (error) {
      throw atUrl(error, VIEW_URL);
    }
    return this.getResponse(row, tag);
  }

  private getResponse(row: OutputRow, tag: string | null | undefined): CoreJSONResponse {
    return new CoreJSONResponse(row, { serializeData: this.schemaOut.serializer(getContext()), ...etagHeader(tag) });
  }

  /** `PUT /:id`: replaces one record (absent writable fields return to their defaults). */
  protected replace(resource: ResourceRoutes): CoreRouteOptions | undefined {
    return this.writeRoute(resource, 'PUT', 'replace');
  }

  /** `PATCH /:id`: changes the fields sent. */
  protected update(resource: ResourceRoutes): CoreRouteOptions | undefined {
    return this.writeRoute(resource, 'PATCH', 'patch');
  }

  /** `DELETE /:id`: deletes one record; 200 with `data: null`. */
  protected delete(resource: ResourceRoutes): CoreRouteOptions | undefined {
    return {
      method: 'DELETE',
      url: '/:id',
      onRequest: resource.onRequest,
      action: this.model.actions().DELETE,
      config: resource.config('delete'),
      schema: { tags: resource.tags, summary: `Delete one ${this.model.name}`, params: resource.params },
      handler: async (request) => {
        const { id } = request.params as IdParams;
        const ifMatch = ifMatchOf(request);
        try {
          await this.resolveService().delete(id, ifMatch === undefined ? {} : { ifMatch });
        } catch (error) {
          throw atUrl(error, ID_PARAM);
        }
        return new CoreJSONResponse(null);
      },
    };
  }

  /** `GET /`: one page of records; the first page of an unpaginated call links the next one. */
  protected list(resource: ResourceRoutes): CoreRouteOptions | undefined {
    const base = resource.prefix;
    const out = this.schemaOut;
    return {
      method: 'GET',
      url: '/',
      action: this.model.actions().LISTVIEW,
      config: resource.config('list'),
      schema: { tags: resource.tags, summary: `List ${this.model.tableName}`, querystring: ListQuerySchema },
      exposeSchema: resource.expose(outputSchema(out)),
      handler: async (request, reply) => {
        const query = request.query as ListQuery;
        let page: Page<OutputRow>;
        try {
          page = await this.resolveService().getList({ ...pageParams(query), include: includeOf(request) });
        } catch (error) {
          throw atUrl(error, LIST_QUERY);
        }
        const paginated = PAGE_KEYS.some((key) => query[key] !== undefined);
        if (!paginated && page.hasMore && page.nextCursor) {
          const next = new URLSearchParams({ cursor: page.nextCursor });
          if (query.include) next.set('include', query.include);
          reply.header('link', `<${base}/?${next.toString()}>; rel="next"`);
        }
        return new CoreJSONResponse(page.items, {
          serializeData: out.serializer(getContext()),
          meta: paginated ? pageMeta(page) : null,
        });
      },
    };
  }

  /** `POST /search`: one page of the records a search body selects. */
  protected search(resource: ResourceRoutes): CoreRouteOptions | undefined {
    const out = this.schemaOut;
    return {
      method: 'POST',
      url: '/search',
      action: this.model.actions().LISTVIEW,
      config: resource.config('search'),
      schema: { tags: resource.tags, summary: `Search ${this.model.tableName}`, querystring: SchemaOnlyQuery },
      exposeSchema: resource.expose((ctx) => ({
        schema: searchRequestJsonSchema(),
        restrictedFields: out.restrictedFieldsFor(ctx),
      })),
      handler: async (request) => {
        const body = request.body ?? {};
        if (typeof body !== 'object' || Array.isArray(body)) {
          throw new ValidationError('The search body must be a JSON object.', [
            { path: '', message: 'must be an object' },
          ]);
        }
        const search = body as SearchRequest;
        const page = await this.resolveService().search(search);
        const paginated = PAGE_KEYS.some((key) => search[key] !== undefined);
        return new CoreJSONResponse(page.items, {
          serializeData: out.serializer(getContext()),
          meta: paginated ? pageMeta(page) : null,
        });
      },
    };
  }

  /** PUT and PATCH: one route each, told apart by `mode` when registered, not per request. */
  private writeRoute(resource: ResourceRoutes, method: 'PUT' | 'PATCH', mode: 'replace' | 'patch'): CoreRouteOptions {
    const out = this.schemaOut;
    // What a replace may reset: the fields of the update schema. A field it does not declare (one that
    // may be set on create only, say) keeps its stored value, as a restricted field does.
    const replaced = Object.keys(this.updateSchema.fields.properties);
    return {
      method,
      url: '/:id',
      onRequest: resource.onRequest,
      action: this.model.actions().UPDATE,
      config: resource.config(mode === 'replace' ? 'replace' : 'update'),
      schema: {
        tags: resource.tags,
        summary: `${mode === 'replace' ? 'Replace' : 'Update part of'} one ${this.model.name}`,
        params: resource.params,
        querystring: SchemaOnlyQuery,
      },
      exposeSchema: resource.expose((ctx) => ({
        schema: this.updateSchema.jsonSchema(ctx, { mode }),
        restrictedFields: this.updateSchema.restrictedFieldsFor(ctx),
      })),
      handler: async (request) => {
        const ctx = getContext();
        const { id } = request.params as IdParams;
        const input = this.updateSchema.parse(request.body, ctx, { mode }) as U;
        // A replace resets absent writable fields, but never what the caller may not see.
        const options =
          mode === 'replace'
            ? { replace: true, keep: ctx.restrictedFields, fields: replaced, etag: true }
            : { etag: true };
        const ifMatch = ifMatchOf(request);
        let row: OutputRow;
        try {
          row = await this.resolveService().update(
            id,
            input,
            ifMatch === undefined ? options : { ...options, ifMatch },
          );
        } catch (error) {
          throw atUrl(error, ID_PARAM);
        }
        return new CoreJSONResponse(row, { serializeData: out.serializer(ctx), ...etagHeader(etagOf(row)) });
      },
    };
  }

  /** The primary key's property name, read from the ORM metadata (initialised before routes register). */
  protected primaryKey(): string {
    return dbManager.db.orm.getMetadata().get(this.model.name).primaryKeys[0] as string;
  }

  /**
   * `:id` in the URL: a uuid for uuid keys (422 otherwise, before any SQL), an integer for numeric keys.
   * A uuid is the canonical 8-4-4-4-12 hex form only: the `uuid` format alone also lets `urn:uuid:…`
   * through, which no row has as its id.
   */
  protected idSchema(): TSchema {
    const meta = dbManager.db.orm.getMetadata().get(this.model.name);
    const type = String(meta.properties[meta.primaryKeys[0] as string]?.type ?? '').toLowerCase();
    if (type === 'uuid') return Type.String({ format: 'uuid', pattern: UUID_PATTERN });
    if (['integer', 'int', 'number', 'smallint', 'tinyint', 'mediumint'].includes(type))
      return Type.Integer({ minimum: 1 });
    return Type.String({ minLength: 1 });
  }

  /**
   * Words in the id's place that can never be an id: empty (`DELETE /tasks/`), and `search` when ids
   * are uuids or integers (`GET /tasks/search`). Such a URL names the collection or the search route.
   */
  protected reservedIds(): ReadonlySet<string> {
    const ids = this.idSchema();
    return new Set(['', 'search'].filter((word) => !Value.Check(ids, word)));
  }
}

/**
 * The by-id routes' first hook: a reserved word in the id's place is a 405 with the methods the URL is
 * served for, before the body is read or the caller checked, instead of a 422 about `params.id`.
 */
function rejectReservedIds(reserved: ReadonlySet<string>): onRequestHookHandler {
  return function rejectReservedId(request, _reply, done) {
    const { id } = request.params as IdParams;
    if (!reserved.has(id)) {
      done();
      return;
    }
    done(
      methodNotAllowedOr404(
        allowedMethods(this, request.url, (params) => params.id !== undefined && reserved.has(params.id)),
      ),
    );
  };
}

function register(app: FastifyInstance, route: CoreRouteOptions | undefined): void {
  if (route !== undefined) app.route(CoreAPIRoute(route));
}

/** `?schema=true` of the routes that answer records: the output schema as the caller may see it. */
function outputSchema(out: SchemaClass): SchemaSource {
  return (ctx) => ({ schema: out.jsonSchema(ctx), restrictedFields: out.restrictedFieldsFor(ctx) });
}

/** The `If-Match` header's text (repeated headers joined, as a list); undefined when absent. */
function ifMatchOf(request: FastifyRequest): string | undefined {
  const header = request.headers['if-match'];
  return Array.isArray(header) ? header.join(', ') : header;
}

/** A `BaseService` whose `create` is not overridden, which `createDirect` stands in for. */
function usesOwnCreate<C extends object>(service: object): service is BaseService<Base, C> {
  return service instanceof BaseService && service.create === BaseService.prototype.create;
}

/** A `BaseService` whose `get` is not overridden, which `getDirect` stands in for. */
function usesOwnGet(service: object): service is BaseService<Base> {
  return service instanceof BaseService && service.get === BaseService.prototype.get;
}

function etagHeader(tag: string | null | undefined): { headers?: Record<string, string> } {
  return tag ? { headers: { etag: tag } } : {};
}

function includeOf(request: FastifyRequest): string[] | undefined {
  const include = (request.query as ListQuery | undefined)?.include;
  if (include === undefined || include === '') return undefined;
  return include.split(',').map((path) => path.trim());
}

function pageParams(query: ListQuery): PageParams {
  const params: PageParams = {};
  if (query.limit !== undefined) params.limit = query.limit;
  if (query.offset !== undefined) params.offset = query.offset;
  if (query.cursor !== undefined) params.cursor = query.cursor;
  return params;
}

function pageMeta(page: Page<unknown>): PageMeta {
  return { limit: page.limit, offset: page.offset, next_cursor: page.nextCursor, has_more: page.hasMore };
}

let searchSchemaDoc: unknown;

/** The search body's JSON Schema for `?schema=true`: `{ title: 'SearchRequest', type, properties, required }`. */
function searchRequestJsonSchema(): unknown {
  searchSchemaDoc ??= Object.freeze({
    title: 'SearchRequest',
    type: 'object',
    properties: JSON.parse(JSON.stringify(SearchRequestSchema.properties)) as unknown,
    required: [],
  });
  return searchSchemaDoc;
}
