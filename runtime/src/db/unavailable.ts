import { ServiceUnavailableError, type ErrorDetail } from '../errors.js';

/**
 * Database failures that say "not now" rather than "this request is wrong", as a 503 the client can
 * retry: no free connection within `DATABASE_POOL_TIMEOUT_MS`, a statement cancelled by
 * `DATABASE_STATEMENT_TIMEOUT_MS`, a server that cannot be reached or is restarting, a SQLite file
 * locked by another process, a PostgreSQL transaction rolled back by a deadlock or serialization failure. Anything else is not recognised (undefined) and stays a 500.
 *
 * Errors arrive in several wrappings: the drivers' own (pg, knex's pool, better-sqlite3) on Core's
 * read path, MikroORM's `DriverException` (which copies `code` but renames the error) on writes, and
 * either one as the `cause` of another; so codes and messages are checked along the cause chain.
 */
export function databaseUnavailable(error: unknown): ServiceUnavailableError | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const kind = kindOf(current);
    if (kind !== undefined) return unavailable(kind);
  }
  return undefined;
}

type Kind = 'pool' | 'statement' | 'unreachable' | 'busy' | 'conflict';

/** What the client reads, and how soon it may try again (seconds). */
const ANSWERS: Record<Kind, { message: string; reason: string; retryAfter: number }> = {
  pool: { message: 'Every database connection is busy; try again shortly.', reason: 'database_busy', retryAfter: 1 },
  statement: {
    message: 'The database took too long to answer; try again shortly.',
    reason: 'database_timeout',
    retryAfter: 1,
  },
  unreachable: {
    message: 'The database cannot be reached; try again shortly.',
    reason: 'database_unreachable',
    retryAfter: 5,
  },
  busy: {
    message: 'The database is locked by another writer; try again shortly.',
    reason: 'database_busy',
    retryAfter: 1,
  },
  conflict: {
    message: 'The write collided with a concurrent one and was rolled back; try again.',
    reason: 'database_conflict',
    retryAfter: 1,
  },
};

/** PostgreSQL SQLSTATEs: the statement was cancelled (by `statement_timeout`), the server is going away or not accepting connections yet. */
const STATEMENT_CANCELLED = '57014';
const SERVER_GOING = new Set(['57P01', '57P02', '57P03', '53300']);
/**
 * PostgreSQL SQLSTATEs of a transaction the server rolled back because of another one: a serialization
 * failure, a deadlock, a lock that could not be taken (`NOWAIT`, `lock_timeout`). Nothing was written,
 * and the same request may well succeed when sent again.
 */
const ROLLED_BACK_BY_CONCURRENCY = new Set(['40001', '40P01', '55P03']);
/** Socket errors of a connection attempt or of a connection that broke. */
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

function kindOf(error: Error): Kind | undefined {
  const code = (error as { code?: unknown }).code;
  if (code === STATEMENT_CANCELLED) return 'statement';
  if (typeof code === 'string') {
    if (ROLLED_BACK_BY_CONCURRENCY.has(code)) return 'conflict';
    if (SERVER_GOING.has(code) || code.startsWith('08') || NETWORK.has(code)) return 'unreachable';
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return 'busy';
  }
  const { name, message } = error;
  // knex's pool (writes, units of work): `KnexTimeoutError`, whose name MikroORM's wrapper replaces.
  if (name === 'KnexTimeoutError' || message.startsWith('Knex: Timeout acquiring a connection')) return 'pool';
  // pg's pool (Core's reads): a full pool, or a new connection that took too long to open.
  if (
    message === 'timeout exceeded when trying to connect' ||
    message === 'Connection terminated due to connection timeout'
  )
    return 'pool';
  // A connection the server closed under a query (a restart, a network cut).
  if (message === 'Connection terminated unexpectedly') return 'unreachable';
  return undefined;
}

function unavailable(kind: Kind): ServiceUnavailableError {
  const { message, reason, retryAfter } = ANSWERS[kind];
  const details: ErrorDetail[] = [{ path: '', message, reason }];
  return new ServiceUnavailableError(message, details, retryAfter);
}
