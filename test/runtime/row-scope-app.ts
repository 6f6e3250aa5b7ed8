/**
 * The row-scope suites' app: the generated relation-graph project (`fixtures/golden/relation-graph`)
 * with policies whose roles filter rows, driven through `app.inject`, once per database.
 *
 * Roles (`POLICIES`):
 * - `member` sees the projects it owns or whose name starts with "Public", the tasks of the projects
 *   it owns (a relation path), the comments it wrote (a field bound to the `sub` claim), and the labels
 *   whose colour is in its `colors` claim (an `in` with an array claim);
 * - `auditor` views every task, and filters nothing;
 * - `admin` may do everything and filters nothing.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { dbManager, loadSettings, type Database, type PolicyDocument, type QueryEvent } from '@core/runtime';
import { buildApp } from '../../fixtures/golden/relation-graph/expected/src/main.js';
import { callerOf, signClaimsWith } from '../helpers/callers.js';
import { describePerDatabase, type DatabaseName } from '../helpers/databases.js';

export const SECRET = 's'.repeat(48);

export type Json = Record<string, unknown>;

const CLAIM_SUB = { $claim: 'sub' };

export const POLICIES: PolicyDocument = {
  roles: {
    admin: { permissions: ['*'], restricted_fields: [] },
    member: {
      permissions: [
        'projects:view',
        'projects:listview',
        'projects:create',
        'projects:update',
        'tasks:*',
        'comments:*',
        'labels:view',
        'labels:listview',
        'users:view',
        'users:listview',
      ],
      restricted_fields: [],
      row_filters: {
        projects: [
          {
            op: 'or',
            items: [
              { field: 'owner_id', op: 'eq', value: CLAIM_SUB },
              { field: 'name', op: 'startswith', value: 'Public' },
            ],
          },
        ],
        tasks: [{ field: 'project.owner_id', op: 'eq', value: CLAIM_SUB }],
        comments: [{ field: 'author_id', op: 'eq', value: CLAIM_SUB }],
        labels: [{ field: 'color', op: 'in', value: { $claim: 'colors' } }],
      },
    },
    auditor: { permissions: ['tasks:view', 'tasks:listview'], restricted_fields: [] },
    anonymous: { permissions: [], restricted_fields: [] },
  },
};

/** The same roles without any row filter: what an app that filters nothing sends. */
export const UNFILTERED: PolicyDocument = {
  roles: Object.fromEntries(
    Object.entries(POLICIES.roles).map(([name, role]) => [
      name,
      { permissions: role.permissions, restricted_fields: role.restricted_fields },
    ]),
  ),
};

/** An HS256 token with exactly these claims (and `exp`), signed with the app's secret. */
export function signClaims(claims: Json): string {
  return signClaimsWith(SECRET, claims);
}

export const ADMIN = signClaims({ sub: 'root', roles: ['admin'] });

export interface ScopeApp {
  readonly dbName: DatabaseName;
  readonly app: FastifyInstance;
  readonly db: Database;
  /** `app.inject` with the token (none for null); an object payload is sent as JSON. */
  call(
    token: string | null,
    method: InjectOptions['method'],
    url: string,
    payload?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  /** As admin; throws unless the status is the expected one; returns `data`. */
  admin<T = Json>(method: InjectOptions['method'], url: string, payload?: unknown): Promise<T>;
  /** Runs `fn` and returns its result and every statement sent meanwhile (BEGIN and COMMIT included). */
  statements<T>(fn: () => Promise<T>): Promise<{ result: T; sql: QueryEvent[] }>;
  /** Rows read straight from the database, whatever any scope says. */
  rows(sql: string, params?: unknown[]): Promise<Json[]>;
}

/** Builds the app on `url` with a fresh schema and waits until it is ready. */
export async function startScopeApp(
  url: string,
  policies: PolicyDocument,
  configure?: (app: FastifyInstance) => void | Promise<void>,
): Promise<FastifyInstance> {
  const settings = loadSettings({
    env: { DATABASE_URL: url, ENVIRONMENT: 'test', SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
  });
  // buildApp reads the environment before applying `settings`: without a SECRET_KEY there it would warn.
  vi.stubEnv('SECRET_KEY', SECRET);
  let app: FastifyInstance | undefined;
  try {
    app = await buildApp({ settings, policies });
    await dbManager.db.resetSchema();
    await configure?.(app);
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

export function scopeApi(dbName: DatabaseName, app: FastifyInstance, db: Database): ScopeApp {
  const call: ScopeApp['call'] = callerOf(app);
  return {
    dbName,
    app,
    db,
    call,
    async admin<T>(method: InjectOptions['method'], url: string, payload?: unknown) {
      const res = await call(ADMIN, method, url, payload);
      const expected = method === 'POST' && !url.endsWith('/search') ? 201 : 200;
      if (res.statusCode !== expected) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json().data as T;
    },
    async statements(fn) {
      const sql: QueryEvent[] = [];
      const off = db.onQuery((q) => sql.push(q));
      try {
        return { result: await fn(), sql };
      } finally {
        off();
      }
    },
    rows: (sql, params = []) => db.select<Json>(sql, params),
  };
}

/** `describe` once per database with the app built from `policies` in `beforeAll`. */
export function describeScopeApp(
  title: string,
  policies: PolicyDocument,
  body: (ctx: ScopeApp) => void,
  configure?: (app: FastifyInstance) => void | Promise<void>,
): void {
  describePerDatabase(title, ({ name, url }) => {
    const ctx = {} as { -readonly [K in keyof ScopeApp]: ScopeApp[K] };
    beforeAll(async () => {
      const app = await startScopeApp(url(), policies, configure);
      Object.assign(ctx, scopeApi(name, app, dbManager.db));
    });
    afterAll(async () => {
      await ctx.app?.close();
      await dbManager.close();
    });
    body(ctx);
  });
}

/** Who holds which token, and the rows the suites look at. */
export interface World {
  users: { ann: Json; bob: Json; carol: Json };
  tokens: {
    /** member, sub = ann, colors red and green */
    ann: string;
    /** member, sub = bob, colors blue */
    bob: string;
    /** member and auditor, sub = carol: every task to view, only her own to change */
    carol: string;
    /** member without `sub` nor `colors` */
    nosub: string;
    /** member whose `colors` is a string, not the list `in` needs */
    oddColors: string;
  };
  /** apollo: ann's; borealis: bob's; square: bob's, public by name; nobody: no owner. */
  projects: { apollo: Json; borealis: Json; square: Json; nobody: Json };
  labels: { red: Json; green: Json; blue: Json };
  /** a1, a2 in apollo; b1 in borealis; b2 in the public square; n1 without a project. */
  tasks: { a1: Json; a2: Json; b1: Json; b2: Json; n1: Json };
  /** by ann on a1; by bob on a1; by bob on b1. */
  comments: { annOnA1: Json; bobOnA1: Json; bobOnB1: Json };
}

export async function seedWorld(ctx: ScopeApp, suffix = ''): Promise<World> {
  const user = (name: string) =>
    ctx.admin('POST', '/users/', { email: `${name}${suffix}@example.com`, name, password_hash: 'x' });
  const users = { ann: await user('ann'), bob: await user('bob'), carol: await user('carol') };
  const project = (name: string, owner: Json | null, points = 0) =>
    ctx.admin('POST', '/projects/', { name: `${name}${suffix}`, budget: points, owner_id: owner ? owner.id : null });
  const projects = {
    apollo: await project('Apollo', users.ann),
    borealis: await project('Borealis', users.bob),
    square: await project('Public square', users.bob),
    nobody: await project('Nobody', null),
  };
  const label = (color: string) => ctx.admin('POST', '/labels/', { name: `${color}${suffix}`, color });
  const labels = { red: await label('red'), green: await label('green'), blue: await label('blue') };
  const task = (title: string, proj: Json | null, points: number, tags: Json[] = []) =>
    ctx.admin('POST', '/tasks/', {
      title: `${title}${suffix}`,
      points,
      project_id: proj ? proj.id : null,
      tag_ids: tags.map((l) => l.id),
    });
  const tasks = {
    a1: await task('a1', projects.apollo, 3, [labels.red, labels.blue]),
    a2: await task('a2', projects.apollo, 1),
    b1: await task('b1', projects.borealis, 2, [labels.blue]),
    b2: await task('b2', projects.square, 4),
    n1: await task('n1', null, 5),
  };
  const comment = (text: string, on: Json, author: Json) =>
    ctx.admin('POST', '/comments/', { body: text, task_id: on.id, author_id: author.id });
  const comments = {
    annOnA1: await comment('ann on a1', tasks.a1, users.ann),
    bobOnA1: await comment('bob on a1', tasks.a1, users.bob),
    bobOnB1: await comment('bob on b1', tasks.b1, users.bob),
  };
  return {
    users,
    tokens: {
      ann: signClaims({ sub: users.ann.id, roles: ['member'], colors: ['red', 'green'] }),
      bob: signClaims({ sub: users.bob.id, roles: ['member'], colors: ['blue'] }),
      carol: signClaims({ sub: users.carol.id, roles: ['member', 'auditor'], colors: [] }),
      nosub: signClaims({ roles: ['member'] }),
      oddColors: signClaims({ sub: users.ann.id, roles: ['member'], colors: 'red' }),
    },
    projects,
    labels,
    tasks,
    comments,
  };
}

/** Ids of rows, sorted. */
export function ids(rows: readonly Json[]): string[] {
  return rows.map((r) => r.id as string).sort();
}

export const unknownId = (): string => randomUUID();

const INCIDENTAL = new Set(['date', 'connection', 'keep-alive']);

/** Status, headers (but the incidental ones) and body: what a client can tell apart. */
export function bytesOf(res: LightMyRequestResponse): { status: number; headers: Json; body: string } {
  const headers: Json = {};
  for (const [name, value] of Object.entries(res.headers)) if (!INCIDENTAL.has(name)) headers[name] = value;
  return { status: res.statusCode, headers, body: res.body };
}

/** The two answers are the same bytes, and a 404. */
export function expectSame404(hidden: LightMyRequestResponse, missing: LightMyRequestResponse): void {
  expect(missing.statusCode).toBe(404);
  expect(bytesOf(hidden)).toEqual(bytesOf(missing));
}
