import { readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { Migrator } from '@mikro-orm/migrations';
import { DatabaseManager, parseDatabaseUrl, type Database, type Dialect } from '../db/database.js';
import { registeredModels } from '../db/model-registry.js';
import { silentLogger, type Logger } from '../logging/logger.js';
import { loadSettings } from '../settings/settings.js';
import { applyCoreMigrations, CORE_TABLES, pendingCoreMigrations } from './core-migrations.js';
import { dataRisks, type DataRisk } from './guard.js';

/**
 * MikroORM migrations for a Core project (used by `core makemigrations`, `core migrate` and the
 * project's `npm run migrate`). The SQL a migration holds is dialect-specific, so each dialect has
 * its own folder: `migrations/sqlite/`, `migrations/postgresql/` — the one matching `DATABASE_URL` is
 * used. Each folder also holds `.snapshot.json`, the schema the last migration produced: new
 * migrations are the difference between the models and that snapshot, so creating one never needs
 * the database to be up to date.
 *
 * The models are the ones registered with `defineModel` when these functions run: import the app
 * (its `src/main.ts`) first. `@mikro-orm/migrations` is loaded on first use only, so apps that never
 * migrate at run time do not pay for it.
 */
export interface MigrationOptions {
  /** The project folder: holds `.env` and `migrations/`. Default `process.cwd()`. */
  cwd?: string;
  /** Default: `DATABASE_URL` from the settings of `cwd`. */
  databaseUrl?: string;
  /** Receives progress lines; default silent. */
  logger?: Logger;
}

export interface CreatedMigration {
  /** Project-relative path of the new migration, or null when the models match the snapshot. */
  file: string | null;
  /** The SQL statements of its `up`. */
  statements: readonly string[];
}

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/** `migrations/<dialect>` of the project, for the dialect of `databaseUrl`. */
export function migrationsFolder(cwd: string, databaseUrl: string): { dialect: Dialect; path: string } {
  const { dialect } = parseDatabaseUrl(databaseUrl);
  return { dialect, path: join(resolve(cwd), 'migrations', dialect) };
}

/** Writes a migration from the difference between the models and the last snapshot. */
export async function createMigration(options: MigrationOptions & { name?: string } = {}): Promise<CreatedMigration> {
  const cwd = resolve(options.cwd ?? process.cwd());
  return withMigrator(options, async (migrator) => {
    const result = await migrator.createMigration(undefined, false, false, options.name);
    if (!result.fileName) return { file: null, statements: [] };
    const { path } = migrationsFolder(cwd, databaseUrlOf(options));
    return {
      file: relative(cwd, join(path, result.fileName)),
      statements: result.diff.up.filter((s) => s.trim() !== ''),
    };
  });
}

/** The pending migrations would lose data (or fail on existing rows); nothing was applied. */
export class DataLossError extends MigrationError {
  constructor(
    readonly migrations: readonly string[],
    readonly risks: readonly DataRisk[],
  ) {
    super(
      `not applied: ${migrations.join(', ')} would lose data in the database (${risks.map((r) => r.target).join(', ')})`,
    );
    this.name = 'DataLossError';
  }
}

/**
 * Applies every pending migration, in order; returns their names. Core's own tables come first
 * (`core-migrations.ts`: the events outbox), then the project's migrations. With `refuseDataLoss`, it
 * first checks what the project's migrations would do to the rows already there (`guard.ts`) and
 * throws a `DataLossError`, applying nothing, when they would lose data.
 */
export async function applyMigrations(
  options: MigrationOptions & { refuseDataLoss?: boolean } = {},
): Promise<string[]> {
  const logger = options.logger ?? silentLogger;
  return withMigrator(options, async (migrator, db) => {
    if (options.refuseDataLoss) await refuseDataLoss(migrator, db);
    const applied = [...(await applyCoreMigrations(db)), ...(await migrator.up()).map((m) => m.name)];
    await withoutCoreTables(migrationsFolder(resolve(options.cwd ?? process.cwd()), databaseUrlOf(options)).path);
    for (const name of applied) logger.info({ migration: name }, `applied ${name}`);
    return applied;
  });
}

/** Names of the migrations not applied yet, Core's first. */
export async function pendingMigrations(options: MigrationOptions = {}): Promise<string[]> {
  return withMigrator(options, async (migrator, db) => [
    ...(await pendingCoreMigrations(db)),
    ...(await migrator.getPendingMigrations()).map((m) => m.name),
  ]);
}

/**
 * After applying migrations MikroORM rewrites `.snapshot.json` from the database, Core's tables
 * included; left there, the next migration written from the models would drop them.
 */
async function withoutCoreTables(folder: string): Promise<void> {
  const file = join(folder, '.snapshot.json');
  const snapshot = JSON.parse(await readFile(file, 'utf8').catch(() => 'null')) as {
    tables?: { name: string }[];
  } | null;
  if (!snapshot?.tables?.some((table) => CORE_TABLES.includes(table.name))) return;
  const tables = snapshot.tables.filter((table) => !CORE_TABLES.includes(table.name));
  await writeFile(file, `${JSON.stringify({ ...snapshot, tables }, null, 2)}\n`);
}

async function refuseDataLoss(migrator: Migrator, db: Database): Promise<void> {
  const pending = await migrator.getPendingMigrations();
  if (pending.length === 0) return;
  const sources = await Promise.all(pending.map((m) => (m.path ? readFile(m.path, 'utf8') : '')));
  const risks = await dataRisks(db, sources);
  if (risks.length > 0)
    throw new DataLossError(
      pending.map((m) => m.name),
      risks,
    );
}

function databaseUrlOf(options: MigrationOptions): string {
  return options.databaseUrl ?? loadSettings({ cwd: options.cwd, logger: silentLogger }).databaseUrl;
}

async function withMigrator<T>(
  options: MigrationOptions,
  work: (migrator: Migrator, db: Database) => Promise<T>,
): Promise<T> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const databaseUrl = databaseUrlOf(options);
  if (registeredModels().length === 0) {
    throw new MigrationError(
      'no models are registered: import your apps (src/main.ts imports every app) before running migrations',
    );
  }
  const { Migrator } = await loadMigrations();
  const folder = migrationsFolder(cwd, databaseUrl).path;
  const manager = new DatabaseManager();
  const db = await manager.initApp(databaseUrl, false, {
    logger: options.logger ?? silentLogger,
    // A migration may rewrite a large table: the statement timeout is for requests only.
    database: { statementTimeoutMs: 0 },
    orm: {
      baseDir: cwd,
      extensions: [Migrator],
      // Core's own tables are not the project's models: a diff against the database must not drop them.
      schemaGenerator: { skipTables: [...CORE_TABLES] },
      migrations: {
        path: folder,
        pathTs: folder,
        emit: 'ts',
        // One snapshot per dialect folder, not per database name: colleagues' databases may be named differently.
        snapshotName: '.snapshot',
        silent: true,
      },
    },
  });
  try {
    return await work(db.orm.getMigrator() as Migrator, db);
  } finally {
    await manager.close();
  }
}

async function loadMigrations(): Promise<typeof import('@mikro-orm/migrations')> {
  try {
    return await import('@mikro-orm/migrations');
  } catch (err) {
    throw new MigrationError(
      '@mikro-orm/migrations is not installed: run `npm install -E @mikro-orm/migrations@6.6.16`',
      { cause: err },
    );
  }
}
