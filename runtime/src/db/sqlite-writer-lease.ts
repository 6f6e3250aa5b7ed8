/**
 * The SQLite writer connection taken from knex's pool at once, without a promise, when it is free.
 *
 * knex keeps SQLite's one read-write connection in a tarn pool, and `acquireConnection` hands it out
 * through tarn's promise machinery: a pending operation, a validation step, timeouts, each a promise
 * or two. Under AsyncLocalStorage every promise also runs Node's async hooks, and a create's unit of
 * work acquired the connection for a BEGIN, an INSERT and a COMMIT that better-sqlite3 runs
 * synchronously anyway. When the connection sits free and nobody waits for it, a unit takes it here
 * the way tarn's own acquire does (moved from the pool's free list to its used list, so any acquire
 * that comes later waits for it as for any lease) and gives it back with tarn's public `release`.
 * A pool in any other state (connection busy, acquires waiting, being created, destroyed, or a tarn
 * whose lists look different) answers undefined, and the caller acquires through knex as before.
 *
 * Checked against the pinned tarn (3.1.2, through knex 3.2) by test/runtime/sqlite-writer-lease.test.ts.
 */

/** What tarn 3 keeps of a pooled connection. */
interface TarnResource {
  readonly resource: unknown;
}

/** The parts of tarn's `Pool` used here; `free` and `used` are its own lists. */
interface TarnPool {
  readonly destroyed?: boolean;
  readonly free?: TarnResource[];
  readonly used?: TarnResource[];
  numPendingAcquires(): number;
  numPendingCreates(): number;
  numPendingValidations(): number;
  release(resource: unknown): boolean;
}

/** A knex client, as far as its pool goes. */
export interface PooledClient {
  readonly pool?: unknown;
}

/** better-sqlite3's `Database`, as far as this module looks at it. */
interface SqliteHandle {
  readonly open?: boolean;
  readonly inTransaction?: boolean;
}

/**
 * The pool's free SQLite connection, now marked used, or undefined when it is not free at once (the
 * caller then acquires through knex). Give it back with `releaseLeased`.
 */
export function leaseFreeConnection(client: PooledClient): unknown {
  const pool = client.pool as TarnPool | undefined;
  const free = pool?.free;
  const used = pool?.used;
  if (!pool || !Array.isArray(free) || !Array.isArray(used) || pool.destroyed) return undefined;
  if (free.length === 0 || pool.numPendingAcquires() > 0 || pool.numPendingCreates() > 0) return undefined;
  if (pool.numPendingValidations() > 0) return undefined;
  const entry = free[free.length - 1]!;
  const conn = entry.resource as SqliteHandle | null;
  // A closed connection (or one left inside a transaction) is for knex's acquire to deal with.
  if (conn?.open !== true || conn.inTransaction) return undefined;
  free.pop();
  used.push(entry);
  return conn;
}

/** Gives back a connection `leaseFreeConnection` answered (tarn's public `release`, synchronous). */
export function releaseLeased(client: PooledClient, conn: unknown): void {
  (client.pool as TarnPool).release(conn);
}
