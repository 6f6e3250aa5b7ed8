/**
 * Runs an access suite against a generated app (`fixtures/app`: users, projects, tasks; made by
 * `core startapp` from the manifests beside the code) once per database, through `app.inject`.
 *
 * `dbManager` and the container are process-wide, so one app lives at a time: each suite builds its
 * app in `beforeAll` and closes it (and the database) in `afterAll`; vitest runs a file's suites one
 * after another.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { dbManager, loadSettings, type Database, type PolicyDocument } from '@core/runtime';
import { buildApp } from './fixtures/app/src/main.js';
import { callerOf, signClaimsWith } from '../helpers/callers.js';
import { describePerDatabase, type DatabaseName } from '../helpers/databases.js';

export const SECRET = 'p'.repeat(48);

export type Json = Record<string, unknown>;

/**
 * The policies of the row-filter suites, read afresh on every call so a test may change its copy:
 * `member` sees its own tasks and the public or owned projects; `auditor` views every task; `lead`
 * views the tasks of the projects it owns (a relation path); `admin` has no filter.
 */
export function rowFilterPolicies(): PolicyDocument {
  return JSON.parse(readFileSync(new URL('./fixtures/row-filters.policies.json', import.meta.url), 'utf8'));
}

/**
 * An HS256 token signed with the app's secret carrying exactly these claims (plus `exp`): unlike
 * `signToken`, it can leave `sub` out or add claims of any name, which `$claim` values read.
 */
export function signClaims(claims: Json): string {
  return signClaimsWith(SECRET, claims);
}

export interface StartOptions {
  policies?: PolicyDocument;
  /** Runs after `buildApp`, before `ready()`: replace registrations, add routes. */
  configure?: (app: FastifyInstance) => void | Promise<void>;
}

/** Builds the fixture app on `databaseUrl` with a fresh schema and waits until it is ready. */
export async function startApp(databaseUrl: string, options: StartOptions = {}): Promise<FastifyInstance> {
  const settings = loadSettings({
    env: { DATABASE_URL: databaseUrl, ENVIRONMENT: 'test', SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
  });
  // buildApp reads the environment before applying `settings`: without a SECRET_KEY there it would warn.
  vi.stubEnv('SECRET_KEY', SECRET);
  let app: FastifyInstance | undefined;
  try {
    app = await buildApp({ settings, ...(options.policies ? { policies: options.policies } : {}) });
    await dbManager.db.resetSchema();
    await options.configure?.(app);
    await app.ready();
    return app;
  } catch (error) {
    await app?.close().catch(() => undefined);
    await dbManager.close();
    throw error;
  } finally {
    vi.unstubAllEnvs();
  }
}

export interface AccessApp {
  readonly dbName: DatabaseName;
  readonly app: FastifyInstance;
  readonly db: Database;
  /** `app.inject` with `Authorization: Bearer <token>` (none for `null`); objects are sent as JSON. */
  call(
    token: string | null,
    method: InjectOptions['method'],
    url: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  /** As admin; fails the test unless the status is `expected`; returns `data`. */
  admin<T = Json>(method: InjectOptions['method'], url: string, payload?: unknown, expected?: number): Promise<T>;
  /** The stored row, read straight from the database (undefined when absent). */
  row(table: string, id: string): Promise<Json | undefined>;
  /** Number of rows of a table, read straight from the database. */
  count(table: string): Promise<number>;
}

export const ADMIN = signClaims({ sub: 'admin', roles: ['admin'] });

export function describeAccessApp(
  title: string,
  options: { policies?: () => PolicyDocument; configure?: StartOptions['configure'] },
  body: (ctx: AccessApp) => void,
): void {
  describePerDatabase(title, ({ name: dbName, url }) => {
    const ctx = {} as { -readonly [K in keyof AccessApp]: AccessApp[K] };

    beforeAll(async () => {
      const app = await startApp(url(), {
        policies: (options.policies ?? rowFilterPolicies)(),
        ...(options.configure ? { configure: options.configure } : {}),
      });
      Object.assign(ctx, accessApi(dbName, app, dbManager.db));
    });

    afterAll(async () => {
      await ctx.app?.close();
      await dbManager.close();
    });

    body(ctx);
  });
}

function accessApi(dbName: DatabaseName, app: FastifyInstance, db: Database): AccessApp {
  const call: AccessApp['call'] = callerOf(app);
  return {
    dbName,
    app,
    db,
    call,
    async admin<T>(method: InjectOptions['method'], url: string, payload?: unknown, expected?: number) {
      const res = await call(ADMIN, method, url, payload);
      const want = expected ?? (method === 'POST' && !url.endsWith('/search') ? 201 : 200);
      if (res.statusCode !== want)
        throw new Error(`${method} ${url}: expected ${want}, got ${res.statusCode} ${res.body}`);
      return res.json().data as T;
    },
    async row(table, id) {
      const rows = await db.select<Json>(`select * from ${db.quote(table)} where ${db.quote('id')} = ?`, [id]);
      return rows[0];
    },
    async count(table) {
      const rows = await db.select<{ n: number | string }>(`select count(*) as n from ${db.quote(table)}`);
      return Number(rows[0]?.n);
    },
  };
}

/** The seeded data: who holds which token, and which rows each of them may see. */
export interface World {
  users: { alice: string; bob: string; carol: string };
  tokens: {
    /** member, `sub` = alice */
    alice: string;
    /** member, `sub` = bob */
    bob: string;
    /** member and auditor, `sub` = carol: tasks unfiltered for viewing, filtered for writing */
    carol: string;
    /** member without a `sub` claim */
    nosub: string;
    /** lead, `sub` = alice: the tasks of the projects alice owns */
    aliceLead: string;
  };
  /** alpha: alice's, private; bravo: bob's, private; delta: bob's, public; echo: nobody's, private. */
  projects: { alpha: Json; bravo: Json; delta: Json; echo: Json };
  tasks: Record<TaskKey, Json>;
  /** Task keys by owner. */
  owned: { alice: TaskKey[]; bob: TaskKey[] };
}

export type TaskKey = 'a1' | 'a2' | 'a3' | 'a4' | 'a5' | 'b1' | 'b2' | 'b3' | 'b4' | 'o1';

/** Project names chosen so that bravo sorts between alpha and delta. */
export const PROJECT_NAMES = {
  alpha: 'Alpha alice-private',
  bravo: 'Bravo bob-private-7f3a9c',
  delta: 'Delta bob-public',
  echo: 'Echo unowned-private',
};

/**
 * Seeds as admin: three users, four projects and ten tasks. Alice's a3 sits in bob's private project
 * and mentions it; bob's b3 sits in alice's project; o1 has no owner.
 */
export async function seedWorld(ctx: AccessApp): Promise<World> {
  const user = async (name: string) => (await ctx.admin('POST', '/users/', { name })).id as string;
  const users = { alice: await user('alice'), bob: await user('bob'), carol: await user('carol') };
  const project = (name: string, is_public: boolean, owner_id: string | null) =>
    ctx.admin('POST', '/projects/', { name, is_public, owner_id });
  const projects = {
    alpha: await project(PROJECT_NAMES.alpha, false, users.alice),
    bravo: await project(PROJECT_NAMES.bravo, false, users.bob),
    delta: await project(PROJECT_NAMES.delta, true, users.bob),
    echo: await project(PROJECT_NAMES.echo, false, null),
  };
  const spec: [TaskKey, string | null, Json | null, number, Json[]][] = [
    ['a1', users.alice, projects.alpha, 5, [projects.bravo, projects.delta]],
    ['a2', users.alice, projects.delta, 3, []],
    ['a3', users.alice, projects.bravo, 9, [projects.bravo]],
    ['a4', users.alice, null, 1, []],
    ['a5', users.alice, projects.alpha, 7, []],
    ['b1', users.bob, projects.bravo, 2, [projects.alpha]],
    ['b2', users.bob, projects.delta, 8, []],
    ['b3', users.bob, projects.alpha, 4, []],
    ['b4', users.bob, null, 6, []],
    ['o1', null, projects.echo, 10, []],
  ];
  const tasks = {} as Record<TaskKey, Json>;
  for (const [key, owner_id, proj, points, mentions] of spec) {
    const who = key.startsWith('a') ? 'alice' : key.startsWith('b') ? 'bob' : 'nobody';
    tasks[key] = await ctx.admin('POST', '/tasks/', {
      title: `${who} ${key}`,
      points,
      owner_id,
      project_id: proj ? proj.id : null,
      mention_ids: mentions.map((p) => p.id),
      assignee_email: `${key}@example.com`,
    });
  }
  return {
    users,
    tokens: {
      alice: signClaims({ sub: users.alice, roles: ['member'] }),
      bob: signClaims({ sub: users.bob, roles: ['member'] }),
      carol: signClaims({ sub: users.carol, roles: ['member', 'auditor'] }),
      nosub: signClaims({ roles: ['member'] }),
      aliceLead: signClaims({ sub: users.alice, roles: ['lead'] }),
    },
    projects,
    tasks,
    owned: { alice: ['a1', 'a2', 'a3', 'a4', 'a5'], bob: ['b1', 'b2', 'b3', 'b4'] },
  };
}

/** The ids of rows, sorted (for set comparisons). */
export function idSet(rows: readonly Json[]): string[] {
  return rows.map((r) => r.id as string).sort();
}

/** The ids of rows in answer order. */
export function idList(rows: readonly Json[]): string[] {
  return rows.map((r) => r.id as string);
}

/** A uuid no row has. */
export const unknownId = (): string => randomUUID();

/** Headers that differ between any two answers whatever they say. */
const INCIDENTAL = new Set(['date', 'connection', 'keep-alive']);

/** Status, headers (but the incidental ones) and body of an answer, for byte-for-byte comparison. */
export function answerBytes(res: LightMyRequestResponse): { status: number; headers: Json; body: string } {
  const headers: Json = {};
  for (const [name, value] of Object.entries(res.headers)) if (!INCIDENTAL.has(name)) headers[name] = value;
  return { status: res.statusCode, headers, body: res.body };
}

/** Asserts that two answers are the same bytes (status, headers that matter, body) and a 404. */
export function expectSame404(hidden: LightMyRequestResponse, missing: LightMyRequestResponse): void {
  expect(missing.statusCode).toBe(404);
  expect(answerBytes(hidden)).toEqual(answerBytes(missing));
  expect(hidden.json()).toMatchObject({ success: false, data: null, error: { code: 'NOT_FOUND' } });
}
