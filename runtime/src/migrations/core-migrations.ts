/**
 * Core's own tables, created by Core's own migrations: a project's `core migrate` (and `npm run
 * migrate`, `core run`) applies them before the project's, so a new table of Core's reaches every
 * project with nothing to write. They are recorded in `core_migrations` (the project's migrations are
 * MikroORM's, in `mikro_orm_migrations`), left out of the project's schema diffs (`CORE_TABLES`), and
 * applied under a lock on PostgreSQL, so instances that start together apply each one once.
 *
 * Add a migration by appending to `CORE_MIGRATIONS`; never edit or reorder an applied one.
 */
import type { Knex } from '@mikro-orm/knex';
import type { Database, Dialect } from '../db/database.js';

interface CoreMigration {
  readonly name: string;
  readonly up: Readonly<Record<Dialect, readonly string[]>>;
}

export const CORE_MIGRATIONS: readonly CoreMigration[] = [
  {
    // The transactional outbox of events (see `outbox/store.ts`); pending rows are found through a
    // partial index, so the published ones (kept until the retention) cost the relay nothing.
    name: 'core_0001_outbox',
    up: {
      postgresql: [
        `create table "core_outbox" ("seq" bigserial primary key, "id" varchar(100) not null, "name" varchar(255) not null, "body" text not null, ` +
          `"occurred_at" timestamptz not null, "published_at" timestamptz null, "attempts" integer not null default 0, "last_error" text null)`,
        'create index "core_outbox_pending_index" on "core_outbox" ("seq") where "published_at" is null',
        'create index "core_outbox_published_at_index" on "core_outbox" ("published_at") where "published_at" is not null',
      ],
      sqlite: [
        'create table `core_outbox` (`seq` integer not null primary key autoincrement, `id` text not null, `name` text not null, `body` text not null, ' +
          '`occurred_at` integer not null, `published_at` integer null, `attempts` integer not null default 0, `last_error` text null)',
        'create index `core_outbox_pending_index` on `core_outbox` (`seq`) where `published_at` is null',
        'create index `core_outbox_published_at_index` on `core_outbox` (`published_at`) where `published_at` is not null',
      ],
    },
  },
];

/** Tables of Core's, never part of a project's models: kept out of the migrations MikroORM writes. */
export const CORE_TABLES: readonly string[] = ['core_migrations', 'core_outbox'];

/** Any 64-bit number of Core's own: the advisory lock taken while Core's migrations are applied. */
const PG_LOCK_KEY = 7_305_143_021;

/** Applies Core's pending migrations, in order, each in a transaction of its own; returns their names. */
export async function applyCoreMigrations(db: Database): Promise<string[]> {
  const applied: string[] = [];
  for (const migration of CORE_MIGRATIONS) {
    const done = await db.connection.getKnex().transaction(async (trx) => {
      await lockAndPrepare(db, trx);
      const rows = await trx.raw(select(db), [migration.name]);
      if (resultRows(db, rows).length > 0) return false;
      for (const sql of migration.up[db.dialect]) await trx.raw(sql);
      await trx.raw(
        `insert into ${db.quote('core_migrations')} (${db.quote('name')}, ${db.quote('executed_at')}) values (?, ?)`,
        [migration.name, db.dialect === 'sqlite' ? Date.now() : new Date()],
      );
      return true;
    });
    if (done) applied.push(migration.name);
  }
  return applied;
}

/** Names of Core's migrations not applied yet to `db`. */
export async function pendingCoreMigrations(db: Database): Promise<string[]> {
  const knex = db.connection.getKnex();
  const exists =
    db.dialect === 'sqlite'
      ? resultRows(db, await knex.raw("select 1 from sqlite_master where type = 'table' and name = 'core_migrations'"))
          .length > 0
      : (
          resultRows(db, await knex.raw("select to_regclass('core_migrations') is not null as present"))[0] as {
            present: boolean;
          }
        ).present;
  if (!exists) return CORE_MIGRATIONS.map((m) => m.name);
  const done = new Set(
    resultRows(db, await knex.raw(`select ${db.quote('name')} from ${db.quote('core_migrations')}`)).map(
      (row) => (row as { name: string }).name,
    ),
  );
  return CORE_MIGRATIONS.map((m) => m.name).filter((name) => !done.has(name));
}

async function lockAndPrepare(db: Database, trx: Knex.Transaction): Promise<void> {
  // Serializes concurrent runs (two instances starting at once); released with the transaction.
  if (db.dialect === 'postgresql') await trx.raw('select pg_advisory_xact_lock(?)', [PG_LOCK_KEY]);
  const time = db.dialect === 'sqlite' ? 'integer' : 'timestamptz';
  await trx.raw(
    `create table if not exists ${db.quote('core_migrations')} (${db.quote('name')} varchar(255) not null primary key, ${db.quote('executed_at')} ${time} not null)`,
  );
}

function select(db: Database): string {
  return `select ${db.quote('name')} from ${db.quote('core_migrations')} where ${db.quote('name')} = ?`;
}

/** knex's raw result: an array of rows on SQLite, pg's result object on PostgreSQL. */
function resultRows(db: Database, result: unknown): unknown[] {
  return db.dialect === 'sqlite' ? (result as unknown[]) : (result as { rows: unknown[] }).rows;
}
