/**
 * Runs one suite on every database Core supports: embedded SQLite (in memory) and PostgreSQL.
 *
 * PostgreSQL comes from `CORE_TEST_PG_URL` (default: the local server on 127.0.0.1:5432, trust auth).
 * Each suite gets a database of its own, created here and dropped afterwards, so files run in parallel.
 * When PostgreSQL is unreachable, its suites are skipped with a printed reason — except in CI
 * (`CI=true`), where they fail: a green CI must mean both databases were tested.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { EntitySchema } from '@mikro-orm/core';
import type { Database, QueryEvent } from '@core/runtime';
import { DatabaseManager } from '../../runtime/src/db/database.js';

export type DatabaseName = 'sqlite' | 'postgresql';

export const PG_ADMIN_URL = process.env.CORE_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

async function probePostgres(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (err) {
    return `PostgreSQL unreachable at ${PG_ADMIN_URL.replace(/\/\/[^@]*@/, '//')}: ${(err as Error).message}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Null when PostgreSQL answers; otherwise why its suites skip (or fail, in CI). */
export const pgUnavailable = await probePostgres();

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Rows of one statement on the admin connection (e.g. `pg_stat_activity`, which sees every database). */
export async function pgAdminRows<R>(sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as R[];
  } finally {
    await client.end();
  }
}

/** A throwaway PostgreSQL database: its URL and a function that drops it. */
export async function createPgDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `core_t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => adminQuery(`drop database if exists ${name} with (force)`),
  };
}

export interface DatabaseSuite {
  readonly name: DatabaseName;
  /** The suite's database, initialised with a fresh schema before the suite's tests run. */
  readonly db: Database;
  readonly url: string;
}

export interface EachDatabaseOptions {
  entities: EntitySchema[];
  cursorSecret?: string;
}

export interface PerDatabase {
  readonly name: DatabaseName;
  /** The suite's database URL; usable from `beforeAll` on (hooks registered by the body run after it is created). */
  url(): string;
}

/**
 * `describe(title [db])` once per database, the one place that applies the PostgreSQL rule (skip with a
 * printed reason locally, fail in CI) and creates/drops the suite's throwaway PostgreSQL database.
 */
export function describePerDatabase(title: string, body: (db: PerDatabase) => void): void {
  for (const name of ['sqlite', 'postgresql'] as const) {
    const label = `${title} [${name}]`;
    if (name === 'postgresql' && pgUnavailable) {
      if (IN_CI) {
        describe(label, () => {
          it('needs PostgreSQL in CI', () => {
            throw new Error(`${pgUnavailable} — CI must run the PostgreSQL suites`);
          });
        });
      } else {
        console.warn(`[skip] ${label}: ${pgUnavailable}`);
        describe.skip(label, () => body({ name, url: () => '' }));
      }
      continue;
    }
    describe(label, () => {
      let url = 'sqlite::memory:';
      let drop: (() => Promise<void>) | undefined;
      // Registered first: runs before the body's beforeAll, and its afterAll (stack order) after theirs.
      beforeAll(async () => {
        if (name === 'postgresql') ({ url, drop } = await createPgDatabase());
      });
      afterAll(async () => {
        await drop?.();
      });
      body({ name, url: () => url });
    });
  }
}

/**
 * `describe` once per database. Inside, `suite.db` is ready (schema created) in every test and hook.
 */
export function describeEachDatabase(
  title: string,
  options: EachDatabaseOptions,
  body: (suite: DatabaseSuite) => void,
): void {
  describePerDatabase(title, (perDb) => {
    const manager = new DatabaseManager();
    const suite = { name: perDb.name, url: '' } as { name: DatabaseName; url: string; db: Database };
    beforeAll(async () => {
      suite.url = perDb.url();
      suite.db = await manager.initApp(suite.url, false, {
        entities: options.entities,
        cursorSecret: options.cursorSecret ?? 'test-cursor-secret-0123456789abcdef',
      });
      await suite.db.resetSchema();
    });
    afterAll(async () => {
      await manager.close();
    });
    body(suite);
  });
}

const NOISE = /^\s*(begin|commit|rollback|savepoint|release savepoint|pragma|set )/i;

/** Runs `fn` and returns its result with the data statements it sent (BEGIN/COMMIT and the like left out). */
export async function countQueries<T>(
  db: Database,
  fn: () => Promise<T>,
): Promise<{ result: T; queries: QueryEvent[] }> {
  const queries: QueryEvent[] = [];
  const off = db.onQuery((q) => {
    if (!NOISE.test(q.sql)) queries.push(q);
  });
  try {
    const result = await fn();
    return { result, queries };
  } finally {
    off();
  }
}
