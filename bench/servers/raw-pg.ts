/**
 * The floor and the raw baseline on PostgreSQL: Fastify 5 + node-postgres (`pg`), no ORM, no DI, no
 * context. The same routes, checks and answers as raw.ts (read its header; the floor is this file with
 * `BENCH_AUTH=none` and `LOG_LEVEL=silent`), with these differences only:
 * - a `pg.Pool` of 10 connections (the size Core's and MikroORM's knex pools have by default);
 * - every statement is a named prepared statement (`{ name, text, values }`: parsed and planned once
 *   per connection, then only bound and executed), named per SQL text;
 * - PostgreSQL returns booleans as booleans and uuids as lower-case strings, so rows go out as read;
 * - `ilike` as Core writes it on PostgreSQL too (`lower(c) like lower($n) escape '\'`, value escaped);
 * - the page's comments with `task_id = any($1::uuid[])`;
 * - create: `insert … returning` with the columns the caller may see.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  attachComments,
  BadSearch,
  CreateBodySchema,
  createApp,
  createAuth,
  decodeCursor,
  encodeCursor,
  fail,
  installErrorHandler,
  isGroup,
  isPostgres,
  listen,
  ListQuerySchema,
  nestProject,
  normalizePriority,
  ok,
  OneTaskResponse,
  parseInclude,
  SearchBodySchema,
  serverEnv,
  TASK_FIELDS,
  TaskListResponse,
  visibleFields,
  type CreateBody,
  type ListQuery,
  type SearchBody,
  type SearchNode,
  type TaskField,
} from './common.js';

type Row = Record<string, unknown>;

const env = serverEnv();
if (!isPostgres(env.databaseUrl)) throw new Error(`raw-pg needs DATABASE_URL=postgresql://…, got ${env.databaseUrl}`);
const pool = new pg.Pool({ connectionString: env.databaseUrl, max: 10 });

/** One statement name per SQL text, so each connection prepares it once. */
const names = new Map<string, string>();
async function query(text: string, values: unknown[]): Promise<Row[]> {
  let name = names.get(text);
  if (!name) names.set(text, (name = `q${names.size + 1}`));
  return (await pool.query<Row>({ name, text, values })).rows;
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A cursor's id: a bad one is the caller's error (422), not a uuid cast failure in PostgreSQL. */
function cursorId(value: unknown): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw new BadSearch('invalid cursor');
  return value;
}

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
  async (request, reply) => {
    const caller = authorize(request, reply, 'tasks:view');
    if (!caller) return reply;
    const [row] = await query(`select ${columns(visibleFields(caller))} from "tasks" where "id" = $1`, [
      request.params.id.toLowerCase(),
    ]);
    if (!row) return fail(reply, 404, 'NOT_FOUND', `No tasks record with id ${request.params.id}`);
    return ok(row);
  },
);

app.get<{ Querystring: ListQuery }>(
  '/tasks/',
  { schema: { querystring: ListQuerySchema, response: TaskListResponse } },
  async (request, reply) => {
    const caller = authorize(request, reply, 'tasks:listview');
    if (!caller) return reply;
    const { limit = 50, offset, cursor } = request.query;
    if (offset !== undefined && cursor !== undefined) throw new BadSearch('send offset or cursor, not both');
    const include = parseInclude(request.query.include);
    const select = include.project
      ? `select ${columns(visibleFields(caller), 't')}, p."id" as "project.id", p."name" as "project.name" from "tasks" t left join "projects" p on p."id" = t."project_id"`
      : `select ${columns(visibleFields(caller), 't')} from "tasks" t`;
    const rows =
      cursor !== undefined
        ? await query(`${select} where t."id" > $1 order by t."id" limit $2`, [
            cursorId(decodeCursor(cursor)[0]),
            limit + 1,
          ])
        : await query(`${select} order by t."id" limit $1 offset $2`, [limit + 1, offset ?? 0]);
    const result = page(rows, limit, cursor !== undefined ? null : (offset ?? 0), (row) => [row['id']]);
    if (include.project) for (const row of result.rows) nestProject(row);
    if (include.comments && result.rows.length > 0) {
      const ids = result.rows.map((row) => row['id']);
      attachComments(
        result.rows,
        await query(
          'select "id", "body", "task_id" from "comments" where "task_id" = any($1::uuid[]) order by "task_id", "id"',
          [ids],
        ),
      );
    }
    const paginated = request.query.limit !== undefined || offset !== undefined || cursor !== undefined;
    return ok(result.rows, paginated ? result.meta : null);
  },
);

/** Filter tree → SQL with `$n`s (values pushed to `params`); restricted or unknown fields are refused. */
function where(nodes: readonly SearchNode[], join: 'and' | 'or', params: unknown[], restricted: Set<string>): string {
  if (nodes.length === 0) return join === 'and' ? 'true' : 'false';
  const parts = nodes.map((node) => {
    if (isGroup(node)) return `(${where(node.items, node.op, params, restricted)})`;
    const field = node.field as TaskField;
    if (!(TASK_FIELDS as readonly string[]).includes(field)) throw new BadSearch(`unknown field ${node.field}`);
    if (restricted.has(`tasks.${field}`)) throw new BadSearch(`restricted field ${node.field}`);
    if (node.op === 'eq') {
      if (node.value === null) return `"${field}" is null`;
      if (typeof node.value !== KIND[field]) throw new BadSearch(`${field} needs a ${KIND[field]}`);
      if (field === 'id' && !UUID.test(String(node.value))) throw new BadSearch('id needs a uuid');
      params.push(node.value);
      return `"${field}" = $${params.length}`;
    }
    if (node.op === 'ilike' && KIND[field] === 'string' && typeof node.value === 'string') {
      params.push(`%${node.value.replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
      return `lower("${field}") like lower($${params.length}) escape '\\'`;
    }
    throw new BadSearch(`unsupported filter ${node.op} on ${node.field}`);
  });
  return parts.join(` ${join} `);
}

app.post<{ Body: SearchBody }>(
  '/tasks/search',
  { schema: { body: SearchBodySchema, response: TaskListResponse } },
  async (request, reply) => {
    const caller = authorize(request, reply, 'tasks:listview');
    if (!caller) return reply;
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
      if (key && key.field !== 'id') {
        if (typeof values[0] !== KIND[key.field as TaskField]) throw new BadSearch('invalid cursor');
        params.push(values[0], cursorId(values[1]));
        const [value, id] = [`$${params.length - 1}`, `$${params.length}`];
        conditions.push(
          `("${key.field}" ${desc ? '<' : '>'} ${value} or ("${key.field}" = ${value} and "id" > ${id}))`,
        );
      } else {
        params.push(cursorId(values[0]));
        conditions.push(`"id" ${desc ? '<' : '>'} $${params.length}`);
      }
    }
    const order =
      key && key.field !== 'id' ? `"${key.field}" ${desc ? 'desc' : 'asc'}, "id" asc` : `"id" ${desc ? 'desc' : 'asc'}`;
    params.push(limit + 1, offset ?? 0);
    const sql = `select ${columns(visibleFields(caller))} from "tasks" where ${conditions.join(' and ')} order by ${order} limit $${params.length - 1} offset $${params.length}`;
    const rows = await query(sql, params);
    const result = page(rows, limit, cursor !== undefined ? null : (offset ?? 0), (row) =>
      key && key.field !== 'id' ? [row[key.field], row['id']] : [row['id']],
    );
    const paginated = request.body.limit !== undefined || offset !== undefined || cursor !== undefined;
    return ok(result.rows, paginated ? result.meta : null);
  },
);

app.post<{ Body: CreateBody }>(
  '/tasks/',
  { schema: { body: CreateBodySchema, response: OneTaskResponse } },
  async (request, reply) => {
    const caller = authorize(request, reply, 'tasks:create');
    if (!caller) return reply;
    const body = { ...request.body };
    for (const field of caller.restricted) delete (body as Record<string, unknown>)[field.slice('tasks.'.length)];
    const [row] = await query(
      `insert into "tasks" ("id", "title", "description", "priority", "is_completed", "assignee_email") values ($1, $2, $3, $4, false, $5) returning ${columns(visibleFields(caller))}`,
      [
        randomUUID(),
        body.title,
        body.description ?? null,
        normalizePriority(body.priority ?? 'medium'),
        body.assignee_email ?? null,
      ],
    );
    return reply
      .code(201)
      .header('location', `/tasks/${String(row!['id'])}`)
      .send(ok(row));
  },
);

await listen(app, env, () => pool.end());
