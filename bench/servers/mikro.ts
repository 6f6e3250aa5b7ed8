/**
 * The hand-written baseline: Fastify 5 + MikroORM 6.6.16, written the way the MikroORM docs suggest —
 * what a team without Core would build. The driver follows DATABASE_URL: better-sqlite for
 * `sqlite:<path>`, postgresql for `postgresql://…` (MikroORM's default pool: at most 10 connections).
 * - logging, JWT (fast-jwt, its cache on), policies, envelope and response schemas as in common.ts;
 * - `orm.em.fork()` per request, entities hydrated into the fork's identity map;
 * - restricted callers: partial loading (`fields`) leaves `assignee_email` out of the SELECT;
 * - list and search pages with `em.findByCursor` (`includeCount: false`; MikroORM's own base64url
 *   JSON cursors), offset pages with `em.find` + `Cursor.for` for `next_cursor`;
 * - search filters translated to a `FilterQuery`: `ilike` → `$ilike` on PostgreSQL; on SQLite, whose
 *   LIKE already ignores ASCII case and which has no ILIKE, `$like`. MikroORM cannot escape `%`/`_`,
 *   which the bench's value does not contain;
 * - create: `em.create` + `em.flush()` (one implicit transaction), 201 + `Location`.
 */
import { randomUUID } from 'node:crypto';
import { Cursor, defineEntity, MikroORM, p, QueryOrder, type FilterQuery, type InferEntity } from '@mikro-orm/core';
import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import {
  BadSearch,
  CreateBodySchema,
  createApp,
  createAuth,
  fail,
  installErrorHandler,
  isGroup,
  isPostgres,
  listen,
  ListQuerySchema,
  normalizePriority,
  ok,
  OneTaskResponse,
  SearchBodySchema,
  serverEnv,
  sqlitePath,
  TASK_FIELDS,
  TaskListResponse,
  visibleFields,
  type Caller,
  type CreateBody,
  type ListQuery,
  type SearchBody,
  type SearchNode,
  type TaskField,
} from './common.js';

const TaskEntity = defineEntity({
  name: 'Task',
  tableName: 'tasks',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => randomUUID()),
    title: p.string().length(255).index(),
    description: p.string().length(1024).nullable(),
    priority: p.string().length(50).default('medium'),
    is_completed: p.boolean().default(false),
    assignee_email: p.string().length(255).nullable(),
    owner_id: p.string().length(255).nullable(),
    // The foreign key as a plain column: this baseline reads and writes tasks only, never projects.
    project_id: p.uuid().nullable(),
  },
});
type Task = InferEntity<typeof TaskEntity>;

const env = serverEnv();
const postgres = isPostgres(env.databaseUrl);
const common = { entities: [TaskEntity], allowGlobalContext: false, forceUtcTimezone: true };
const orm = postgres
  ? await MikroORM.init({ ...common, driver: PostgreSqlDriver, clientUrl: env.databaseUrl })
  : await MikroORM.init({
      ...common,
      driver: BetterSqliteDriver,
      dbName: sqlitePath(env.databaseUrl),
      pool: {
        afterCreate: (conn: { pragma(s: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
          conn.pragma('journal_mode = WAL');
          done(null, conn);
        },
      },
    });
/** The operator a case-insensitive substring match needs on this database. */
const ilike = postgres ? '$ilike' : '$like';
const meta = orm.getMetadata().get<Task>('Task');

/** Partial loading for restricted callers; unrestricted callers load the whole entity. */
function fieldsFor(caller: Caller): { fields?: TaskField[] } {
  return caller.restricted.size === 0 ? {} : { fields: visibleFields(caller) };
}

const app = createApp(env);
const authorize = createAuth(env);
installErrorHandler(app);

app.get<{ Params: { id: string } }>(
  '/tasks/:id',
  {
    schema: {
      params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } } },
      response: OneTaskResponse,
    },
  },
  async (request, reply) => {
    const caller = authorize(request, reply, 'tasks:view');
    if (!caller) return reply;
    const em = orm.em.fork();
    const task = await em.findOne(TaskEntity, { id: request.params.id.toLowerCase() }, fieldsFor(caller) as never);
    if (!task) return fail(reply, 404, 'NOT_FOUND', `No tasks record with id ${request.params.id}`);
    return ok(task);
  },
);

const BY_ID = { id: QueryOrder.ASC } as const;

app.get<{ Querystring: ListQuery }>(
  '/tasks/',
  { schema: { querystring: ListQuerySchema, response: TaskListResponse } },
  async (request, reply) => {
    const caller = authorize(request, reply, 'tasks:listview');
    if (!caller) return reply;
    const { limit = 50, offset, cursor } = request.query;
    if (offset !== undefined && cursor !== undefined) throw new BadSearch('send offset or cursor, not both');
    const em = orm.em.fork();
    const paginated = request.query.limit !== undefined || offset !== undefined || cursor !== undefined;
    if (offset !== undefined) {
      const rows = await em.find(TaskEntity, {}, {
        orderBy: BY_ID,
        limit: limit + 1,
        offset,
        ...fieldsFor(caller),
      } as never);
      const hasMore = rows.length > limit;
      if (hasMore) rows.length = limit;
      const last = rows[rows.length - 1];
      const next = hasMore && last ? Cursor.for(meta, last, BY_ID) : null;
      return ok(rows, paginated ? { limit, offset, next_cursor: next, has_more: hasMore } : null);
    }
    const page = await em.findByCursor(TaskEntity, {}, {
      first: limit,
      ...(cursor !== undefined ? { after: cursor } : {}),
      orderBy: BY_ID,
      includeCount: false,
      ...fieldsFor(caller),
    } as never);
    const pageMeta = {
      limit,
      offset: cursor !== undefined ? null : 0,
      next_cursor: page.hasNextPage ? page.endCursor : null,
      has_more: page.hasNextPage,
    };
    return ok(page.items, paginated ? pageMeta : null);
  },
);

/** Filter tree → MikroORM FilterQuery; restricted or unknown fields are refused. */
function toFilter(nodes: readonly SearchNode[], restricted: Set<string>): FilterQuery<Task>[] {
  return nodes.map((node): FilterQuery<Task> => {
    if (isGroup(node))
      return { [node.op === 'and' ? '$and' : '$or']: toFilter(node.items, restricted) } as FilterQuery<Task>;
    if (!(TASK_FIELDS as readonly string[]).includes(node.field) || restricted.has(`tasks.${node.field}`)) {
      throw new BadSearch(`cannot filter on ${node.field}`);
    }
    if (node.op === 'eq') return { [node.field]: node.value } as FilterQuery<Task>;
    if (node.op === 'ilike' && typeof node.value === 'string')
      return { [node.field]: { [ilike]: `%${node.value}%` } } as FilterQuery<Task>;
    throw new BadSearch(`unsupported filter ${node.op} on ${node.field}`);
  });
}

app.post<{ Body: SearchBody }>(
  '/tasks/search',
  { schema: { body: SearchBodySchema, response: TaskListResponse } },
  async (request, reply) => {
    const caller = authorize(request, reply, 'tasks:listview');
    if (!caller) return reply;
    const { filters = [], sort = [], limit = 50, offset, cursor } = request.body;
    const where = { $and: toFilter(filters, caller.restricted) } as FilterQuery<Task>;
    const key = sort[0];
    if (
      key &&
      (!(TASK_FIELDS as readonly string[]).includes(key.field) || caller.restricted.has(`tasks.${key.field}`))
    ) {
      throw new BadSearch(`cannot sort on ${key.field}`);
    }
    const orderBy = {
      ...(key && key.field !== 'id' ? { [key.field]: key.order === 'desc' ? QueryOrder.DESC : QueryOrder.ASC } : {}),
      id: QueryOrder.ASC,
    };
    const em = orm.em.fork();
    const paginated = request.body.limit !== undefined || offset !== undefined || cursor !== undefined;
    if (offset !== undefined) {
      const rows = await em.find(TaskEntity, where, {
        orderBy,
        limit: limit + 1,
        offset,
        ...fieldsFor(caller),
      } as never);
      const hasMore = rows.length > limit;
      if (hasMore) rows.length = limit;
      const last = rows[rows.length - 1];
      return ok(
        rows,
        paginated
          ? { limit, offset, next_cursor: hasMore && last ? Cursor.for(meta, last, orderBy) : null, has_more: hasMore }
          : null,
      );
    }
    const page = await em.findByCursor(TaskEntity, where, {
      first: limit,
      ...(cursor !== undefined ? { after: cursor } : {}),
      orderBy,
      includeCount: false,
      ...fieldsFor(caller),
    } as never);
    const pageMeta = {
      limit,
      offset: cursor !== undefined ? null : 0,
      next_cursor: page.hasNextPage ? page.endCursor : null,
      has_more: page.hasNextPage,
    };
    return ok(page.items, paginated ? pageMeta : null);
  },
);

app.post<{ Body: CreateBody }>(
  '/tasks/',
  { schema: { body: CreateBodySchema, response: OneTaskResponse } },
  async (request, reply) => {
    const caller = authorize(request, reply, 'tasks:create');
    if (!caller) return reply;
    const body: Partial<CreateBody> = { ...request.body };
    for (const field of caller.restricted) delete body[field.slice('tasks.'.length) as keyof CreateBody];
    const em = orm.em.fork();
    const task = em.create(TaskEntity, {
      title: request.body.title,
      description: body.description ?? null,
      priority: normalizePriority(body.priority ?? 'medium'),
      assignee_email: body.assignee_email ?? null,
      owner_id: null,
      project_id: null,
    });
    await em.flush();
    return reply.code(201).header('location', `/tasks/${task.id}`).send(ok(task));
  },
);

await listen(app, env, () => orm.close(true));
