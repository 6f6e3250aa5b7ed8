/**
 * What the baseline servers (raw.ts, raw-pg.ts, mikro.ts) share, written the way a careful hand-written
 * Fastify app would do it — no Core code:
 *
 * - **Logging**: Fastify's pino logger at `LOG_LEVEL` (default `info`), JSON to stdout (the bench sends
 *   it to /dev/null), one line per request at info from an `onResponse` hook (Fastify's own two
 *   per-request lines silenced), like Core's `RequestLogMiddleware`. `LOG_LEVEL=silent`: no logger.
 * - **Auth**: `Authorization: Bearer <jwt>` verified as HS256 with fast-jwt's synchronous verifier,
 *   with fast-jwt's own verified-token cache turned on (`cache: true`: the one-option speed-up any
 *   fast-jwt user gets; it SHA-256-hashes the token per lookup). Roles map through the fixture's
 *   `policies.json` (permissions: union; restricted fields: intersection) on every request; the
 *   permission check supports `*` and `<table>:*`. No token → 401, no permission → 403.
 * - **Envelope** `{ success, message, data, meta }` serialized by Fastify's response schema
 *   (fast-json-stringify). Fields are not required, so a column left out of the SELECT (a restricted
 *   field) is simply not written.
 * - Restricted callers get `Vary: Authorization, Cookie`, as Core does.
 * - `BENCH_AUTH=none` (the floor): no auth at all, every caller sees everything.
 */
import { readFileSync } from 'node:fs';
import { createVerifier } from 'fast-jwt';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

export interface ServerEnv {
  port: number;
  host: string;
  /** `sqlite:<path>` or `postgresql://…`, the same variable Core reads. */
  databaseUrl: string;
  secret: string;
  policiesPath: string;
  /** False for the floor (`BENCH_AUTH=none`): no token is read. */
  auth: boolean;
  /** Pino's level, or `silent` for no logger at all. */
  logLevel: string;
}

/** Reads the environment the bench gives every server. */
export function serverEnv(): ServerEnv {
  const need = (name: string): string => {
    const value = process.env[name];
    if (!value)
      throw new Error(`${name} is not set: the bench passes PORT, DATABASE_URL, SECRET_KEY and POLICIES_PATH`);
    return value;
  };
  return {
    port: Number(need('PORT')),
    host: process.env['HOST'] ?? '127.0.0.1',
    databaseUrl: need('DATABASE_URL'),
    secret: need('SECRET_KEY'),
    policiesPath: need('POLICIES_PATH'),
    auth: process.env['BENCH_AUTH'] !== 'none',
    logLevel: process.env['LOG_LEVEL'] ?? 'info',
  };
}

/** The file of a `sqlite:<path>` URL; anything else is a bench wiring error. */
export function sqlitePath(databaseUrl: string): string {
  if (!databaseUrl.startsWith('sqlite:')) throw new Error(`expected DATABASE_URL=sqlite:<path>, got ${databaseUrl}`);
  return databaseUrl.slice('sqlite:'.length);
}

export function isPostgres(databaseUrl: string): boolean {
  return /^postgres(ql)?:\/\//.test(databaseUrl);
}

/** The output fields, in Core's order; none required so left-out (restricted) columns are skipped. */
export const TASK_FIELDS = [
  'id',
  'title',
  'description',
  'priority',
  'is_completed',
  'assignee_email',
  'owner_id',
  'project_id',
] as const;
export type TaskField = (typeof TASK_FIELDS)[number];

/** A task; `project` and `comments` are written only when the row carries them (`?include=`). */
const TaskJson = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    title: { type: 'string' },
    description: { type: ['string', 'null'] },
    priority: { type: 'string' },
    is_completed: { type: 'boolean' },
    assignee_email: { type: ['string', 'null'] },
    owner_id: { type: ['string', 'null'] },
    project_id: { type: ['string', 'null'] },
    project: { type: ['object', 'null'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
    comments: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, body: { type: 'string' }, task_id: { type: 'string' } },
      },
    },
  },
} as const;

const PageMetaJson = {
  type: ['object', 'null'],
  properties: {
    limit: { type: 'integer' },
    offset: { type: ['integer', 'null'] },
    next_cursor: { type: ['string', 'null'] },
    has_more: { type: 'boolean' },
  },
} as const;

function envelope(data: object): object {
  return {
    type: 'object',
    properties: { success: { type: 'boolean' }, message: { type: 'string' }, data, meta: PageMetaJson },
  };
}

export const OneTaskResponse = { 200: envelope(TaskJson), 201: envelope(TaskJson) };
export const TaskListResponse = { 200: envelope({ type: 'array', items: TaskJson }) };

export interface PageMeta {
  limit: number;
  offset: number | null;
  next_cursor: string | null;
  has_more: boolean;
}

export function ok(
  data: unknown,
  meta: PageMeta | null = null,
): { success: true; message: string; data: unknown; meta: PageMeta | null } {
  return { success: true, message: 'Success', data, meta };
}

export function fail(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).send({ success: false, message, data: null, error: { code, details: [] } });
}

/** Fastify's per-request "incoming request" / "request completed" lines, replaced by one line below. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(): void {}
}

/** A Fastify app with the logging described above (none at `silent`). */
export function createApp(env: ServerEnv): FastifyInstance {
  if (env.logLevel === 'silent') {
    const app = Fastify({ logger: false });
    app.get('/health', async () => ({ status: 'ok' }));
    return app;
  }
  const app = Fastify({ logger: { level: env.logLevel }, logController: new OneLinePerRequest() });
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        path: request.url.split('?')[0],
        statusCode: reply.statusCode,
        durationMs: reply.elapsedTime,
      },
      'request completed',
    );
    done();
  });
  app.get('/health', async () => ({ status: 'ok' }));
  return app;
}

export interface Caller {
  sub: string | null;
  permissions: Set<string>;
  restricted: Set<string>;
}

interface RolePolicy {
  permissions: string[];
  restricted_fields: string[];
}

/**
 * Returns `authorize(request, reply, action)`: the caller, or null after sending 401/403. Same rules as
 * Core's policies: union of permissions, intersection of restrictions, unknown roles grant nothing.
 */
export function createAuth(
  env: ServerEnv,
): (request: FastifyRequest, reply: FastifyReply, action: string) => Caller | null {
  if (!env.auth) {
    const everyone: Caller = { sub: null, permissions: new Set(['*']), restricted: new Set() };
    return () => everyone;
  }
  const verify = createVerifier({ key: Buffer.from(env.secret, 'utf8'), algorithms: ['HS256'], cache: true });
  const roles = (JSON.parse(readFileSync(env.policiesPath, 'utf8')) as { roles: Record<string, RolePolicy> }).roles;

  return (request, reply, action) => {
    const header = request.headers.authorization;
    if (typeof header !== 'string' || !/^bearer /i.test(header)) {
      fail(reply, 401, 'UNAUTHENTICATED', 'Authentication is required.');
      return null;
    }
    let claims: { sub?: string; roles?: unknown };
    try {
      claims = verify(header.slice(7).trim()) as typeof claims;
    } catch {
      fail(reply, 401, 'UNAUTHENTICATED', 'The access token could not be verified.');
      return null;
    }
    const known = (Array.isArray(claims.roles) ? claims.roles : [])
      .map((r) => roles[String(r)])
      .filter((r): r is RolePolicy => r !== undefined);
    const permissions = new Set(known.flatMap((r) => r.permissions));
    const restricted = new Set(known[0]?.restricted_fields ?? []);
    for (const role of known.slice(1))
      for (const entry of restricted) if (!role.restricted_fields.includes(entry)) restricted.delete(entry);
    const colon = action.indexOf(':');
    if (!(permissions.has(action) || permissions.has('*') || permissions.has(`${action.slice(0, colon)}:*`))) {
      fail(reply, 403, 'FORBIDDEN', `Your roles do not grant "${action}".`);
      return null;
    }
    if (restricted.size > 0) reply.header('vary', 'Authorization, Cookie');
    return { sub: claims.sub ?? null, permissions, restricted };
  };
}

/** The output fields this caller may see (`tasks.<field>` entries hide a field). */
export function visibleFields(caller: Caller): TaskField[] {
  return caller.restricted.size === 0
    ? [...TASK_FIELDS]
    : TASK_FIELDS.filter((f) => !caller.restricted.has(`tasks.${f}`));
}

export const ListQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 500 },
    offset: { type: 'integer', minimum: 0 },
    cursor: { type: 'string', minLength: 1 },
    include: { type: 'string' },
  },
} as const;

export interface ListQuery {
  limit?: number;
  offset?: number;
  cursor?: string;
  include?: string;
}

/** The relations a list may embed: the many-to-one `project` and the one-to-many `comments`. */
export interface Includes {
  project: boolean;
  comments: boolean;
}

/** `?include=project,comments` → which to embed; anything else is the caller's error (422). */
export function parseInclude(include: string | undefined): Includes {
  const names = include ? include.split(',') : [];
  for (const name of names)
    if (name !== 'project' && name !== 'comments') throw new BadSearch(`unknown relation ${name}`);
  return { project: names.includes('project'), comments: names.includes('comments') };
}

/**
 * Moves the joined `project.id` / `project.name` columns of a row into `project` (null when the task
 * has none); the flat keys stay, the response schema does not write them.
 */
export function nestProject(row: Record<string, unknown>): void {
  const id = row['project.id'];
  row['project'] = id === null || id === undefined ? null : { id, name: row['project.name'] };
}

/** Gives each task its comments (`rows` sorted by task, then id), an empty list when it has none. */
export function attachComments(tasks: Record<string, unknown>[], comments: readonly Record<string, unknown>[]): void {
  const byTask = new Map<unknown, Record<string, unknown>[]>();
  for (const task of tasks) {
    const list: Record<string, unknown>[] = [];
    byTask.set(task['id'], list);
    task['comments'] = list;
  }
  for (const comment of comments) byTask.get(comment['task_id'])?.push(comment);
}

export const CreateBodySchema = {
  type: 'object',
  required: ['title'],
  additionalProperties: false,
  properties: {
    title: { type: 'string', maxLength: 255 },
    description: { type: ['string', 'null'], maxLength: 1024, default: null },
    priority: { type: 'string', maxLength: 50, default: 'medium' },
    assignee_email: { type: ['string', 'null'], maxLength: 255, default: null },
  },
} as const;

export interface CreateBody {
  title: string;
  description: string | null;
  priority: string;
  assignee_email: string | null;
}

/** The fixture service's rule: a priority other than low, medium or high becomes medium. */
export function normalizePriority(priority: string): string {
  return priority === 'low' || priority === 'medium' || priority === 'high' ? priority : 'medium';
}

/** Search filter leaves and groups, as in Core's search body. */
export interface SearchLeaf {
  field: string;
  op: string;
  value?: unknown;
}
export interface SearchGroup {
  op: 'and' | 'or';
  items: SearchNode[];
}
export type SearchNode = SearchLeaf | SearchGroup;
export interface SearchBody {
  filters?: SearchNode[];
  sort?: { field: string; order?: 'asc' | 'desc' }[];
  limit?: number;
  offset?: number;
  cursor?: string;
}

export const SearchBodySchema = {
  type: 'object',
  properties: {
    filters: { type: 'array' },
    sort: {
      type: 'array',
      maxItems: 1,
      items: {
        type: 'object',
        required: ['field'],
        properties: { field: { type: 'string' }, order: { enum: ['asc', 'desc'] } },
      },
    },
    limit: { type: 'integer', minimum: 1, maximum: 500 },
    offset: { type: 'integer', minimum: 0 },
    cursor: { type: 'string', minLength: 1 },
  },
} as const;

export function isGroup(node: SearchNode): node is SearchGroup {
  return (node.op === 'and' || node.op === 'or') && Array.isArray((node as SearchGroup).items);
}

/** A bad search → 422 (thrown, mapped by the servers' error handler). */
export class BadSearch extends Error {}

/** base64url JSON: the baseline's cursors are plain (Core's are signed with HMAC-SHA256 and bound to the sort and filters). */
export function encodeCursor(values: unknown[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor(cursor: string): unknown[] {
  try {
    const values: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(values)) return values;
  } catch {
    // fall through
  }
  throw new BadSearch('invalid cursor');
}

/** Answers `BadSearch` with 422 and anything else with 500, in the error envelope (returns nothing: the reply is sent). */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: { validation?: unknown; statusCode?: number; message?: string }, request, reply) => {
    if (error instanceof BadSearch || error.validation)
      fail(reply, 422, 'VALIDATION_ERROR', error.message ?? 'invalid');
    else if (error.statusCode && error.statusCode < 500)
      fail(reply, error.statusCode, 'BAD_REQUEST', error.message ?? 'bad request');
    else {
      request.log.error({ err: error }, 'request failed');
      fail(reply, 500, 'INTERNAL_ERROR', 'Internal error.');
    }
  });
}

/** Listens, and closes cleanly on SIGTERM/SIGINT (so `--cpu-prof` profiles get written). */
export async function listen(
  app: FastifyInstance,
  env: ServerEnv,
  onClose?: () => Promise<void> | void,
): Promise<void> {
  await app.listen({ host: env.host, port: env.port });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void app
        .close()
        .then(() => onClose?.())
        .finally(() => process.exit(0));
    });
  }
}
