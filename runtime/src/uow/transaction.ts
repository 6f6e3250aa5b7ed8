/**
 * The database transaction of one unit of work: a connection of MikroORM's own pool, borrowed and
 * begun on the first statement, committed or rolled back by the unit, then given back.
 *
 * Core runs BEGIN, COMMIT, ROLLBACK and its own compiled statements on that connection itself (SQLite:
 * prepared once per connection and reused; PostgreSQL: parameterized queries). MikroORM reaches the
 * same connection through `knex`, the object `uow.em` holds as its transaction context: it is shaped
 * like a knex transaction (a `client` that is "transacting" and always hands out this connection), so
 * `uow.em`, `orm.em` inside the unit and `Database.select` all run on this transaction without a knex
 * transaction object ever being built. See the README of this folder for the measurements behind it.
 */
import type { Database } from '../db/database.js';
import { leaseFreeConnection, releaseLeased } from '../db/sqlite-writer-lease.js';

/** better-sqlite3, as far as the unit uses it. */
interface SqliteStatement {
  /** Whether the statement returns rows (a SELECT, or a write with RETURNING). */
  readonly reader: boolean;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  readonly inTransaction: boolean;
}
/** node-postgres, as far as the unit uses it. */
interface PgConnection {
  query(query: string | { text: string; values: readonly unknown[] }): Promise<{ rows: unknown[] }>;
}

/** The knex client members the unit calls or copies (knex 3.2, the version @mikro-orm/knex 6.6.16 pins). */
interface KnexClient {
  readonly pool?: unknown;
  acquireConnection(): Promise<unknown>;
  releaseConnection(conn: unknown): Promise<unknown>;
  transaction(
    container: (trx: unknown) => unknown,
    config: object,
    outerTx: null,
  ): PromiseLike<unknown> & { catch(fn: (e: unknown) => void): unknown };
  emit(event: string, ...args: unknown[]): boolean;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  transacting?: boolean;
  version?: unknown;
  config?: unknown;
  driver?: unknown;
  connectionSettings?: unknown;
  valueForUndefined?: unknown;
  logger?: unknown;
}

/** What MikroORM and knex use of a transaction object (`em.getTransactionContext()`). */
export interface KnexTransactionLike {
  readonly client: KnexClient;
  readonly isTransaction: true;
  readonly userParams: Record<string, unknown>;
  transaction(container?: ((trx: unknown) => unknown) | null, config?: object): unknown;
  savepoint(container?: ((trx: unknown) => unknown) | null, config?: object): unknown;
  commit(): never;
  rollback(): never;
  isCompleted(): boolean;
}

/** Statements prepared per SQLite connection: the unit's literal-free and compiled SQL, a bounded set. */
const MAX_STATEMENTS = 256;
const statementCaches = new WeakMap<object, Map<string, SqliteStatement>>();

function statement(conn: SqliteConnection, sql: string): SqliteStatement {
  let cache = statementCaches.get(conn);
  if (!cache) statementCaches.set(conn, (cache = new Map()));
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = conn.prepare(sql);
    // Oldest first out: the set is the few BEGIN/COMMIT texts plus one INSERT per model and column set.
    if (cache.size >= MAX_STATEMENTS) cache.delete(cache.keys().next().value as string);
    cache.set(sql, stmt);
  }
  return stmt;
}

/** `?` → `$1, $2…` for PostgreSQL, once per distinct statement (Core's SQL never holds a literal `?`). */
const pgTexts = new Map<string, string>();

function pgText(sql: string): string {
  let text = pgTexts.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    if (pgTexts.size >= MAX_STATEMENTS) pgTexts.delete(pgTexts.keys().next().value as string);
    pgTexts.set(sql, text);
  }
  return text;
}

const EVENTS = ['start', 'query', 'query-error', 'query-response'] as const;

/**
 * What a unit's EntityManager holds as its transaction: to knex and MikroORM it looks like a knex
 * transaction (`client` is "transacting"; `transaction()` nests a savepoint). The unit itself commits.
 */
class TransactionHandle implements KnexTransactionLike {
  readonly isTransaction = true;
  readonly userParams: Record<string, unknown> = {};

  constructor(private readonly tx: UnitTransaction) {}

  get client(): KnexClient {
    return this.tx.client();
  }

  // `em.transactional()` / `em.begin({ ctx })` inside the unit: a savepoint, as knex nests transactions.
  transaction(container?: ((trx: unknown) => unknown) | null, config?: object): unknown {
    return this.tx.savepoint(container, config);
  }

  savepoint(container?: ((trx: unknown) => unknown) | null, config?: object): unknown {
    return this.tx.savepoint(container, config);
  }

  commit(): never {
    return refuse();
  }

  rollback(): never {
    return refuse();
  }

  isCompleted(): boolean {
    return this.tx.isEnded;
  }
}

function refuse(): never {
  throw new Error(
    'A unit of work commits or rolls back itself when UnitOfWork.run returns or throws: do not call commit() or rollback() on uow.em',
  );
}

/** The transaction of one unit of work (see the top of this file); the unit calls `end` exactly once. */
export class UnitTransaction {
  private readonly sqlite: boolean;
  /** The begun transaction's connection, from BEGIN until `end`. */
  private conn: unknown;
  /** A BEGIN under way on a connection knex's pool is still handing out. */
  private opening: Promise<unknown> | undefined;
  /** Whether `conn` was taken from the pool at once (`leaseFreeConnection`), not through knex. */
  private leased = false;
  private ended = false;
  /** Set when the transaction was one statement sent alone (`queryAlone`). */
  private sentAlone = false;
  private handle: TransactionHandle | undefined;
  private transactingClient: KnexClient | undefined;

  constructor(private readonly db: Database) {
    this.sqlite = db.dialect === 'sqlite';
  }

  /**
   * The transaction object `uow.em` holds: MikroORM and knex run their statements through it. Made on
   * first use: a unit that only runs Core's own statements never needs it.
   */
  get knex(): KnexTransactionLike {
    return (this.handle ??= new TransactionHandle(this));
  }

  /** Whether `knex` was made (and so may have been handed to MikroORM). */
  get hasKnex(): boolean {
    return this.handle !== undefined;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** The transacting knex client of `knex` (see `makeTransactingClient`). */
  client(): KnexClient {
    return (this.transactingClient ??= this.makeTransactingClient());
  }

  /** The transaction's connection: borrowed from the pool and begun on the first call. */
  connection(): Promise<unknown> {
    try {
      return Promise.resolve(this.begun());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Runs one statement with `?` placeholders on the transaction and returns its rows (none for a write
   * without RETURNING); SQLite statements are prepared once per connection. Driver errors come back as
   * MikroORM's exceptions (`UniqueConstraintViolationException`…), as from the ORM.
   */
  query<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    try {
      return Promise.resolve(this.queryDirect<R>(sql, params));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * `query`, answering the rows themselves where nothing has to wait: on SQLite once the transaction
   * has its connection, which the first statement takes at once when knex's pool has it free. Errors
   * throw, or reject the promise.
   */
  queryDirect<R>(sql: string, params: readonly unknown[]): R[] | Promise<R[]> {
    if (this.ended) throw this.endedError();
    const conn = this.conn ?? this.begun();
    if (conn instanceof Promise) {
      return conn.then((begun) => {
        if (this.ended) throw this.endedError();
        return this.run<R>(begun, sql, params);
      });
    }
    return this.run<R>(conn, sql, params);
  }

  private endedError(): Error {
    if (this.sentAlone) {
      // The statement has committed on its own: say why nothing can join it, and what keeps a transaction.
      return new Error(
        'This unit of work sent its one write without BEGIN and COMMIT, as declared by the code that opened ' +
          'it, and it has committed: nothing may follow it. A service whose postCreate reads or writes, or ' +
          'whose repository writes more than one row, must keep createInTransaction = true',
      );
    }
    return new Error('This unit of work has already ended; run the statement in a new UnitOfWork.run');
  }

  /** Whether no statement has been sent: the transaction has not begun, nor ended. */
  get isUnused(): boolean {
    return this.conn === undefined && this.opening === undefined && !this.ended;
  }

  /**
   * Runs one statement as the whole transaction: on a connection of the pool, without BEGIN and
   * COMMIT, since the database commits a single statement by itself, all or nothing. The transaction is
   * over afterwards, whether the statement succeeded or not. Only for a transaction that is unused, and
   * whose caller sends nothing else (see `UnitOfWork.query`'s `last`). Like `queryDirect`, it answers
   * the rows themselves where the connection is free at once.
   */
  queryAlone<R>(sql: string, params: readonly unknown[]): R[] | Promise<R[]> {
    if (!this.isUnused) throw new Error('queryAlone: the transaction has already sent a statement');
    this.ended = true;
    this.sentAlone = true;
    const client = this.baseClient();
    const conn = this.sqlite ? leaseFreeConnection(client) : undefined;
    if (conn !== undefined) {
      try {
        return this.run<R>(conn, sql, params) as R[];
      } finally {
        releaseLeased(client, conn);
      }
    }
    return client.acquireConnection().then(async (acquired) => {
      try {
        return await this.run<R>(acquired, sql, params);
      } finally {
        void client.releaseConnection(acquired);
      }
    });
  }

  /** One statement on `conn`: the rows at once on SQLite, a promise of them on PostgreSQL. */
  private run<R>(conn: unknown, sql: string, params: readonly unknown[]): R[] | Promise<R[]> {
    this.report(sql, params);
    if (!this.sqlite) {
      return (conn as PgConnection).query({ text: pgText(sql), values: params }).then(
        (result) => result.rows as R[],
        (err: unknown) => {
          throw this.db.orm.em.getDriver().convertException(err as Error);
        },
      );
    }
    try {
      const stmt = statement(conn as SqliteConnection, sql);
      if (stmt.reader) return stmt.all(...params) as R[];
      stmt.run(...params);
      return [];
    } catch (err) {
      throw this.db.orm.em.getDriver().convertException(err as Error);
    }
  }

  /**
   * Commits, or rolls back, and gives the connection back. A unit that never ran a statement has
   * nothing to end. After a failed COMMIT the transaction is rolled back before the connection goes
   * back to the pool (SQLite keeps it open after e.g. SQLITE_BUSY); the COMMIT's error is thrown.
   * Synchronous on SQLite once the transaction has its connection.
   */
  end(commit: boolean): void | Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (this.conn !== undefined) return this.finish(this.conn, commit);
    // BEGIN failed: open() gave the connection back already.
    return this.opening?.then(
      (conn) => this.finish(conn, commit),
      () => undefined,
    );
  }

  private finish(conn: unknown, commit: boolean): void | Promise<void> {
    const release = (): void => {
      this.conn = undefined;
      if (this.leased) releaseLeased(this.baseClient(), conn);
      else void this.baseClient().releaseConnection(conn);
    };
    if (this.sqlite) {
      try {
        this.execute(conn, commit ? 'commit' : 'rollback');
      } catch (err) {
        if (commit && (conn as SqliteConnection).inTransaction) {
          try {
            this.execute(conn, 'rollback');
          } catch {
            // The COMMIT's error is the one that matters.
          }
        }
        throw err;
      } finally {
        release();
      }
      return;
    }
    return this.finishPg(conn as PgConnection, commit).finally(release);
  }

  private async finishPg(conn: PgConnection, commit: boolean): Promise<void> {
    try {
      await this.execute(conn, commit ? 'commit' : 'rollback');
    } catch (err) {
      if (commit) {
        try {
          await this.execute(conn, 'rollback');
        } catch {
          // The COMMIT's error is the one that matters; the transaction is over on the server anyway.
        }
      }
      throw err;
    }
  }

  /**
   * The begun transaction's connection: on the first call BEGIN runs, at once on a SQLite connection
   * the pool has free (`leaseFreeConnection`), else after knex's pool hands one out.
   */
  private begun(): unknown {
    if (this.ended) throw this.endedError();
    if (this.conn !== undefined) return this.conn;
    if (this.opening) return this.opening;
    const client = this.baseClient();
    const conn = this.sqlite ? leaseFreeConnection(client) : undefined;
    if (conn === undefined) return (this.opening = this.open());
    this.leased = true;
    try {
      this.execute(conn, 'begin immediate');
    } catch (err) {
      this.leased = false;
      releaseLeased(client, conn);
      throw err;
    }
    this.conn = conn;
    return conn;
  }

  private async open(): Promise<unknown> {
    const client = this.baseClient();
    const conn = await client.acquireConnection();
    try {
      // SQLite: IMMEDIATE takes the write lock now, so a unit that reads and then writes (an If-Match
      // check, a read-back) never meets another process's commit in between: writers queue here, within
      // the busy timeout, instead of failing half-way with SQLITE_BUSY. In one process the pool's
      // single connection already serialises units.
      await this.execute(conn, this.sqlite ? 'begin immediate' : 'begin');
    } catch (err) {
      void client.releaseConnection(conn);
      throw err;
    }
    this.conn = conn;
    return conn;
  }

  /** A literal-free statement (BEGIN, COMMIT, ROLLBACK): synchronous on SQLite. */
  private execute(conn: unknown, sql: string): void | Promise<unknown> {
    this.report(sql, []);
    if (this.sqlite) {
      statement(conn as SqliteConnection, sql).run();
      return;
    }
    return (conn as PgConnection).query(sql);
  }

  private report(sql: string, params: readonly unknown[]): void {
    this.db.reportQuery({ sql, params, source: 'orm' });
  }

  private baseClient(): KnexClient {
    return this.db.connection.getKnex().client as unknown as KnexClient;
  }

  /**
   * A knex client bound to this transaction, made the way knex makes its own transaction clients
   * (`makeTxClient` in knex/lib/execution/transaction.js): a "transacting" copy of the pool's client
   * whose connection is always this transaction's, never released to the pool, and whose query events
   * reach the pool client's listeners (so `Database.onQuery` sees MikroORM's statements).
   */
  private makeTransactingClient(): KnexClient {
    const base = this.baseClient();
    const client = Object.create((base.constructor as { prototype: object }).prototype) as KnexClient;
    client.version = base.version;
    client.config = base.config;
    client.driver = base.driver;
    client.connectionSettings = base.connectionSettings;
    client.valueForUndefined = base.valueForUndefined;
    client.logger = base.logger;
    client.transacting = true;
    for (const event of EVENTS) client.on(event, (...args) => base.emit(event, ...args));
    client.acquireConnection = () => this.connection();
    client.releaseConnection = () => Promise.resolve();
    return client;
  }

  /** A knex savepoint transaction on this one, as `trx.transaction()` makes it in knex. */
  savepoint(container: ((trx: unknown) => unknown) | null | undefined, config: object = {}): unknown {
    const options = {
      ...config,
      userParams: {},
      doNotRejectOnRollback: (config as { doNotRejectOnRollback?: boolean }).doNotRejectOnRollback ?? true,
    };
    const client = this.client();
    if (container) return client.transaction(container, options, null);
    return new Promise((resolve, reject) => {
      client.transaction(resolve, options, null).catch(reject);
    });
  }
}

/**
 * The root of a transaction object. MikroORM marks a savepoint's transaction with a symbol property
 * (`parentTransaction`) pointing at the enclosing transaction; follow it up. The symbol is internal to
 * `@mikro-orm/knex`, hence the lookup by description (pinned version 6.6.16; covered by a test).
 */
export function rootTransaction(trx: object): object {
  let current = trx as Record<symbol, unknown>;
  for (;;) {
    const parentKey = Object.getOwnPropertySymbols(current).find((s) => s.description === 'parentTransaction');
    const parent = parentKey ? current[parentKey] : undefined;
    // A knex transaction is a function object; a unit's transaction is a plain object.
    if (!parent || (typeof parent !== 'object' && typeof parent !== 'function')) return current;
    current = parent as Record<symbol, unknown>;
  }
}
