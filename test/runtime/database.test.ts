import { describe, expect, it } from 'vitest';
import { Base, DatabaseManager, parseDatabaseUrl, UnitOfWork } from '@core/runtime';
import { fixtureEntities, Task } from '../../fixtures/models/index.js';
import { countQueries, describeEachDatabase } from '../helpers/databases.js';

describe('parseDatabaseUrl', () => {
  it.each([
    ['sqlite:./dev.db', { dialect: 'sqlite', dbName: './dev.db' }],
    ['sqlite:dev.db', { dialect: 'sqlite', dbName: 'dev.db' }],
    ['sqlite:///var/data/app.db', { dialect: 'sqlite', dbName: '/var/data/app.db' }],
    ['sqlite::memory:', { dialect: 'sqlite', dbName: ':memory:' }],
    ['postgresql://u:p@db:5432/app', { dialect: 'postgresql', clientUrl: 'postgresql://u:p@db:5432/app' }],
    ['postgres://u@db/app', { dialect: 'postgresql', clientUrl: 'postgres://u@db/app' }],
  ])('%s', (url, expected) => {
    expect(parseDatabaseUrl(url)).toEqual(expected);
  });

  it('rejects other schemes without echoing credentials', () => {
    expect(() => parseDatabaseUrl('mysql://root:hunter2@db/app')).toThrow(/Unsupported DATABASE_URL scheme "mysql".*postgresql:\/\//);
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

describeEachDatabase('reads racing a slow transaction', { entities: fixtureEntities }, (suite) => {
  it('never see the uncommitted row: they wait (SQLite) or see the last commit (PostgreSQL)', async () => {
    const count = async () => Number((await suite.db.select<{ n: number | string }>("select count(*) as n from tasks where title = 'racing'"))[0]!.n);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inserted!: () => void;
    const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
    const writer = UnitOfWork.run(
      async (uow) => {
        uow.em.create(Task, { title: 'racing' } as never);
        await uow.em.flush();
        inserted();
        await gate; // the transaction stays open, its row uncommitted
      },
      { db: suite.db },
    );
    await insertedSignal;
    let readWhileOpen: number | undefined;
    const reader = count().then((n) => {
      readWhileOpen ??= n;
      return n;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const finishedWhileOpen = readWhileOpen !== undefined;
    if (finishedWhileOpen) expect(readWhileOpen).toBe(0);
    open();
    await writer;
    const n = await reader;
    expect(finishedWhileOpen ? n === 0 : n === 1).toBe(true);
    expect(await count()).toBe(1);
  });
});
