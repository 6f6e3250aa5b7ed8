/**
 * Platformatic DB, the peer the bench measures Core against: version 2.61.0, the last line that runs
 * on Node 20. It is not a dependency of Core: its package.json, package-lock.json and start script are
 * committed in bench/peers/platformatic/, and the bench installs them with `npm ci` into the ignored
 * bench/.peers/platformatic/ the first time it needs them (better-sqlite3 compiles on install), again only
 * when the lock file changes.
 *
 * It serves its own copy of the same data. On PostgreSQL that is a copy whose `tasks.id` gets a default
 * (`gen_random_uuid()`): Platformatic DB leaves new ids to the database there, where Core and the other
 * servers make them in the application. On SQLite, where column
 * types are only declared names, Platformatic DB reads ids as uuids and booleans as booleans only when
 * they are declared `uuid` and `bool` (and accepts a primary key only of type varchar, integer, uuid
 * or serial), so its copy's `tasks` is rebuilt with those declared types, the same rows and the same
 * title and project indexes. The tables it does not serve (comments, and projects, whose rows it is never asked to
 * embed) are dropped from that copy.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { COMPARISON_LOG_LEVEL, ROOT } from './config.js';
import type { ServerSpec } from './servers.js';

const SOURCE = join(ROOT, 'bench/peers/platformatic');
export const PLATFORMATIC_DIR = join(ROOT, 'bench/.peers/platformatic');
const FILES = ['package.json', 'package-lock.json', 'start.mjs'];
/** Written after a successful `npm ci`: the hash of the lock file it installed. */
const STAMP = join(PLATFORMATIC_DIR, '.installed');

const run = promisify(execFile);

/** Installs Platformatic DB into bench/.peers/platformatic/ unless that lock file is already installed. */
export async function installPlatformatic(log: (line: string) => void): Promise<void> {
  mkdirSync(PLATFORMATIC_DIR, { recursive: true });
  for (const file of FILES) copyFileSync(join(SOURCE, file), join(PLATFORMATIC_DIR, file));
  const lockHash = createHash('sha256')
    .update(readFileSync(join(SOURCE, 'package-lock.json')))
    .digest('hex');
  if (
    existsSync(STAMP) &&
    readFileSync(STAMP, 'utf8') === lockHash &&
    existsSync(join(PLATFORMATIC_DIR, 'node_modules/@platformatic/db'))
  )
    return;
  log('  Platformatic DB: npm ci in bench/.peers/platformatic (once per lock file change; about two minutes) …');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  try {
    await run(npm, ['ci', '--no-audit', '--no-fund'], { cwd: PLATFORMATIC_DIR, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(
      `npm ci for Platformatic DB failed in ${PLATFORMATIC_DIR} (leave it out with --servers):\n${stderr || stdout || (error as Error).message}`,
      { cause: error },
    );
  }
  writeFileSync(STAMP, lockHash);
}

/** How to start it: its start script, from its own install, at the comparison's log level. */
export function platformaticServer(): ServerSpec {
  return {
    name: 'platformatic',
    cwd: PLATFORMATIC_DIR,
    entry: join(PLATFORMATIC_DIR, 'start.mjs'),
    env: { NODE_ENV: 'production', HOST: '127.0.0.1', LOG_LEVEL: COMPARISON_LOG_LEVEL },
    readyPath: '/tasks/?limit=1',
  };
}

/** Copies the SQLite file the bench seeded to `dest` and rebuilds `tasks` with the declared types Platformatic DB maps. */
export function platformaticSqliteCopy(seedPath: string, dest: string): void {
  copyFileSync(seedPath, dest);
  const db = new Database(dest);
  try {
    db.pragma('foreign_keys = off');
    db.transaction(() => {
      db.prepare('drop table comments').run();
      db.prepare(
        `create table tasks_typed (
           id uuid not null primary key,
           title varchar(255) not null,
           description varchar(1024) null,
           priority varchar(50) not null default 'medium',
           is_completed bool not null default 0,
           assignee_email varchar(255) null,
           owner_id varchar(255) null,
           project_id uuid null
         )`,
      ).run();
      db.prepare(
        'insert into tasks_typed select id, title, description, priority, is_completed, assignee_email, owner_id, project_id from tasks',
      ).run();
      db.prepare('drop table tasks').run();
      db.prepare('drop table projects').run();
      db.prepare('alter table tasks_typed rename to tasks').run();
      db.prepare('create index tasks_title_index on tasks (title)').run();
      db.prepare('create index tasks_project_id_index on tasks (project_id)').run();
    })();
    db.pragma('journal_mode = WAL');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** Gives the PostgreSQL copy at `url` the id default Platformatic DB's inserts rely on. */
export async function preparePlatformaticPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('alter table tasks alter column id set default gen_random_uuid()');
  } finally {
    await client.end();
  }
}
