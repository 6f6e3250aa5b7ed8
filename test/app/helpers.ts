/**
 * Runs an acceptance suite against the hand-written fixture app (`fixtures/apps/tasks/src/main.ts`)
 * once per database: embedded SQLite (in memory) and PostgreSQL (a throwaway database from
 * `createPgDatabase()`). PostgreSQL follows the rule of `test/helpers/databases.ts`: unreachable →
 * its suites are skipped with a printed reason locally, and fail in CI (`CI=true`).
 *
 * `dbManager` and `container` are process-wide, so one app lives at a time: each suite builds its app
 * in `beforeAll` and closes it (and the database) in `afterAll`; vitest runs a file's suites one after
 * another.
 */
import { afterAll, beforeAll, beforeEach, vi } from 'vitest';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import {
  dbManager,
  Kernel,
  loadSettings,
  signToken,
  type Database,
  type QueryEvent,
  type Settings,
} from '@core/runtime';
import { buildApp } from '../../fixtures/apps/tasks/src/main.js';
import { countQueries, describePerDatabase, type DatabaseName } from '../helpers/databases.js';

/** The fixture's secret: 48 characters, so settings load outside development. */
export const SECRET = 'k'.repeat(48);

export type Role = 'admin' | 'viewer' | 'editor' | 'anonymous';

export interface FixtureApp {
  readonly dbName: DatabaseName;
  /** Ready (`app.ready()` done) in every test. */
  readonly app: FastifyInstance;
  readonly settings: Settings;
  /** The kernel `buildApp` created (captured from `Kernel.prototype.setup`; `buildApp` does not expose it). */
  readonly kernel: Kernel;
  readonly db: Database;
  /** A token for these roles, signed with the app's secret. */
  token(roles: readonly string[], sub?: string): string;
  /** `Authorization: Bearer …` for one fixture role; no header for `anonymous`. */
  auth(role: Role): Record<string, string>;
  /** `app.inject` as `role` (JSON payloads get `content-type: application/json`). */
  request(role: Role, options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Creates a task as admin and returns its output object. */
  createTask(body: Record<string, unknown>): Promise<TaskJson>;
  /** Reads a task back as admin (`null` when absent). */
  readTask(id: string): Promise<TaskJson | null>;
  /** Number of rows in `tasks`. */
  countTasks(): Promise<number>;
  /** Runs `fn` and returns what it returned plus the data statements sent meanwhile. */
  countSql<T>(fn: () => Promise<T>): Promise<{ result: T; sql: QueryEvent[] }>;
}

export interface TaskJson {
  id: string;
  title: string;
  description: string | null;
  priority: string;
  is_completed: boolean;
  assignee_email?: string | null;
}

export interface FixtureAppOptions {
  /** Extra env for `loadSettings` (e.g. another `ENVIRONMENT`). */
  env?: Record<string, string>;
  /** Runs after `buildApp`, before `ready()`: add routes, hooks, routers. */
  configure?: (app: FastifyInstance) => void | Promise<void>;
  /** Delete every task before each test (default true). */
  cleanBetweenTests?: boolean;
}

/**
 * `describe(title [db])` once per database, with `ctx` filled in before the first test. Inside, `ctx`
 * is only usable in hooks and tests (it is populated in `beforeAll`).
 */
export function describeFixtureApp(
  title: string,
  body: (ctx: FixtureApp) => void,
  options: FixtureAppOptions = {},
): void {
  describePerDatabase(title, ({ name: dbName, url }) => {
    const ctx = {} as { -readonly [K in keyof FixtureApp]: FixtureApp[K] };

    beforeAll(async () => {
      const settings = loadSettings({
        env: { DATABASE_URL: url(), ENVIRONMENT: 'test', SECRET_KEY: SECRET, LOG_LEVEL: 'silent', ...options.env },
      });
      const setup = vi.spyOn(Kernel.prototype, 'setup');
      // buildApp reads the environment before applying `settings`: without a SECRET_KEY there it would warn.
      vi.stubEnv('SECRET_KEY', SECRET);
      let app: FastifyInstance;
      let kernel: unknown;
      try {
        app = await buildApp({ settings });
        kernel = setup.mock.contexts.at(-1);
      } finally {
        setup.mockRestore();
        vi.unstubAllEnvs();
      }
      if (!(kernel instanceof Kernel)) throw new Error('buildApp did not call kernel.setup(app)');
      await dbManager.db.resetSchema();
      await options.configure?.(app);
      await app.ready();
      Object.assign(ctx, fixtureApi(dbName, app, settings, kernel, dbManager.db));
    });

    afterAll(async () => {
      await ctx.app?.close();
      await dbManager.close();
    });

    if (options.cleanBetweenTests !== false) {
      beforeEach(async () => {
        await ctx.db.orm.em.fork().getConnection().execute('delete from tasks');
      });
    }

    body(ctx);
  });
}

function fixtureApi(
  dbName: DatabaseName,
  app: FastifyInstance,
  settings: Settings,
  kernel: Kernel,
  db: Database,
): FixtureApp {
  const tokens = new Map<string, string>();
  const token = (roles: readonly string[], sub = 'tester'): string => {
    const key = `${sub}|${roles.join(',')}`;
    let value = tokens.get(key);
    if (value === undefined) tokens.set(key, (value = signToken({ sub, roles }, settings.secretKey)));
    return value;
  };
  const auth = (role: Role): Record<string, string> =>
    role === 'anonymous' ? {} : { authorization: `Bearer ${token([role], role)}` };
  const request = (role: Role, options: InjectOptions): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = {
      ...auth(role),
      ...(options.headers as Record<string, string> | undefined),
    };
    if (
      typeof options.payload === 'object' &&
      options.payload !== null &&
      !Buffer.isBuffer(options.payload) &&
      !headers['content-type']
    ) {
      headers['content-type'] = 'application/json';
    }
    return app.inject({ ...options, headers });
  };
  return {
    dbName,
    app,
    settings,
    kernel,
    db,
    token,
    auth,
    request,
    async createTask(body) {
      const res = await request('admin', { method: 'POST', url: '/tasks/', payload: body });
      if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`);
      return res.json().data as TaskJson;
    },
    async readTask(id) {
      const res = await request('admin', { method: 'GET', url: `/tasks/${id}` });
      if (res.statusCode === 404) return null;
      if (res.statusCode !== 200) throw new Error(`read failed: ${res.statusCode} ${res.body}`);
      return res.json().data as TaskJson;
    },
    async countTasks() {
      const rows = await db.select<{ n: number | string }>('select count(*) as n from tasks');
      return Number(rows[0]?.n);
    },
    async countSql(fn) {
      const { result, queries } = await countQueries(db, fn);
      return { result, sql: queries };
    },
  };
}
