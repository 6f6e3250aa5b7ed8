/**
 * Runs a suite against the generated relation-graph project (`fixtures/golden/relation-graph/expected`)
 * once per database, over real HTTP (`app.listen` on an ephemeral port + `fetch`). The app is the
 * generated code itself — its `buildApp` from `src/main.ts`, with the policies below in place of its
 * `policies.json`, since these tests need roles that restrict relations.
 */
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, vi } from 'vitest';
import { dbManager, loadSettings, signToken, type Database, type PolicyDocument, type QueryEvent } from '@core/runtime';
import { buildApp } from '../../fixtures/golden/relation-graph/expected/src/main.js';
import { countQueries, describePerDatabase, type DatabaseName } from '../helpers/databases.js';

export const SECRET = 'r'.repeat(48);

/**
 * `admin` sees everything; `noproject` may do everything but the task → project link is restricted;
 * `nobudget` may do everything but `projects.budget` is restricted wherever projects appear.
 */
export const POLICIES: PolicyDocument = {
  roles: {
    admin: { permissions: ['*'], restricted_fields: [] },
    noproject: { permissions: ['*'], restricted_fields: ['tasks.project'] },
    nobudget: { permissions: ['*'], restricted_fields: ['projects.budget'] },
    anonymous: { permissions: [], restricted_fields: [] },
  },
};

export type Role = 'admin' | 'noproject' | 'nobudget' | 'anonymous';

export type Json = Record<string, unknown>;

export interface HttpResult {
  status: number;
  body: { success: boolean; message: string; data: unknown; meta: unknown; error?: { code: string; details?: Json[] } };
  headers: Headers;
}

export interface RelationApp {
  readonly dbName: DatabaseName;
  readonly app: FastifyInstance;
  readonly db: Database;
  readonly baseUrl: string;
  /** `fetch` as `role`; `body` is sent as JSON. */
  call(role: Role, method: string, path: string, body?: unknown): Promise<HttpResult>;
  /** As admin; throws unless the status is `expected`; returns `data`. */
  ok<T = Json>(method: string, path: string, body?: unknown, expected?: number): Promise<T>;
  /** Runs `fn` and returns its result plus the data statements sent meanwhile (BEGIN/COMMIT left out). */
  countSql<T>(fn: () => Promise<T>): Promise<{ result: T; sql: QueryEvent[] }>;
  /** Number of rows of a table. */
  count(table: string): Promise<number>;
}

/** Children first, so foreign keys never block the cleanup. */
const TABLES = ['comments', 'tasks_labels', 'tasks', 'labels', 'projects', 'profiles', 'users'];

export function describeRelationApp(title: string, body: (ctx: RelationApp) => void): void {
  describePerDatabase(title, ({ name: dbName, url }) => {
    const ctx = {} as { -readonly [K in keyof RelationApp]: RelationApp[K] };
    let pivot: string | undefined;

    beforeAll(async () => {
      const settings = loadSettings({
        env: { DATABASE_URL: url(), ENVIRONMENT: 'test', SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
      });
      // buildApp reads the environment before applying `settings`: without a SECRET_KEY there it would warn.
      vi.stubEnv('SECRET_KEY', SECRET);
      let app: FastifyInstance;
      try {
        app = await buildApp({ settings, policies: POLICIES });
      } finally {
        vi.unstubAllEnvs();
      }
      await dbManager.db.resetSchema();
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as AddressInfo;
      Object.assign(ctx, relationApi(dbName, app, dbManager.db, `http://127.0.0.1:${port}`));
      // The pivot's name is MikroORM's choice: read it from the metadata rather than guessing.
      pivot = dbManager.db.orm.getMetadata().get('Task').properties.labels?.pivotTable;
    });

    afterAll(async () => {
      await ctx.app?.close();
      await dbManager.close();
    });

    beforeEach(async () => {
      const conn = ctx.db.orm.em.fork().getConnection();
      for (const table of TABLES.map((t) => (t === 'tasks_labels' ? pivot : t))) {
        if (table) await conn.execute(`delete from ${table}`);
      }
    });

    body(ctx);
  });
}

function relationApi(dbName: DatabaseName, app: FastifyInstance, db: Database, baseUrl: string): RelationApp {
  const tokens = new Map<Role, string>();
  const auth = (role: Role): Record<string, string> => {
    if (role === 'anonymous') return {};
    let token = tokens.get(role);
    if (token === undefined) tokens.set(role, (token = signToken({ sub: role, roles: [role] }, SECRET)));
    return { authorization: `Bearer ${token}` };
  };
  const call = async (role: Role, method: string, path: string, body?: unknown): Promise<HttpResult> => {
    const headers: Record<string, string> = auth(role);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
  return {
    dbName,
    app,
    db,
    baseUrl,
    call,
    async ok<T>(
      method: string,
      path: string,
      body?: unknown,
      expected = method === 'POST' && !path.endsWith('/search') ? 201 : 200,
    ) {
      const res = await call('admin', method, path, body);
      if (res.status !== expected)
        throw new Error(`${method} ${path}: expected ${expected}, got ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data as T;
    },
    async countSql(fn) {
      const { result, queries } = await countQueries(db, fn);
      return { result, sql: queries };
    },
    async count(table) {
      const rows = await db.select<{ n: number | string }>(`select count(*) as n from ${table}`);
      return Number(rows[0]?.n);
    },
  };
}

/** A small graph: a user with a profile, a project they own, labels, tasks with comments. */
export interface Graph {
  user: Json;
  profile: Json;
  project: Json;
  labels: Json[];
  task: Json;
  comments: Json[];
}

export async function seedGraph(ctx: RelationApp, suffix = ''): Promise<Graph> {
  const user = await ctx.ok('POST', '/users/', {
    email: `ann${suffix}@example.com`,
    name: `Ann${suffix}`,
    password_hash: 'x',
  });
  const profile = await ctx.ok('POST', '/profiles/', { bio: 'hello', user_id: user.id });
  const project = await ctx.ok('POST', '/projects/', { name: `Apollo${suffix}`, budget: 1000, owner_id: user.id });
  const labels = [
    await ctx.ok('POST', '/labels/', { name: `bug${suffix}`, color: 'red' }),
    await ctx.ok('POST', '/labels/', { name: `ui${suffix}`, color: 'green' }),
  ];
  const task = await ctx.ok('POST', '/tasks/', {
    title: `T${suffix}`,
    project_id: project.id,
    tag_ids: labels.map((l) => l.id),
  });
  const comments = [
    await ctx.ok('POST', '/comments/', { body: 'first', task_id: task.id, author_id: user.id }),
    await ctx.ok('POST', '/comments/', { body: 'second', task_id: task.id }),
  ];
  return { user, profile, project, labels, task, comments };
}
