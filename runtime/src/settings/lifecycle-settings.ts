import { SettingsError } from './settings.js';

/**
 * How long the app waits for the database before it answers 503 instead. Every request connection
 * gets these; migrations get no statement timeout (a long `ALTER TABLE` must finish).
 */
export interface DatabaseSettings {
  /**
   * `DATABASE_POOL_MAX`: connections per pool; default 10. On PostgreSQL the reads outside a unit of
   * work have a pool of their own of the same size, so an instance opens up to twice this many.
   */
  readonly poolMax: number;
  /** `DATABASE_POOL_TIMEOUT_MS`: a request that waits this long for a free connection answers 503; default 5000. */
  readonly poolTimeoutMs: number;
  /** `DATABASE_STATEMENT_TIMEOUT_MS`: PostgreSQL cancels a statement that runs longer (the request answers 503); 0 for none; default 30000. */
  readonly statementTimeoutMs: number;
}

/** What happens between a stop signal (SIGTERM, SIGINT) and the end of the process (see `listenWithLifecycle`). */
export interface ShutdownSettings {
  /**
   * `SHUTDOWN_DELAY_MS`: how long the app keeps serving after the signal while `/ready` answers 503,
   * so load balancers take it out of rotation first; default 2000, and 0 in development.
   */
  readonly delayMs: number;
  /** `SHUTDOWN_GRACE_MS`: how long requests in flight may take to finish once the app stops accepting connections; default 10000. */
  readonly graceMs: number;
}

export const DATABASE_DEFAULTS: DatabaseSettings = Object.freeze({
  poolMax: 10,
  poolTimeoutMs: 5000,
  statementTimeoutMs: 30_000,
});

/** The `DATABASE_*` limits, from the same source as the other settings (environment first, then `.env`). */
export function readDatabaseSettings(read: (name: string) => string | undefined): DatabaseSettings {
  return Object.freeze({
    poolMax: integer('DATABASE_POOL_MAX', read('DATABASE_POOL_MAX'), DATABASE_DEFAULTS.poolMax, 1, 1000),
    poolTimeoutMs: integer(
      'DATABASE_POOL_TIMEOUT_MS',
      read('DATABASE_POOL_TIMEOUT_MS'),
      DATABASE_DEFAULTS.poolTimeoutMs,
      1,
    ),
    statementTimeoutMs: integer(
      'DATABASE_STATEMENT_TIMEOUT_MS',
      read('DATABASE_STATEMENT_TIMEOUT_MS'),
      DATABASE_DEFAULTS.statementTimeoutMs,
      0,
    ),
  });
}

/** The `SHUTDOWN_*` settings; the delay defaults to 0 in development, where no load balancer waits. */
export function readShutdownSettings(
  read: (name: string) => string | undefined,
  isDevelopment: boolean,
): ShutdownSettings {
  return Object.freeze({
    delayMs: integer('SHUTDOWN_DELAY_MS', read('SHUTDOWN_DELAY_MS'), isDevelopment ? 0 : 2000, 0),
    graceMs: integer('SHUTDOWN_GRACE_MS', read('SHUTDOWN_GRACE_MS'), 10_000, 0),
  });
}

function integer(name: string, raw: string | undefined, fallback: number, min: number, max = 86_400_000): number {
  if (raw === undefined) return fallback;
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new SettingsError(
      `${name} must be a whole number from ${min} to ${max} (default ${fallback}); received ${JSON.stringify(raw)}.`,
    );
  }
  return value;
}
