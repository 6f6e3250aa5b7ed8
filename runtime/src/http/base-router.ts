import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { Inject, type Token } from '../container/index.js';
import { getContext } from '../context/context.js';
import { dbManager } from '../db/database.js';
import { etagOf } from '../data/etag.js';
import type { ModelClass } from '../model/base.js';
import type { Page, PageParams } from '../model/types.js';
import { ValidationError } from '../errors.js';
import type { ContextSchema } from '../schema/index.js';
import { SearchRequestSchema, type SearchRequest } from '../search/index.js';
import { resourceRouteConfig, type ResourceOperation } from './route-doc.js';
import { CoreAPIRoute, type SchemaSource } from './core-api-route.js';
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
  get(id: unknown, options?: { include?: string[] }): Promise<OutputRow>;
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
 * | route | guard | success |
 * |---|---|---|
 * | `POST /` | create | 201, `Location` |
 * | `GET /:id` | view | 200 |
 * | `PUT /:id` (replace) | update | 200 |
 * | `PATCH /:id` (partial) | update | 200 |
 * | `DELETE /:id` | delete | 200, `data: null` |
 * | `GET /` | listview | 200, array |
 * | `POST /search` | listview | 200, array |
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
        },
        { prefix: this.prefix },
      );
    };
  }

  /** The service for the current request, from its DI scope. */
  protected resolveService(): RouterService<C, U> {
    return Inject(this.service);
  }

  /**
   * Registers the seven endpoints; override to add your own (and call `super.routes(app)`). `app` is
   * the router's own context: `app.prefix` is the full mount path (e.g. `/api/v1/tasks`).
   */
  protected routes(app: FastifyInstance): void {
    const base = app.prefix;
    const actions = this.model.actions();
    const out = this.schemaOut;
    const tags = [...this.tags];
    const params = Type.Object({ id: this.idSchema() });
    const onRequest = rejectReservedIds(this.reservedIds());
    // What the OpenAPI document says of each route (bodies, responses, statuses), read from this router.
    const resource = {
      entity: this.model.name,
      name: this.model.tableName,
      tags,
      createSchema: this.createSchema,
      updateSchema: this.updateSchema,
      schemaOut: out,
      id: params.properties.id,
    };
    const documented = (operation: ResourceOperation) => resourceRouteConfig(operation, resource);
    const expose = (source: SchemaSource): SchemaSource | undefined => (this.exposeSchemas ? source : undefined);
    const outSchema: SchemaSource = (ctx) => ({
      schema: out.jsonSchema(ctx),
      restrictedFields: out.restrictedFieldsFor(ctx),
    });

    app.route(
      CoreAPIRoute({
        method: 'POST',
        url: '/',
        action: actions.CREATE,
        config: documented('create'),
        schema: { tags, summary: `Create one ${this.model.name}`, querystring: SchemaOnlyQuery },
        exposeSchema: expose((ctx) => ({
          schema: this.createSchema.jsonSchema(ctx),
          restrictedFields: this.createSchema.restrictedFieldsFor(ctx),
        })),
        handler: async (request) => {
          const ctx = getContext();
          const input = this.createSchema.parse(request.body, ctx, { mode: 'create' }) as C;
          const row = await this.resolveService().create(input);
          return new CoreJSONResponse(row, {
            status: 201,
            serializeData: out.serializer(ctx),
            headers: { location: `${base}/${String(row[this.primaryKey()])}` },
          });
        },
      }),
    );

    app.route(
      CoreAPIRoute({
        method: 'GET',
        url: '/:id',
        onRequest,
        action: actions.VIEW,
        config: documented('get'),
        schema: { tags, summary: `Get one ${this.model.name}`, params, querystring: ViewQuerySchema },
        exposeSchema: expose(outSchema),
        handler: async (request) => {
          const { id } = request.params as IdParams;
          const service = this.resolveService();
          const include = includeOf(request);
          let row: OutputRow;
          let tag: string | null = null;
          try {
            // The tag is read before the row: a tag older than its row can only cause a needless 412.
            if (service.etag) tag = await service.etag(id, { include });
            row = await service.get(id, { include });
          } catch (error) {
            throw atUrl(error, VIEW_URL);
          }
          return new CoreJSONResponse(row, { serializeData: out.serializer(getContext()), ...etagHeader(tag) });
        },
      }),
    );

    // What a replace may reset: the fields of the update schema. A field it does not declare (one that
    // may be set on create only, say) keeps its stored value, as a restricted field does.
    const replaced = Object.keys(this.updateSchema.fields.properties);
    for (const [method, mode] of [
      ['PUT', 'replace'],
      ['PATCH', 'patch'],
    ] as const) {
      app.route(
        CoreAPIRoute({
          method,
          url: '/:id',
          onRequest,
          action: actions.UPDATE,
          config: documented(mode === 'replace' ? 'replace' : 'update'),
          schema: {
            tags,
            summary: `${mode === 'replace' ? 'Replace' : 'Update part of'} one ${this.model.name}`,
            params,
            querystring: SchemaOnlyQuery,
          },
          exposeSchema: expose((ctx) => ({
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
        }),
      );
    }

    app.route(
      CoreAPIRoute({
        method: 'DELETE',
        url: '/:id',
        onRequest,
        action: actions.DELETE,
        config: documented('delete'),
        schema: { tags, summary: `Delete one ${this.model.name}`, params },
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
      }),
    );

    app.route(
      CoreAPIRoute({
        method: 'GET',
        url: '/',
        action: actions.LISTVIEW,
        config: documented('list'),
        schema: { tags, summary: `List ${this.model.tableName}`, querystring: ListQuerySchema },
        exposeSchema: expose(outSchema),
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
      }),
    );

    app.route(
      CoreAPIRoute({
        method: 'POST',
        url: '/search',
        action: actions.LISTVIEW,
        config: documented('search'),
        schema: { tags, summary: `Search ${this.model.tableName}`, querystring: SchemaOnlyQuery },
        exposeSchema: expose((ctx) => ({
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
      }),
    );
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

/** The `If-Match` header's text (repeated headers joined, as a list); undefined when absent. */
function ifMatchOf(request: FastifyRequest): string | undefined {
  const header = request.headers['if-match'];
  return Array.isArray(header) ? header.join(', ') : header;
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
