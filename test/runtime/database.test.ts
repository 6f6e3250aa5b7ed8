import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Base, UnitOfWork, type Database } from '@core/runtime';
import { DatabaseManager, parseDatabaseUrl, WRITER_CACHE_KIB } from '../../runtime/src/db/database.js';
import { fixtureEntities, Task } from '../../fixtures/models/index.js';
import { countQueries, describeEachDatabase, describePerDatabase, pgAdminRows } from '../helpers/databases.js';

describe('parseDatabaseUrl', () => {
  it.each([
    ['sqlite:./dev.db', { dialect: 'sqlite', dbName: './dev.db' }],
    ['sqlite:dev.db', { dialect: 'sqlite', dbName: 'dev.db' }],
    ['sqlite:///var/data/app.db', { dialect: 'sqlite', dbName: '/var/data/app.db' }],
    ['sqlite::memory:', { dialect: 'sqlite', dbName: ':memory:' }],
    [
      'postgresql://u:p@db:5432/app',
      { dialect: 'postgresql', clientUrl: 'postgresql://u:p@db:5432/app', preparedStatements: true },
    ],
    ['postgres://u@db/app', { dialect: 'postgresql', clientUrl: 'postgres://u@db/app', preparedStatements: true }],
    // Core's own parameter is taken out; the driver's stay.
    [
      'postgresql://u:p@db/app?prepared_statements=false',
      { dialect: 'postgresql', clientUrl: 'postgresql://u:p@db/app', preparedStatements: false },
    ],
    [
      'postgresql://u:p%40ss@db/app?sslmode=disable&prepared_statements=true&application_name=shop',
      {
        dialect: 'postgresql',
        clientUrl: 'postgresql://u:p%40ss@db/app?sslmode=disable&application_name=shop',
        preparedStatements: true,
      },
    ],
  ])('%s', (url, expected) => {
    expect(parseDatabaseUrl(url)).toEqual(expected);
  });

  it('refuses a prepared_statements value other than true or false, without echoing credentials', () => {
    expect(() => parseDatabaseUrl('postgresql://u:hunter2@db/app?prepared_statements=no')).toThrow(
      /prepared_statements must be true or false, not "no"/,
    );
    expect(() => parseDatabaseUrl('postgresql://u:hunter2@db/app?prepared_statements=no')).not.toThrow(/hunter2/);
  });

  it('rejects other schemes without echoing credentials', () => {
    expect(() => parseDatabaseUrl('mysql://root:hunter2@db/app')).toThrow(
      /Unsupported DATABASE_URL scheme "mysql".*postgresql:\/\//,
    );
    expect(() => parseDatabaseUrl('mysql://root:hunter2@db/app')).not.toThrow(/hunter2/);
    expect(() => parseDatabaseUrl('sqlite:')).toThrow(/names no file/);
  });
});

describe('Base', () => {
  it('derives permission actions from the table name', () => {
    expect(Task.actions()).toEqual({
      CREATE: 'tasks:create',
      VIEW: 'tasks:view',
      UPDATE: 'tasks:update',
      DELETE: 'tasks:delete',
      LISTVIEW: 'tasks:listview',
    });
  });

  it('refuses a model without a table name', () => {
    class Nameless extends Base {}
    expect(() => Nameless.actions()).toThrow(/tableName/);
  });
});

describe('dbManager.initApp echo', () => {
  it('logs every statement through the given logger only when echo is on', async () => {
    for (const echo of [true, false]) {
      const lines: unknown[] = [];
      const logger = { debug() {}, warn() {}, error() {}, info: (obj: unknown) => lines.push(obj) };
      const manager = new DatabaseManager();
      const db = await manager.initApp('sqlite::memory:', echo, { entities: fixtureEntities, logger });
      await db.resetSchema();
      await db.select('select count(*) as n from tasks');
      await manager.close();
      const sql = lines.map((l) => (l as { sql: string }).sql);
      if (echo) {
        expect(sql.some((s) => /create table/i.test(s))).toBe(true);
        expect(sql).toContain('select count(*) as n from tasks');
      } else {
        expect(lines).toEqual([]);
      }
    }
  });

  it('names the missing step when used before initApp', () => {
    expect(() => new DatabaseManager().db).toThrow(/initApp/);
  });
});

describeEachDatabase('Database.select', { entities: fixtureEntities }, (suite) => {
  it('returns plain rows and reports the statement once', async () => {
    const { result, queries } = await countQueries(suite.db, () =>
      suite.db.select<{ n: number | string }>('select count(*) as n from tasks where is_completed = ?', [false]),
    );
    expect(Number(result[0]!.n)).toBe(0);
    expect(queries).toHaveLength(1);
    expect(queries[0]!.source).toBe('read');
  });
});

describeEachDatabase('Database.select under errors and load', { entities: fixtureEntities }, (suite) => {
  it("rejects a failing read with the database's error, and keeps serving more reads at once than the pool holds", async () => {
    await expect(suite.db.select('select nope from no_such_table')).rejects.toThrow(/no_such_table/);
    await expect(suite.db.select('select count(*) as n from tasks where title = ?', [1, 2])).rejects.toThrow();
    // More failures than the pool has connections (10): were a failed read's connection not given back,
    // none would be left and the reads below would queue forever.
    for (let i = 0; i < 12; i++)
      await expect(suite.db.select('select nope from no_such_table')).rejects.toThrow(/no_such_table/);
    const counts = await within(
      5000,
      Promise.all(
        Array.from({ length: 50 }, () => suite.db.select<{ n: number | string }>('select count(*) as n from tasks')),
      ),
    );
    expect(counts.map((rows) => Number(rows[0]!.n))).toEqual(Array(50).fill(0));
  });
});

describePerDatabase('closing a PostgreSQL database', (perDb) => {
  it.skipIf(perDb.name !== 'postgresql')('ends every connection it opened, the read connections too', async () => {
    const url = perDb.url();
    const dbName = new URL(url).pathname.slice(1);
    const sessions = async () => {
      const rows = await pgAdminRows<{ n: string }>('select count(*) as n from pg_stat_activity where datname = $1', [
        dbName,
      ]);
      return Number(rows[0]!.n);
    };
    const manager = new DatabaseManager();
    const db = await manager.initApp(url, false, { entities: fixtureEntities });
    await db.resetSchema();
    await Promise.all(Array.from({ length: 5 }, () => db.select('select pg_sleep(0.05)')));
    expect(await sessions()).toBeGreaterThanOrEqual(2); // the reads held several connections at once
    await manager.close();
    for (let i = 0; i < 50 && (await sessions()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await sessions()).toBe(0);
  });
});

describePerDatabase('PostgreSQL reads outside a unit of work', (perDb) => {
  const pg = perDb.name === 'postgresql';
  /** A database on one read connection, so every read sees the session state the earlier ones left. */
  const open = async (manager: DatabaseManager, query = '') => {
    const db = await manager.initApp(perDb.url() + query, false, {
      entities: fixtureEntities,
      orm: { pool: { min: 0, max: 1 } },
    });
    await db.resetSchema();
    return db;
  };
  const prepared = async (db: Database) =>
    (await db.select<{ statement: string }>('select statement from pg_prepared_statements')).map(
      (row) => row.statement,
    );

  it.skipIf(!pg)('are prepared once per connection, under a name', async () => {
    const manager = new DatabaseManager();
    try {
      const db = await open(manager);
      for (let i = 0; i < 3; i++) await db.select('select count(*) as n from tasks where title = ?', [`t${i}`]);
      const statements = await prepared(db);
      expect(statements.filter((text) => text === 'select count(*) as n from tasks where title = $1')).toHaveLength(1);
    } finally {
      await manager.close();
    }
  });

  it.skipIf(!pg)('are not prepared with ?prepared_statements=false (for poolers that cannot keep them)', async () => {
    const manager = new DatabaseManager();
    try {
      const db = await open(manager, '?prepared_statements=false');
      for (let i = 0; i < 3; i++) await db.select('select count(*) as n from tasks where title = ?', [`t${i}`]);
      expect(await prepared(db)).toEqual([]);
    } finally {
      await manager.close();
    }
  });

  it.skipIf(!pg)('still answer when a migration changed the columns of a `select *` prepared before it', async () => {
    const manager = new DatabaseManager();
    try {
      const db = await open(manager);
      await db.connection.execute('create table notes (id integer primary key)');
      await db.connection.execute('insert into notes (id) values (1)');
      const read = () => db.select<Record<string, unknown>>('select * from notes where id = ?', [1]);
      expect(await read()).toEqual([{ id: 1 }]);
      await db.connection.execute('alter table notes add column extra integer');
      await db.connection.execute('update notes set extra = 7');
      // Prepared before the column existed: PostgreSQL refuses the old plan; the read runs unnamed instead.
      for (let i = 0; i < 2; i++) expect(await read()).toEqual([{ id: 1, extra: 7 }]);
    } finally {
      await manager.close();
    }
  });
});

describeEachDatabase('reads racing a slow transaction', { entities: fixtureEntities }, (suite) => {
  it('never see the uncommitted row: they wait (SQLite in memory) or see the last commit (PostgreSQL)', async () => {
    const count = async () =>
      Number(
        (await suite.db.select<{ n: number | string }>("select count(*) as n from tasks where title = 'racing'"))[0]!.n,
      );
    const writer = openWriter(suite.db, 'racing');
    await writer.inserted;
    let reader: Promise<number> | undefined;
    try {
      if (suite.name === 'postgresql') {
        // PostgreSQL reads on another pooled connection: it answers at once, from the last commit.
        expect(await count()).toBe(0);
      } else {
        // SQLite in memory has one connection, which the transaction holds: the read waits for the commit.
        let readWhileOpen: number | undefined;
        reader = count().then((n) => (readWhileOpen = n));
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(readWhileOpen).toBeUndefined();
      }
    } finally {
      writer.commit();
      await writer.done;
    }
    if (reader) expect(await reader).toBe(1);
    expect(await count()).toBe(1);
  });
});

/** A unit of work that inserts a task titled `title` and keeps its transaction open until `commit()`. */
function openWriter(db: Database, title: string, whileOpen?: () => Promise<void>) {
  let commit!: () => void;
  const gate = new Promise<void>((resolve) => (commit = resolve));
  let signal!: () => void;
  const inserted = new Promise<void>((resolve) => (signal = resolve));
  const done = UnitOfWork.run(
    async (uow) => {
      uow.em.create(Task, { title } as never);
      await uow.em.flush();
      await whileOpen?.();
      signal();
      await gate; // the transaction stays open, its row uncommitted
    },
    { db },
  );
  return { inserted, commit, done };
}

/** Fails instead of hanging when a read that must not wait does wait. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)),
  );
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Open file descriptors of this process on `file` or its -wal / -shm companions (Linux only). */
function handlesOn(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(file);
    } catch {
      return false; // closed since the listing
    }
  }).length;
}

describe('Database.select on a SQLite file', () => {
  const manager = new DatabaseManager();
  let dir: string;
  let file: string;
  let db: Database;
  const count = async (title: string) =>
    Number((await db.select<{ n: number }>('select count(*) as n from tasks where title = ?', [title]))[0]!.n);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'core-db-'));
    file = join(dir, 'app.db');
    db = await manager.initApp(`sqlite:${file}`, false, { entities: fixtureEntities });
    await db.resetSchema();
  });
  afterAll(async () => {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads outside a transaction at once, never the uncommitted row, and the committed one right after the commit', async () => {
    let insideUnit: { n: number; now: unknown } | undefined;
    const writer = openWriter(db, 'racing', async () => {
      // Inside the unit, reads run on its transaction: they see its own uncommitted row, and never synchronously.
      insideUnit = { n: await count('racing'), now: db.selectSync('select 1 as one') };
    });
    await writer.inserted;
    try {
      expect(insideUnit).toEqual({ n: 1, now: undefined });
      // Outside, the read-only connection answers while the transaction is open (no waiting), from the last commit.
      expect(await within(2000, count('racing'))).toBe(0);
      expect(db.selectSync<{ n: number }>("select count(*) as n from tasks where title = 'racing'")).toEqual([
        { n: 0 },
      ]);
    } finally {
      writer.commit();
      await writer.done;
    }
    expect(await count('racing')).toBe(1);
    expect(db.selectSync("select title from tasks where title = 'racing'")).toEqual([{ title: 'racing' }]);
  });

  it("builds each row as better-sqlite3's own rows: the same keys in the same order and the same values", async () => {
    const oracle = new BetterSqlite3(file, { readonly: true });
    try {
      const statements: [string, unknown[]][] = [
        // Duplicate names (the last value wins, at the first one's place), quotes, non-ASCII, an integer
        // name, null, a blob, a float.
        [
          `select 1 as "a", 'x' as "b""q", 2 as "a", 'é' as "ünï", 3 as "0", null as "n", x'00ff' as "bin", 1.5 as "f"`,
          [],
        ],
        // A name that is a setter in an object literal, as in better-sqlite3's own rows.
        ['select 4 as "__proto__", ? as "p"', ['q']],
        ['select title, is_completed from tasks where title = ?', ['none']],
      ];
      for (const [sql, params] of statements) {
        const expected = oracle.prepare(sql).all(...params) as Record<string, unknown>[];
        for (const rows of [
          db.selectSync<Record<string, unknown>>(sql, params)!,
          await UnitOfWork.run(() => db.select<Record<string, unknown>>(sql, params), { db }),
        ]) {
          expect(rows).toEqual(expected);
          expect(rows.map((row) => Object.keys(row))).toEqual(expected.map((row) => Object.keys(row)));
          expect(rows.map((row) => Object.getPrototypeOf(row))).toEqual(
            expected.map((row) => Object.getPrototypeOf(row)),
          );
        }
      }
    } finally {
      oracle.close();
    }
  });

  it('reads the columns a table has now through a cached `select *`, and the same ones through a column list', () => {
    const writer = new BetterSqlite3(file);
    try {
      writer.prepare('create table side (a integer, b text)').run();
      writer.prepare("insert into side values (1, 'one')").run();
      expect(db.selectSync('select * from side')).toEqual([{ a: 1, b: 'one' }]);
      expect(db.selectSync('select b, a from side')).toEqual([{ b: 'one', a: 1 }]);
      // SQLite prepares both cached statements again; only the `*` gains the column.
      writer.prepare("alter table side add column c text default 'new'").run();
      const all = db.selectSync<Record<string, unknown>>('select * from side')!;
      expect(all).toEqual([{ a: 1, b: 'one', c: 'new' }]);
      expect(Object.keys(all[0]!)).toEqual(['a', 'b', 'c']);
      expect(db.selectSync('select b, a from side')).toEqual([{ b: 'one', a: 1 }]);
    } finally {
      writer.prepare('drop table if exists side').run();
      writer.close();
    }
  });

  it('reports reads on the read-only connection to query listeners like any other', async () => {
    const { result, queries } = await countQueries(db, () =>
      db.select<{ n: number }>('select count(*) as n from tasks where is_completed = ?', [true]),
    );
    expect(result).toEqual([{ n: 0 }]);
    expect(queries).toEqual([
      { sql: 'select count(*) as n from tasks where is_completed = ?', params: [1], source: 'read' },
    ]);
  });

  it("keeps SQLite's stock page cache on the writer and better-sqlite3's larger one on the reader", async () => {
    // The writer's cache is what creates fill and the process keeps: bounded at 2 MB (WRITER_CACHE_KIB).
    const onWriter = await UnitOfWork.run((uow) => uow.query<{ cache_size: number }>('pragma cache_size'), { db });
    expect(onWriter).toEqual([{ cache_size: WRITER_CACHE_KIB }]);
    const onReader = db.selectSync<{ cache_size: number }>('pragma cache_size');
    expect(onReader?.[0]?.cache_size).toBeLessThan(WRITER_CACHE_KIB);
  });

  it('keeps serving cached statements across a schema reset', async () => {
    const sql = 'select title from tasks order by title';
    await UnitOfWork.run(
      (uow) => uow.em.insert(Task, { id: randomUUID(), title: 'before reset', created_at: new Date() } as never),
      { db },
    );
    expect(await db.select(sql)).toContainEqual({ title: 'before reset' });
    await db.resetSchema();
    expect(await db.select(sql)).toEqual([]);
    await UnitOfWork.run(
      (uow) => uow.em.insert(Task, { id: randomUUID(), title: 'after reset', created_at: new Date() } as never),
      { db },
    );
    expect(await db.select(sql)).toEqual([{ title: 'after reset' }]);
  });

  it.skipIf(!existsSync('/proc/self/fd'))('closes its read-only connection on close()', async () => {
    const other = await new DatabaseManager().initApp(`sqlite:${join(dir, 'closing.db')}`, false, {
      entities: fixtureEntities,
    });
    await other.resetSchema();
    const before = handlesOn(join(dir, 'closing.db'));
    await other.select('select count(*) as n from tasks');
    // The first read opened the read-only connection next to the writer's.
    expect(handlesOn(join(dir, 'closing.db'))).toBeGreaterThan(before);
    await other.close();
    expect(handlesOn(join(dir, 'closing.db'))).toBe(0);
  });
});
