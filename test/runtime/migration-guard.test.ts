/**
 * The check the development loop runs before it applies migrations on its own (`core run`,
 * `core generate`): what the pending migrations would do to rows already in the database. Each case
 * creates a table from one version of a model, writes rows, then asks about the next version — on
 * SQLite (a file, so two connections see it) and PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EntitySchema, type EntitySchemaProperty } from '@mikro-orm/core';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { dataRisks, type DataRisk } from '../../runtime/src/migrations/guard.js';
import { describePerDatabase } from '../helpers/databases.js';
import { DatabaseManager } from '../../runtime/src/db/database.js';

type Properties = Record<string, Partial<EntitySchemaProperty<unknown, unknown>> & { type: string }>;

const ID: Properties = { id: { type: 'integer', primary: true, autoincrement: true } };

/** The `items` table as a model of these properties (a fresh class each time: versions do not mix). */
function items(properties: Properties): EntitySchema {
  return new EntitySchema({
    class: class Item {},
    name: 'Item',
    tableName: 'items',
    properties: { ...ID, ...properties } as never,
  });
}

/** A table the second version no longer has. */
const notes = new EntitySchema({
  class: class Note {},
  name: 'Note',
  tableName: 'notes',
  properties: { ...ID, text: { type: 'string', nullable: true } } as never,
});

interface Case {
  name: string;
  before: Properties;
  rows: Record<string, unknown>[];
  after: Properties;
  /** The pending migrations' text, for what only the SQL shows. */
  sql?: string[];
  /** Expected risks, as `target: change; rows` lines, per dialect when they differ. */
  risks: string[] | { sqlite: string[]; postgresql: string[] };
}

const title = (extra: object = {}) => ({ type: 'string', length: 100, nullable: true, ...extra });

const CASES: Case[] = [
  {
    name: 'a column dropped with values',
    before: { title: title() },
    rows: [{ title: 'a' }, { title: null }],
    after: {},
    risks: ['items.title: column dropped; 1 row holds a value'],
  },
  {
    name: 'a column dropped that only holds NULLs',
    before: { title: title() },
    rows: [{ title: null }],
    after: {},
    risks: [],
  },
  {
    name: 'a rename done as drop and add (the type changed too)',
    before: { title: title() },
    rows: [{ title: 'a' }, { title: 'b' }],
    after: { name: { type: 'text', nullable: true } },
    // Both are TEXT to SQLite: there MikroORM renames the column.
    risks: {
      sqlite: [],
      postgresql: [
        'items.title: column dropped while name is added (a rename done as drop and add); 2 rows hold a value',
      ],
    },
  },
  {
    name: 'a plain rename (MikroORM renames the column)',
    before: { title: title() },
    rows: [{ title: 'a' }],
    after: { name: title() },
    risks: [],
  },
  {
    name: 'nullable → NOT NULL with a NULL row',
    before: { title: title() },
    rows: [{ title: null }, { title: 'a' }],
    after: { title: title({ nullable: false }) },
    risks: ['items.title: becomes NOT NULL; 1 row is NULL'],
  },
  {
    name: 'nullable → NOT NULL without a NULL row',
    before: { title: title() },
    rows: [{ title: 'a' }],
    after: { title: title({ nullable: false }) },
    risks: [],
  },
  {
    name: 'max_length lowered under a stored value',
    before: { title: title() },
    rows: [{ title: 'x'.repeat(20) }, { title: 'short' }],
    after: { title: title({ length: 10 }) },
    // SQLite keeps no length: nothing is cut.
    risks: { sqlite: [], postgresql: ['items.title: shortened to 10 characters; 1 row holds a longer value'] },
  },
  {
    name: 'max_length lowered above every value',
    before: { title: title() },
    rows: [{ title: 'short' }],
    after: { title: title({ length: 10 }) },
    risks: [],
  },
  {
    name: 'an enum value in use removed',
    before: { status: { type: 'string', enum: true, items: ['open', 'doing', 'done'], nullable: true } },
    rows: [{ status: 'doing' }, { status: 'open' }, { status: null }],
    after: { status: { type: 'string', enum: true, items: ['open', 'done'], nullable: true } },
    // SQLite's CHECK constraint stays as it was until the table is copied (below).
    risks: { sqlite: [], postgresql: ["items.status: allows only 'open', 'done'; 1 row holds another value"] },
  },
  {
    name: 'an enum value nobody uses removed',
    before: { status: { type: 'string', enum: true, items: ['open', 'doing', 'done'], nullable: true } },
    rows: [{ status: 'open' }],
    after: { status: { type: 'string', enum: true, items: ['open', 'done'], nullable: true } },
    risks: [],
  },
  {
    name: "a decimal's scale lowered under a stored value",
    before: { amount: { type: 'decimal', precision: 10, scale: 3, nullable: true } },
    rows: [{ amount: '1.234' }, { amount: '2.5' }],
    after: { amount: { type: 'decimal', precision: 10, scale: 2, nullable: true } },
    // SQLite stores the number as it was given, whatever the declared scale.
    risks: {
      sqlite: [],
      postgresql: ['items.amount: narrowed to numeric(10,2); 1 row holds a value that does not fit'],
    },
  },
  {
    name: 'a type narrowed (text → integer)',
    before: { code: { type: 'string', length: 20, nullable: true } },
    rows: [{ code: 'A-1' }],
    after: { code: { type: 'integer', nullable: true } },
    risks: {
      sqlite: ['items.code: type changes from text to integer; 1 row holds a value'],
      postgresql: ['items.code: type changes from varchar(20) to int; 1 row holds a value'],
    },
  },
  {
    name: 'a type widened (integer → bigint)',
    before: { n: { type: 'integer', nullable: true } },
    rows: [{ n: 7 }],
    after: { n: { type: 'bigint', nullable: true } },
    risks: [],
  },
  {
    name: 'a required column without a default added to a table with rows',
    before: {},
    rows: [{}],
    after: { due: { type: 'date' } },
    risks: ['items.due: added as NOT NULL without a default; the table has 1 row'],
  },
  {
    name: 'a required column added to an empty table',
    before: {},
    rows: [],
    after: { due: { type: 'date' } },
    risks: [],
  },
  {
    name: 'a nullable column added',
    before: {},
    rows: [{}],
    after: { due: { type: 'date', nullable: true } },
    risks: [],
  },
  {
    name: 'a column dropped by one migration and added again by the next (no net difference)',
    before: { title: title() },
    rows: [{ title: 'a' }],
    after: { title: title() },
    sql: [
      'this.addSql(`alter table \\`items\\` drop column \\`title\\`;`);',
      `this.addSql('alter table "items" add column "title" varchar(100) null;');`,
    ],
    risks: ['items.title: column dropped and added again; 1 row holds a value'],
  },
  {
    name: 'a column that a pending migration adds and a later one drops (nothing in it yet)',
    before: {},
    rows: [{}],
    after: {},
    sql: ['alter table "items" add column "ghost" text null;', 'alter table "items" drop column "ghost";'],
    risks: [],
  },
  {
    name: "SQLite's table copy that keeps every column",
    before: { title: title() },
    rows: [{ title: 'a' }],
    after: { title: title() },
    sql: [
      'insert into `items__temp_alter` select `id`, `title` from `items`;\ndrop table `items`;\nalter table `items__temp_alter` rename to `items`;',
    ],
    risks: [],
  },
  {
    name: "SQLite's table copy that leaves a column out",
    before: { title: title() },
    rows: [{ title: 'a' }],
    after: { title: title() },
    sql: [
      'insert into `items__temp_alter` select `id` from `items`;\ndrop table `items`;\nalter table `items__temp_alter` rename to `items`;',
    ],
    risks: ['items.title: column dropped; 1 row holds a value'],
  },
  {
    name: "SQLite's table copy under a narrower enum and NOT NULL",
    before: {
      status: { type: 'string', enum: true, items: ['open', 'doing', 'done'], nullable: true },
      title: title(),
    },
    rows: [
      { status: 'doing', title: null },
      { status: 'open', title: 'a' },
    ],
    after: {
      status: { type: 'string', enum: true, items: ['open', 'done'], nullable: true },
      title: title({ nullable: false }),
    },
    sql: [
      'insert into `items__temp_alter` select `id`, `status`, `title` from `items`;\ndrop table `items`;\nalter table `items__temp_alter` rename to `items`;',
    ],
    risks: [
      "items.status: allows only 'open', 'done'; 1 row holds another value",
      'items.title: becomes NOT NULL; 1 row is NULL',
    ],
  },
];

const lines = (risks: DataRisk[]) => risks.map((r) => `${r.target}: ${r.change}; ${r.rows}`);
const CURSOR_SECRET = 'test-cursor-secret-0123456789abcdef';

describePerDatabase('the data-loss check of pending migrations', (perDb) => {
  let folder: string;
  let url: string;
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'core-guard-'));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  let run = 0;
  beforeEach(() => {
    url = perDb.name === 'sqlite' ? `sqlite:${join(folder, `case-${++run}.db`)}` : perDb.url();
  });

  /**
   * Creates `items` as `before` and the `notes` table, writes the rows, then returns the risks of moving
   * to `after` (without `notes` when `dropNotes`).
   */
  async function risksOf(
    c: Pick<Case, 'before' | 'rows' | 'after' | 'sql'>,
    options: { notes?: number; dropNotes?: boolean } = {},
  ): Promise<string[]> {
    const first = new DatabaseManager();
    const db = await first.initApp(url, false, { entities: [items(c.before), notes], cursorSecret: CURSOR_SECRET });
    try {
      await db.orm.schema.refreshDatabase();
      const knex = db.connection.getKnex();
      for (const row of c.rows) await knex('items').insert(row);
      for (let i = 0; i < (options.notes ?? 0); i++) await knex('notes').insert({ text: `note ${i}` });
    } finally {
      await first.close();
    }
    const second = new DatabaseManager();
    const entities = options.dropNotes ? [items(c.after)] : [items(c.after), notes];
    const next = await second.initApp(url, false, { entities, cursorSecret: CURSOR_SECRET });
    try {
      return lines(await dataRisks(next, c.sql ?? []));
    } finally {
      await second.close();
    }
  }

  it.each(CASES)('$name', async (c) => {
    const expected = Array.isArray(c.risks) ? c.risks : c.risks[perDb.name];
    expect(await risksOf(c)).toEqual(expected);
  });

  it('a table dropped with rows', async () => {
    expect(await risksOf({ before: {}, rows: [], after: {} }, { notes: 2, dropNotes: true })).toEqual([
      'notes: table dropped; 2 rows',
    ]);
  });

  it('a table dropped empty', async () => {
    expect(await risksOf({ before: {}, rows: [], after: {} }, { dropNotes: true })).toEqual([]);
  });

  it('a table dropped in the SQL only', async () => {
    const sql = ['this.addSql(`drop table if exists \\`notes\\`;`);'];
    expect(await risksOf({ before: {}, rows: [], after: {}, sql }, { notes: 1 })).toEqual([
      'notes: table dropped; 1 row',
    ]);
  });
});
