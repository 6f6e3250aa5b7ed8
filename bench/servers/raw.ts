/**
 * The floor and the raw baseline on SQLite: Fastify 5 + better-sqlite3 prepared statements, no ORM, no
 * DI, no context. As the floor (`BENCH_AUTH=none`, `LOG_LEVEL=silent`) it has no auth and no logger:
 * what this stack costs with nothing on top. As `raw` it adds the JWT check and the policies.
 *
 * Handlers are synchronous (better-sqlite3 is) and return nothing: Fastify sends what `reply.send` got.
 *
 * Per request it does the same *work* as Core, minus the framework layers:
 * - Fastify routing, Ajv validation of params/query/body (uuid format of `:id`, limit bounds, the create
 *   body with defaults), one pino log line per request at info (see common.ts);
 * - (raw only) HS256 JWT verification with fast-jwt (its built-in token cache on), roles → permissions and
 *   restricted fields from policies.json, the route's permission check, `Vary` for restricted callers;
 * - one prepared statement per request (cached by SQL text; the restricted variant leaves
 *   `assignee_email` out of the SELECT), `limit + 1` rows to know `has_more`;
 * - the envelope through a fast-json-stringify response schema (booleans written from SQLite's 0/1);
 * - cursors are base64url JSON of the last row's sort values (Core's are signed with HMAC-SHA256 and
 *   bound to the sort and filters: work this baseline does not do);
 * - search: `eq` / `ilike` / `and` / `or` on whitelisted columns, one sort key plus the id tiebreaker,
 *   `ilike` as Core writes it on SQLite (`c like +? escape '\'`, value escaped);
 * - `?include=project`: the same page with a left join on `projects`, nested per row; `?include=comments`:
 *   a second statement for the page's comments (`task_id in (…)`, by task then id), grouped per task;
 * - create: `insert … returning *` (one statement, SQLite ≥ 3.35), 201 + `Location`.
 */
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import {
  attachComments,
  BadSearch,
  CreateBodySchema,
  createApp,
  createAuth,
  decodeCursor,
  encodeCursor,
  installErrorHandler,
  isGroup,
  listen,
  ListQuerySchema,
  nestProject,
  normalizePriority,
  ok,
  OneTaskResponse,
  parseInclude,
  SearchBodySchema,
  serverEnv,
  sqlitePath,
  TASK_FIELDS,
  TaskListResponse,
  visibleFields,
  fail,
  type CreateBody,
  type ListQuery,
  type SearchBody,
  type SearchNode,
  type TaskField,
} from './common.js';

type Row = Record<string, unknown>;

const env = serverEnv();
const db = new Database(sqlitePath(env.databaseUrl));
db.pragma('journal_mode = WAL');

const statements = new Map<string, Database.Statement>();
function prepared(sql: string): Database.Statement {
  let stmt = statements.get(sql);
  if (!stmt) statements.set(sql, (stmt = db.prepare(sql)));
  return stmt;
}

function columns(fields: readonly TaskField[], table?: string): string {
  return fields.map((f) => (table ? `${table}."${f}"` : `"${f}"`)).join(', ');
}

const KIND: Record<TaskField, 'string' | 'boolean'> = {
  id: 'string',
  title: 'string',
  description: 'string',
  priority: 'string',
  is_completed: 'boolean',
  assignee_email: 'string',
  owner_id: 'string',
  project_id: 'string',
};

/** A page of rows from `limit + 1`; the cursor holds the sort values of the last row kept. */
function page(rows: Row[], limit: number, offset: number | null, cursorOf: (row: Row) => unknown[]) {
  const hasMore = rows.length > limit;
  if (hasMore) rows.length = limit;
  const last = rows[rows.length - 1];
  return {
    rows,
    meta: { limit, offset, next_cursor: hasMore && last ? encodeCursor(cursorOf(last)) : null, has_more: hasMore },
  };
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
  (request, reply) => {
    const caller = authorize(request, reply, 'tasks:view');
    if (!caller) return;
    const row = prepared(`select ${columns(visibleFields(caller))} from "tasks" where "id" = ?`).get(
      request.params.id.toLowerCase(),
    );
    if (!row) {
      fail(reply, 404, 'NOT_FOUND', `No tasks record with id ${request.params.id}`);
      return;
    }
    reply.send(ok(row));
  },
);

app.get<{ Querystring: ListQuery }>(
  '/tasks/',
  { schema: { querystring: ListQuerySchema, response: TaskListResponse } },
  (request, reply) => {
    const caller = authorize(request, reply, 'tasks:listview');
    if (!caller) return;
    const { limit = 50, offset, cursor } = request.query;
    if (offset !== undefined && cursor !== undefined) throw new BadSearch('send offset or cursor, not both');
    const include = parseInclude(request.query.include);
    const select = include.project
      ? `select ${columns(visibleFields(caller), 't')}, p."id" as "project.id", p."name" as "project.name" from "tasks" t left join "projects" p on p."id" = t."project_id"`
      : `select ${columns(visibleFields(caller), 't')} from "tasks" t`;
    let rows: Row[];
    if (cursor !== undefined) {
      const [after] = decodeCursor(cursor);
      if (typeof after !== 'string') throw new BadSearch('invalid cursor');
      rows = prepared(`${select} where t."id" > ? order by t."id" limit ?`).all(after, limit + 1) as Row[];
    } else {
      rows = prepared(`${select} order by t."id" limit ? offset ?`).all(limit + 1, offset ?? 0) as Row[];
    }
    const result = page(rows, limit, cursor !== undefined ? null : (offset ?? 0), (row) => [row['id']]);
    if (include.project) for (const row of result.rows) nestProject(row);
    if (include.comments && result.rows.length > 0) {
      const ids = result.rows.map((row) => row['id']);
      const sql = `select "id", "body", "task_id" from "comments" where "task_id" in (${ids.map(() => '?').join(', ')}) order by "task_id", "id"`;
      attachComments(result.rows, prepared(sql).all(...ids) as Row[]);
    }
    const paginated = request.query.limit !== undefined || offset !== undefined || cursor !== undefined;
    reply.send(ok(result.rows, paginated ? result.meta : null));
  },
);

/** Filter tree → SQL with `?`s (values pushed to `params`); restricted or unknown fields are refused. */
function where(nodes: readonly SearchNode[], join: 'and' | 'or', params: unknown[], restricted: Set<string>): string {
  if (nodes.length === 0) return join === 'and' ? '1 = 1' : '1 = 0';
  const parts = nodes.map((node) => {
    if (isGroup(node)) return `(${where(node.items, node.op, params, restricted)})`;
    const field = node.field as TaskField;
    if (!(TASK_FIELDS as readonly string[]).includes(field)) throw new BadSearch(`unknown field ${node.field}`);
    if (restricted.has(`tasks.${field}`)) throw new BadSearch(`restricted field ${node.field}`);
    if (node.op === 'eq') {
      if (node.value === null) return `"${field}" is null`;
      if (KIND[field] === 'boolean') {
        if (typeof node.value !== 'boolean') throw new BadSearch(`${field} needs a boolean`);
        params.push(node.value ? 1 : 0);
      } else {
        if (typeof node.value !== 'string') throw new BadSearch(`${field} needs a string`);
        params.push(node.value);
      }
      return `"${field}" = ?`;
    }
    if (node.op === 'ilike' && KIND[field] === 'string' && typeof node.value === 'string') {
      params.push(`%${node.value.replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
      return `"${field}" like +? escape '\\'`;
    }
    throw new BadSearch(`unsupported filter ${node.op} on ${node.field}`);
  });
  return parts.join(` ${join} `);
}

app.post<{ Body: SearchBody }>(
  '/tasks/search',
  { schema: { body: SearchBodySchema, response: TaskListResponse } },
  (request, reply) => {
    const caller = authorize(request, reply, 'tasks:listview');
    if (!caller) return;
    const { filters = [], sort = [], limit = 50, offset, cursor } = request.body;
    const params: unknown[] = [];
    const conditions = [where(filters, 'and', params, caller.restricted)];
    const key = sort[0];
    if (
      key &&
      (!(TASK_FIELDS as readonly string[]).includes(key.field) || caller.restricted.has(`tasks.${key.field}`))
    ) {
      throw new BadSearch(`cannot sort on ${key.field}`);
    }
    const desc = key?.order === 'desc';
    if (cursor !== undefined) {
      const values = decodeCursor(cursor);
      if (key) {
        conditions.push(`("${key.field}" ${desc ? '<' : '>'} ? or ("${key.field}" = ? and "id" > ?))`);
        params.push(values[0], values[0], values[1]);
      } else {
        conditions.push('"id" > ?');
        params.push(values[0]);
      }
    }
    const order =
      key && key.field !== 'id' ? `"${key.field}" ${desc ? 'desc' : 'asc'}, "id" asc` : `"id" ${desc ? 'desc' : 'asc'}`;
    const sql = `select ${columns(visibleFields(caller))} from "tasks" where ${conditions.join(' and ')} order by ${order} limit ? offset ?`;
    const rows = prepared(sql).all(...params, limit + 1, offset ?? 0) as Row[];
    const result = page(rows, limit, cursor !== undefined ? null : (offset ?? 0), (row) =>
      key ? [row[key.field], row['id']] : [row['id']],
    );
    const paginated = request.body.limit !== undefined || offset !== undefined || cursor !== undefined;
    reply.send(ok(result.rows, paginated ? result.meta : null));
  },
);

app.post<{ Body: CreateBody }>(
  '/tasks/',
  { schema: { body: CreateBodySchema, response: OneTaskResponse } },
  (request, reply) => {
    const caller = authorize(request, reply, 'tasks:create');
    if (!caller) return;
    const body = { ...request.body };
    for (const field of caller.restricted) delete (body as Record<string, unknown>)[field.slice('tasks.'.length)];
    // `.all`, not `.get`: `.get` leaves an `insert … returning` stepped only once, and the WAL is then
    // never checkpointed (350 MB after 4 s of creates, against 4 MB with `.all`), which spares this
    // server the checkpoints every real one pays for.
    const [row] = prepared(
      `insert into "tasks" ("id", "title", "description", "priority", "is_completed", "assignee_email") values (?, ?, ?, ?, 0, ?) returning ${columns(visibleFields(caller))}`,
    ).all(
      randomUUID(),
      body.title,
      body.description ?? null,
      normalizePriority(body.priority ?? 'medium'),
      body.assignee_email ?? null,
    ) as Row[];
    if (!row) throw new Error('insert … returning gave no row');
    reply
      .code(201)
      .header('location', `/tasks/${String(row['id'])}`)
      .send(ok(row));
  },
);

await listen(app, env, () => db.close());
