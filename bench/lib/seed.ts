/**
 * Seeds the 100,000-row SQLite file once. The table is created by Core itself (MikroORM's schema
 * generator over the fixture's model), so its DDL — column types, the title index — is exactly what a
 * Core app gets; the rows are then inserted with one prepared statement in one transaction.
 *
 * Data is deterministic (a seeded PRNG), so runs are comparable: uuid v4 ids, titles of two words
 * (about 10% contain "report"), a third each low/medium/high, 20% completed, half assigned.
 */
import Database from 'better-sqlite3';
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

export interface SeedInfo {
  /** An existing id, read by the by-id endpoints. */
  sampleId: string;
  rows: number;
  ms: number;
}

/** Creates `path` (which must not exist) with the schema and `rows` tasks. */
export async function seedDatabase(path: string, rows = ROW_COUNT): Promise<SeedInfo> {
  const started = performance.now();
  await dbManager.initApp(`sqlite:${path}`, false);
  await dbManager.db.orm.schema.createSchema();
  await dbManager.close();

  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  const insert = db.prepare(
    'insert into tasks (id, title, description, priority, is_completed, assignee_email) values (?, ?, ?, ?, ?, ?)',
  );
  const random = prng(20_261_125);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  let sampleId = '';
  db.transaction(() => {
    for (let i = 0; i < rows; i++) {
      const id = uuidV4(random);
      if (i === Math.floor(rows / 2)) sampleId = id;
      const title = `${pick(WORDS)} ${pick(WORDS)} #${i}`;
      const description = random() < 0.3 ? null : `Task number ${i}: ${pick(WORDS)} and ${pick(WORDS)}.`;
      const assignee = random() < 0.5 ? `user${Math.floor(random() * 500)}@example.com` : null;
      insert.run(id, title, description, pick(PRIORITIES), random() < 0.2 ? 1 : 0, assignee);
    }
  })();
  // Fold the WAL into the main file so a plain copy of `path` is the whole database.
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { sampleId, rows, ms: Math.round(performance.now() - started) };
}
