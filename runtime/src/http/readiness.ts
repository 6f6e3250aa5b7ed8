/**
 * `/health` and `/ready`, for load balancers, orchestrators and uptime checks. Neither is guarded nor
 * in the API docs, and both answer plain JSON rather than the envelope: probes read the status code.
 *
 * - `GET /health`: 200 `{ "status": "ok" }` while the process runs (a liveness probe: restart the
 *   instance when it stops answering).
 * - `GET /ready`: 200 when the instance can serve: the database answers and every migration is
 *   applied (Core's and the project's `migrations/<dialect>/`); 503 otherwise, and from the first
 *   moment of a shutdown. The event broker's state is reported but never fails readiness: events
 *   wait in the outbox while it is away.
 *
 * ```json
 * { "status": "ready", "database": "ok", "migrations": "ok", "events": "off" }
 * { "status": "not_ready", "database": "unreachable", "migrations": "unknown", "events": "disconnected" }
 * ```
 */
import { readdir } from 'node:fs/promises';
import { join, parse, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { dbManager, type Database } from '../db/database.js';
import type { Dispatcher } from '../events/dispatcher.js';
import { pendingCoreMigrations } from '../migrations/core-migrations.js';
import { eventBrokerOf } from '../outbox/event-broker.js';
import { lifecyclePhase } from './lifecycle.js';
import { CORE_PLAIN_ROUTE } from './error-handler.js';

export interface HealthRoutesOptions {
  /** The project folder, whose `migrations/<dialect>/` holds the migrations that must be applied; default the working directory. */
  cwd?: string;
  /** The kernel's dispatcher: `/ready` reports the state of its event broker (`EVENTS_URL`). */
  dispatcher?: Dispatcher;
  /** A check of the database that takes longer counts as a failure; default 2000 ms. */
  timeoutMs?: number;
}

export interface ReadinessReport {
  /** `ready` (200); `not_ready` or `shutting_down` (503). */
  readonly status: 'ready' | 'not_ready' | 'shutting_down';
  readonly database: 'ok' | 'unreachable' | 'timeout';
  /** `unknown` when the database could not be asked. */
  readonly migrations: 'ok' | 'pending' | 'unknown';
  /** `off` without `EVENTS_URL`. */
  readonly events: 'off' | 'connected' | 'disconnected';
}

/** The table MikroORM records applied migrations in. */
const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/** Registers `GET /health` and `GET /ready` on the app (not encapsulated: the paths are not prefixed). */
export const coreHealthRoutes = fastifyPlugin(
  async (app: FastifyInstance, options: HealthRoutesOptions) => {
    const checker = new ReadinessChecker(options);
    app.get('/health', CORE_PLAIN_ROUTE, async () => ({ status: 'ok' }));
    app.get('/ready', CORE_PLAIN_ROUTE, async (_request, reply) => {
      const report = await checker.check(lifecyclePhase(app) !== 'serving');
      void reply.code(report.status === 'ready' ? 200 : 503).header('cache-control', 'no-store');
      return report;
    });
  },
  { name: '@core/health-routes', fastify: '5.x' },
);

class ReadinessChecker {
  private readonly cwd: string;
  private readonly timeoutMs: number;
  /** Once every migration was seen applied it stays so: the files do not change while the process runs. */
  private migrationsApplied = false;
  /** The last names found pending, so each new set is logged once rather than on every probe. */
  private lastPending = '';

  constructor(private readonly options: HealthRoutesOptions) {
    this.cwd = resolve(options.cwd ?? process.cwd());
    this.timeoutMs = options.timeoutMs ?? 2000;
  }

  async check(shuttingDown: boolean): Promise<ReadinessReport> {
    const events = this.events();
    if (!dbManager.isInitialised)
      return {
        status: shuttingDown ? 'shutting_down' : 'not_ready',
        database: 'unreachable',
        migrations: 'unknown',
        events,
      };
    const db = dbManager.db;
    const database = await this.withTimeout(db.select('select 1 as ok').then(() => 'ok' as const));
    let migrations: ReadinessReport['migrations'] = 'unknown';
    if (database === 'ok') {
      const found = await this.withTimeout(this.migrations(db));
      if (found === 'ok' || found === 'pending') migrations = found;
    }
    const ok = database === 'ok' && migrations === 'ok';
    return { status: shuttingDown ? 'shutting_down' : ok ? 'ready' : 'not_ready', database, migrations, events };
  }

  private events(): ReadinessReport['events'] {
    const broker = this.options.dispatcher ? eventBrokerOf(this.options.dispatcher) : undefined;
    if (!broker) return 'off';
    return broker.ready ? 'connected' : 'disconnected';
  }

  private async migrations(db: Database): Promise<'ok' | 'pending'> {
    if (this.migrationsApplied) return 'ok';
    const pending = [...(await pendingCoreMigrations(db)), ...(await this.pendingProjectMigrations(db))];
    if (pending.length === 0) {
      this.migrationsApplied = true;
      return 'ok';
    }
    const names = pending.join(', ');
    if (names !== this.lastPending) {
      this.lastPending = names;
      db.logger.warn({ migrations: pending }, `not ready: migrations pending (${names}); run \`npm run migrate\``);
    }
    return 'pending';
  }

  /** The project's migration files not recorded as applied, named as MikroORM records them. */
  private async pendingProjectMigrations(db: Database): Promise<string[]> {
    const files = await migrationFiles(join(this.cwd, 'migrations', db.dialect));
    if (files.length === 0) return [];
    let applied: Set<string>;
    try {
      const rows = await db.select<{ name: string }>(`select ${db.quote('name')} from ${db.quote(MIGRATIONS_TABLE)}`);
      applied = new Set(rows.map((row) => row.name));
    } catch {
      // No table yet: nothing was ever migrated (the database itself answered a moment ago).
      applied = new Set();
    }
    return files.filter((name) => !applied.has(name));
  }

  /** The check's answer, or `timeout`; a check that throws counts as `unreachable`. */
  private withTimeout<T>(work: Promise<T>): Promise<T | 'timeout' | 'unreachable'> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
    });
    return Promise.race([work.catch(() => 'unreachable' as const), late]).finally(() => clearTimeout(timer));
  }
}

/**
 * Migration names in `folder`, as MikroORM's migrator finds them (`*.js`, `*.ts`, `*.cjs` but not
 * `*.d.ts`) and records them (without a `.js` or `.ts` extension). None when the folder is missing.
 */
async function migrationFiles(folder: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(folder);
  } catch {
    return [];
  }
  return entries
    .filter((file) => /\.(js|ts|cjs)$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => {
      const { name, ext } = parse(file);
      return ext === '.js' || ext === '.ts' ? name : file;
    })
    .sort();
}
