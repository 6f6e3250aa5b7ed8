/**
 * Seeds the 100,000 tasks once per database. The table is created by Core itself (MikroORM's schema
 * generator over the fixture's model, which `core startapp tasks --template` reproduces), so its DDL —
 * column types, the title index — is exactly what a Core app gets on that database; the rows are then
 * inserted directly: one prepared statement in one transaction on SQLite, batches of `unnest` arrays on
 * PostgreSQL.
 *
 * Data is deterministic (a seeded PRNG) and the same on both databases, so runs are comparable: uuid v4
 * ids, titles of two words (about 10% contain "report"), a third each low/medium/high, 20% completed,
 * half assigned.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { dbManager } from '@core/runtime';
// Importing the model registers it with `defineModel`, which `initApp` picks up.
import '../../fixtures/apps/tasks/src/apps/tasks/models.js';
import { ROW_COUNT, SEARCH_WORD } from './config.js';

const WORDS = [
  'alpha', 'budget', 'client', 'deploy', 'email', 'fix', 'growth', 'hiring', 'invoice', 'launch',
  'meeting', 'migrate', 'onboard', 'plan', 'review', SEARCH_WORD, 'roadmap', 'sprint', 'test', 'update',
];
const PRIORITIES = ['low', 'medium', 'high'];

/** mulberry32: small, fast, good enough to spread test data. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uuidV4(random: () => number): string {
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) bytes[i] = Math.floor(random() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

interface TaskRow {
  id: string;
  title: string;
  description: string | null;
  priority: string;
  is_completed: boolean;
  assignee_email: string | null;
}

/** The rows, always the same for the same count; row `floor(rows / 2)` is the by-id endpoints' sample. */
function* taskRows(rows: number): Generator<TaskRow> {
  const random = prng(20_261_125);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  for (let i = 0; i < rows; i++) {
    // The order of the random() calls is part of the data set: keep it.
    const id = uuidV4(random);
    const title = `${pick(WORDS)} ${pick(WORDS)} #${i}`;
    const description = random() < 0.3 ? null : `Task number ${i}: ${pick(WORDS)} and ${pick(WORDS)}.`;
    const assignee_email = random() < 0.5 ? `user${Math.floor(random() * 500)}@example.com` : null;
    const priority = pick(PRIORITIES);
    yield { id, title, description, priority, is_completed: random() < 0.2, assignee_email };
  }
}

export interface SeedInfo {
  /** An existing id, read by the by-id endpoints (the same on every database). */
  sampleId: string;
  rows: number;
  ms: number;
}

/** The table, through Core's own schema generator. */
async function createSchema(databaseUrl: string): Promise<void> {
  await dbManager.initApp(databaseUrl, false);
  try {
    await dbManager.db.orm.schema.createSchema();
  } finally {
    await dbManager.close();
  }
}

/** Creates the SQLite file `path` (which must not exist) with the schema and `rows` tasks. */
export async function seedSqlite(path: string, rows = ROW_COUNT): Promise<SeedInfo> {
  const started = performance.now();
  await createSchema(`sqlite:${path}`);

  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  const insert = db.prepare(
    'insert into tasks (id, title, description, priority, is_completed, assignee_email) values (?, ?, ?, ?, ?, ?)',
  );
  let sampleId = '';
  let i = 0;
  db.transaction(() => {
    for (const row of taskRows(rows)) {
      if (i++ === Math.floor(rows / 2)) sampleId = row.id;
      insert.run(row.id, row.title, row.description, row.priority, row.is_completed ? 1 : 0, row.assignee_email);
    }
  })();
  // Fold the WAL into the main file so a plain copy of `path` is the whole database.
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { sampleId, rows, ms: Math.round(performance.now() - started) };
}

/** Rows per INSERT on PostgreSQL: one statement binds six arrays of this length. */
const PG_BATCH = 10_000;

/** Fills the (empty, existing) PostgreSQL database at `url` with the schema and `rows` tasks, then analyzes it. */
export async function seedPostgres(url: string, rows = ROW_COUNT): Promise<SeedInfo> {
  const started = performance.now();
  await createSchema(url);

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let sampleId = '';
    let i = 0;
    let batch: TaskRow[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const column = <K extends keyof TaskRow>(key: K): TaskRow[K][] => batch.map((row) => row[key]);
      await client.query(
        `insert into tasks (id, title, description, priority, is_completed, assignee_email)
         select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[])`,
        [column('id'), column('title'), column('description'), column('priority'), column('is_completed'), column('assignee_email')],
      );
      batch = [];
    };
    await client.query('begin');
    for (const row of taskRows(rows)) {
      if (i++ === Math.floor(rows / 2)) sampleId = row.id;
      batch.push(row);
      if (batch.length === PG_BATCH) await flush();
    }
    await flush();
    await client.query('commit');
    // Planner statistics and the visibility map, as a database that has been running a while has them.
    await client.query('vacuum analyze tasks');
    return { sampleId, rows, ms: Math.round(performance.now() - started) };
  } finally {
    await client.end();
  }
}
