import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { MikroORM, TransactionContext, type EntitySchema, type Options } from '@mikro-orm/core';
import type { AbstractSqlConnection, AbstractSqlPlatform } from '@mikro-orm/knex';
import { silentLogger, type Logger } from '../logging/logger.js';
import type { DatabaseSettings } from '../settings/lifecycle-settings.js';
import { loadDatabaseSettings, loadSecretKey } from '../settings/settings.js';
import { registeredModels } from './model-registry.js';
import { bindOrmStatements } from './bound-statements.js';
import { applyDecimalCompareFix } from './decimal-compare-fix.js';
import { applySqliteForeignKeyFix } from './sqlite-foreign-key-fix.js';
import { keepTransactionContextInCoreStore } from './transaction-context.js';

export type Dialect = 'sqlite' | 'postgresql';

/** One SQL statement sent to the database, by the ORM (writes, migrations) or by Core's read path. */
export interface QueryEvent {
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly source: 'orm' | 'read';
}

export type QueryListener = (event: QueryEvent) => void;

/** Where a `DATABASE_URL` points, parsed. */
export type DatabaseTarget =
  | { readonly dialect: 'sqlite'; readonly dbName: string }
  | {
      readonly dialect: 'postgresql';
      /** The URL for the driver, without Core's own parameter. */
      readonly clientUrl: string;
      /** Reads outside a unit of work use named prepared statements (`prepared_statements=false` turns them off). */
      readonly preparedStatements: boolean;
    };

/** Core's own `DATABASE_URL` parameter; it is taken out before the URL reaches the driver. */
const PREPARED_STATEMENTS_PARAM = 'prepared_statements';

/**
 * Parses `sqlite:./dev.db`, `sqlite:dev.db`, `sqlite:///abs/path.db`, `sqlite::memory:`,
 * `postgresql://user:pass@host:5432/db` (or `postgres://`), the latter with an optional
 * `?prepared_statements=false` for connection poolers that cannot keep them (PgBouncer in transaction
 * mode before 1.21). Anything else is an error that names the accepted forms and never repeats
 * credentials.
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const trimmed = url.trim();
  if (trimmed.startsWith('sqlite:')) {
    let path = trimmed.slice('sqlite:'.length);
    if (path.startsWith('///')) path = path.slice(2);
    else if (path.startsWith('//')) path = path.slice(2);
    if (path === '') throw new Error('DATABASE_URL "sqlite:" names no file: use sqlite:./dev.db or sqlite::memory:');
    return { dialect: 'sqlite', dbName: path };
  }
  if (/^postgres(ql)?:\/\//.test(trimmed)) return postgresTarget(trimmed);
  const scheme = /^([a-z0-9+.-]+):/i.exec(trimmed)?.[1] ?? trimmed.slice(0, 12);
  throw new Error(
    `Unsupported DATABASE_URL scheme "${scheme}": use sqlite:<path>, sqlite::memory: or postgresql://user:pass@host:5432/db`,
  );
}

function postgresTarget(url: string): DatabaseTarget {
  if (!url.includes(`${PREPARED_STATEMENTS_PARAM}=`))
    return { dialect: 'postgresql', clientUrl: url, preparedStatements: true };
  const parsed = new URL(url);
  const value = parsed.searchParams.get(PREPARED_STATEMENTS_PARAM);
  if (value !== 'true' && value !== 'false') {
    throw new Error(`DATABASE_URL: ${PREPARED_STATEMENTS_PARAM} must be true or false, not ${JSON.stringify(value)}`);
  }
  parsed.searchParams.delete(PREPARED_STATEMENTS_PARAM);
  return { dialect: 'postgresql', clientUrl: parsed.toString(), preparedStatements: value === 'true' };
}

export interface InitOptions {
  /** Entity schemas to load; defaults to every model defined with `defineModel`. */
  entities?: EntitySchema[];
  /** Where `echo` writes SQL and where the data layer logs. */
  logger?: Logger;
  /**
   * Secret that signs pagination cursors. Default: the `SECRET_KEY` setting (environment, then `.env`),
   * so cursors survive restarts and work on every instance with the same settings; only in development
   * without a `SECRET_KEY` is it a random key of this process (with a warning).
   */
  cursorSecret?: string;
  /**
   * Pool size and how long a request waits for a connection or a statement before it fails (and
   * answers 503). Default: the `DATABASE_*` settings (environment, then `.env`); what is given here wins.
   */
  database?: Partial<DatabaseSettings>;
  /** Extra MikroORM options (pool sizes, migrations…), merged last. */
  orm?: Partial<Options>;
}

/** Distinct SELECT texts kept prepared per SQLite connection (query shapes are bounded upstream too). */
const MAX_PREPARED = 1000;

/**
 * Distinct SELECT texts given a name on PostgreSQL, and so prepared once per read connection. The
 * server keeps each one for the connection's life, so past this many, statements run unnamed.
 */
const MAX_NAMED_PG = 500;

/**
 * A SELECT as the pg driver takes it: `$n` placeholders, and a name if it is prepared once per
 * connection. One object per distinct SELECT, shared by every call; `pgQuery` clears `name` for good
 * when the named form no longer fits the table.
 */
interface PgStatement {
  readonly text: string;
  name: string | undefined;
}

/** A better-sqlite3 statement, as far as Core uses it. */
interface SqliteStatement {
  all(...params: unknown[]): unknown[];
}

/** What Core reads of a freshly prepared better-sqlite3 statement. */
interface PreparedSqlite extends SqliteStatement {
  readonly reader: boolean;
  columns(): { name: string; type: string | null }[];
  safeIntegers(toggle: boolean): unknown;
  /** Rows as arrays of column values, in the statement's column order. */
  raw(toggle: boolean): unknown;
}

/** A raw better-sqlite3 connection, as the knex client hands it out or as Core opens it. */
interface SqliteHandle {
  prepare(sql: string): PreparedSqlite;
  pragma(source: string, options?: { simple: boolean }): unknown;
  defaultSafeIntegers(toggle: boolean): unknown;
  close(): unknown;
}
interface PgHandle {
  query(config: { text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}
/** A client of Core's PostgreSQL read pool, used through pg's callback API (no promise per step). */
interface PgPoolClient {
  query(
    config: { name?: string; text: string; values: unknown[] },
    callback: (err: Error | undefined, res: { rows: unknown[] }) => void,
  ): void;
}
/** A `pg.Pool`, as far as Core uses it. */
interface PgPool {
  connect(callback: (err: Error | undefined, client: PgPoolClient, release: (err?: Error) => void) => void): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  end(): Promise<void>;
}
interface KnexClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(conn: unknown): Promise<unknown>;
}
/** What Core reads from knex's pg client to open read connections the way it opens its own. */
interface PgKnexClient extends KnexClient {
  driver: { Pool: new (config: Record<string, unknown>) => PgPool };
  connectionSettings: Record<string, unknown>;
  config: { acquireConnectionTimeout?: number };
  searchPath?: unknown;
  pool?: { max: number; idleTimeoutMillis: number } | null;
}
/** What Core reads from knex's better-sqlite3 client to open a connection the way it does. */
interface BetterSqliteClient extends KnexClient {
  driver: new (
    filename: string,
    options: { readonly: boolean; fileMustExist: boolean; nativeBinding?: string },
  ) => SqliteHandle;
  connectionSettings: { filename: string; options?: { nativeBinding?: string; safeIntegers?: boolean } };
}

/**
 * Prepared statements of one SQLite connection by SQL text, at most `max` of them.
 *
 * Eviction is second-chance (CLOCK), an approximation of least-recently-used: a hit only sets a flag
 * on its entry, so the hot path never writes to the Map. When the cache is full, the oldest entry is
 * dropped unless it was used since it was last looked at; then it loses the flag and moves to the back.
 * Real LRU would delete and re-insert the entry on every hit, on every read of every request.
 */
class StatementCache {
  private readonly entries = new Map<string, { readonly stmt: SqliteStatement; used: boolean }>();

  constructor(
    readonly conn: SqliteHandle,
    private readonly max = MAX_PREPARED,
  ) {}

  get(sql: string): SqliteStatement {
    const hit = this.entries.get(sql);
    if (hit) {
      hit.used = true;
      return hit.stmt;
    }
    // Prepared before anything is evicted: a statement that does not compile changes nothing.
    const stmt = rowsByPosition(this.conn.prepare(sql), sql);
    if (this.entries.size >= this.max) this.evictOne();
    this.entries.set(sql, { stmt, used: false });
    return stmt;
  }

  /** Ends after at most one pass plus one entry: every entry it moves to the back has lost its flag. */
  private evictOne(): void {
    for (const [sql, entry] of this.entries) {
      this.entries.delete(sql);
      if (!entry.used) return;
      entry.used = false;
      this.entries.set(sql, entry);
    }
  }
}

/** A declared column type that holds 64-bit integers. */
const BIGINT_TYPE = /big\s*int|int8/i;

/**
 * A reading statement whose rows better-sqlite3 hands over as arrays (its raw mode), each turned into
 * the object it would have built, by a function compiled for the statement's columns: the same keys
 * in the same order, the same values. better-sqlite3 sets each column through V8's generic property
 * API, a slow path taken for every column of every row; an object literal of one fixed shape is built
 * by compiled code (docs/performance.md, "Rows built by position").
 *
 * better-sqlite3 reads integers as JavaScript numbers, which lose digits past 2^53: a bigint column's
 * 9007199254740993 would be read as …992. A statement that reads a column declared bigint reads its
 * integers as BigInts instead (better-sqlite3's safe integers), and turns every other column's back
 * into numbers, so only bigint values change form (the decoders write them as strings).
 */
function rowsByPosition(stmt: PreparedSqlite, sql: string): SqliteStatement {
  if (!stmt.reader) return stmt;
  const columns = stmt.columns();
  const names = columns.map((c) => c.name);
  const exact = columns.some((c) => c.type !== null && BIGINT_TYPE.test(c.type));
  if (exact) stmt.safeIntegers(true);
  const narrow = exact ? columns.map((c) => c.type === null || !BIGINT_TYPE.test(c.type)) : undefined;
  // A `*` (`select *`, `t.*`, `returning *`) is expanded from the table as it is when SQLite prepares the
  // statement again after a schema change, so the columns could differ from those compiled here; a
  // literal's `"__proto__": v` would set the prototype. Those keep better-sqlite3's objects.
  if (sql.includes('*') || names.includes('__proto__')) return narrow ? narrowedRows(stmt, names, narrow) : stmt;
  stmt.raw(true);
  const build = rowBuilder(names, narrow);
  return {
    all(...params: unknown[]): unknown[] {
      const rows = stmt.all(...params);
      for (let i = 0; i < rows.length; i++) rows[i] = build(rows[i] as unknown[]);
      return rows;
    },
  };
}

/** better-sqlite3's own row objects, with the BigInts of the columns `narrow` marks made numbers. */
function narrowedRows(stmt: PreparedSqlite, names: readonly string[], narrow: readonly boolean[]): SqliteStatement {
  const narrowed = names.filter((_, i) => narrow[i]);
  return {
    all(...params: unknown[]): unknown[] {
      const rows = stmt.all(...params) as Record<string, unknown>[];
      for (const row of rows) {
        for (const name of narrowed) {
          const value = row[name];
          if (typeof value === 'bigint') row[name] = Number(value);
        }
      }
      return rows;
    },
  };
}

/**
 * `(values) => ({ "<name 0>": values[0], … })`. `narrow[i]`: column i's BigInts become numbers. Names
 * are written as JSON strings, which are JavaScript string literals, so no name can break out.
 */
function rowBuilder(names: readonly string[], narrow?: readonly boolean[]): (values: unknown[]) => object {
  const fields = names.map((name, i) => `${JSON.stringify(name)}: ${narrow?.[i] ? `toNumber(v[${i}])` : `v[${i}]`}`);
  const make = new Function('toNumber', `return (v) => ({ ${fields.join(', ')} });`) as (
    toNumber: (value: unknown) => unknown,
  ) => (values: unknown[]) => object;
  return make((value) => (typeof value === 'bigint' ? Number(value) : value));
}

/**
 * An initialised database: the MikroORM instance used for writes (through the unit of work) plus a
 * hydration-free read primitive, `select`, used by the repositories' read path.
 *
 * Every statement — the ORM's and Core's own — is reported to `onQuery` listeners; `echo` is one such
 * listener. Tests count statements the same way.
 */
export class Database {
  readonly dialect: Dialect;
  readonly cursorSecret: string;
  private readonly listeners = new Set<QueryListener>();
  /** Statement caches of the pool's connections (a knex transaction hands out the same ones). */
  private readonly statements = new WeakMap<SqliteHandle, StatementCache>();
  /** PostgreSQL texts (and names) by Core's SQL text; see `pgStatement`. */
  private readonly pgStatements = new Map<string, PgStatement>();
  /** Whether reads through the read pool use named statements (`DatabaseTarget.preparedStatements`). */
  private readonly pgNamed: boolean;
  private pgNames = 0;
  /** The file of a SQLite database on disk, absolute; null for `:memory:` and PostgreSQL. */
  private readonly sqliteFile: string | null;
  /** The read-only connection: undefined until first needed, null where reads go through the pool. */
  private reader: StatementCache | null | undefined;
  /** PostgreSQL's read pool: undefined until first needed, null where reads go through knex's pool. */
  private pgReader: PgPool | null | undefined;

  constructor(
    readonly orm: MikroORM,
    dialect: Dialect,
    readonly logger: Logger,
    cursorSecret: string,
    options: { preparedStatements?: boolean } = {},
  ) {
    this.dialect = dialect;
    this.cursorSecret = cursorSecret;
    this.pgNamed = dialect === 'postgresql' && options.preparedStatements !== false;
    this.sqliteFile = dialect === 'sqlite' ? fileOf(this.knexClient as BetterSqliteClient) : null;
    this.connection.getKnex().on('query', (q: { sql: string; bindings?: unknown[] }) => {
      this.emit({ sql: q.sql, params: q.bindings ?? [], source: 'orm' });
    });
  }

  get connection(): AbstractSqlConnection {
    return this.orm.em.getConnection() as AbstractSqlConnection;
  }

  private get knexClient(): KnexClient {
    return this.connection.getKnex().client as KnexClient;
  }

  get platform(): AbstractSqlPlatform {
    return this.orm.em.getPlatform() as AbstractSqlPlatform;
  }

  /** Quotes an identifier for this dialect (`"tasks"` / `` `tasks` ``). */
  quote(identifier: string): string {
    return this.platform.quoteIdentifier(identifier);
  }

  /**
   * The placeholder of a bound LIMIT: `abs(?)` on SQLite, `?` on PostgreSQL. SQLite marks a statement
   * whose LIMIT is a bare parameter to be compiled again whenever that parameter is bound, and
   * better-sqlite3 binds every parameter on every run: a prepared `limit ?` statement was compiled
   * anew on every execution. An expression is evaluated at run time and keeps the bare parameter's
   * query plan (a literal limit would not: SQLite plans some searches differently for it). Limits are
   * never negative, so `abs` changes no value. docs/performance.md has the measurements.
   */
  get limitPlaceholder(): string {
    return this.dialect === 'sqlite' ? 'abs(?)' : '?';
  }

  /** Subscribes to every SQL statement; returns the unsubscribe function. */
  onQuery(listener: QueryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Reports a statement Core sent on a raw driver connection itself (the unit of work's BEGIN/COMMIT
   * and compiled inserts), so `onQuery` listeners see every statement, whoever sent it.
   */
  reportQuery(event: QueryEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private emit(event: QueryEvent): void {
    this.reportQuery(event);
  }

  /**
   * Runs one SELECT with `?` placeholders and returns plain rows — no entities, no identity map.
   *
   * Inside a transaction (a unit of work) it runs on that transaction, so it sees its own writes and
   * cannot deadlock on SQLite's single connection. Outside, a SQLite database on disk is read through
   * a read-only connection of its own, synchronously (see `selectSync`), and PostgreSQL through a read
   * pool of its own (see `pgReadPool`); `:memory:` borrows the pool's connection, waiting for any
   * transaction holding it.
   * Either way a read never sees another request's uncommitted rows. SQLite statements are prepared
   * once per connection and reused.
   */
  async select<R = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    const trx = this.transactionClient();
    const reader = trx ? null : this.readConnection();
    const values = this.report(sql, params);
    if (reader) return reader.get(sql).all(...values) as R[];
    const pool = trx ? null : this.pgReadPool();
    if (pool) return pgQuery<R>(pool, this.pgStatement(sql), values);
    // Inside a transaction, knex's transaction client hands out that transaction's own connection (and
    // its release is a no-op); outside, the pool's. Either way the statement runs on the raw driver.
    const client = trx ?? this.knexClient;
    const conn = await client.acquireConnection();
    try {
      if (this.dialect === 'sqlite') return this.prepared(conn as SqliteHandle, sql).all(...values) as R[];
      // Unnamed here: a transaction's connection comes from knex's pool, which Core does not track.
      const res = await (conn as PgHandle).query({ text: this.pgStatement(sql).text, values });
      return res.rows as R[];
    } finally {
      await client.releaseConnection(conn);
    }
  }

  /**
   * `select` without a promise, where the answer can be synchronous: outside a transaction, on a
   * SQLite database on disk (through the read-only connection). Returns undefined, having sent
   * nothing, where only `select` can read: inside a transaction, on `:memory:` or on PostgreSQL.
   *
   * ```ts
   * const rows = db.selectSync(sql, params) ?? (await db.select(sql, params));
   * ```
   */
  selectSync<R = Record<string, unknown>>(sql: string, params: readonly unknown[] = []): R[] | undefined {
    if (this.transactionClient()) return undefined;
    const reader = this.readConnection();
    if (!reader) return undefined;
    return reader.get(sql).all(...this.report(sql, params)) as R[];
  }

  /** The driver values of `params`, after telling the listeners about the statement. */
  private report(sql: string, params: readonly unknown[]): unknown[] {
    const values = params.map((v) => this.toDriverValue(v));
    if (this.listeners.size > 0) this.emit({ sql, params: values, source: 'read' });
    return values;
  }

  /** The knex client of the MikroORM transaction active in this async context, if any. */
  private transactionClient(): KnexClient | undefined {
    return TransactionContext.getEntityManager(this.orm.em.name)?.getTransactionContext<{ client: KnexClient }>()
      ?.client;
  }

  /**
   * The read-only connection of a SQLite file, opened on first use with the better-sqlite3 module and
   * settings of MikroORM's own connections. In WAL mode (which the writer connection sets) every
   * statement reads the last committed snapshot and never waits for, or blocks, the writer. If the file
   * is not in WAL mode (custom pool options replaced Core's `afterCreate`), a reader and a committing
   * writer would lock each other out — synchronously, on the event loop — so reads stay on the pool.
   */
  private readConnection(): StatementCache | null {
    if (this.reader !== undefined) return this.reader;
    this.reader = null;
    if (this.sqliteFile === null) return null;
    const client = this.knexClient as BetterSqliteClient;
    const options = client.connectionSettings.options ?? {};
    let conn: SqliteHandle;
    try {
      conn = new client.driver(this.sqliteFile, {
        readonly: true,
        fileMustExist: true,
        ...(options.nativeBinding !== undefined ? { nativeBinding: options.nativeBinding } : {}),
      });
    } catch (err) {
      // The pool still reads correctly, only slower: better than failing every read.
      this.logger.warn({ err }, 'could not open the read-only SQLite connection; reads go through the pool');
      return null;
    }
    if (conn.pragma('journal_mode', { simple: true }) !== 'wal') {
      conn.close();
      return null;
    }
    if (typeof options.safeIntegers === 'boolean') conn.defaultSafeIntegers(options.safeIntegers);
    this.reader = new StatementCache(conn);
    return this.reader;
  }

  /**
   * PostgreSQL's read pool: a `pg.Pool` of the pg driver knex loaded (so MikroORM's type parsers apply),
   * with knex's connection settings, pool size, idle timeout and acquire timeout. Reads outside a
   * unit of work take a connection from it with pg's callback API. Through knex they paid for its
   * pool's promises and timers on every read: 340 against 228 CPU µs per list request, interleaved
   * (raw `pg`: 164; docs/performance.md). The cost is connections: up to twice knex's `pool.max`.
   * A knex `searchPath` is set per connection by knex alone, so with one, reads stay on knex's pool.
   */
  private pgReadPool(): PgPool | null {
    if (this.pgReader !== undefined) return this.pgReader;
    this.pgReader = null;
    if (this.dialect !== 'postgresql') return null;
    const client = this.knexClient as PgKnexClient;
    if (client.searchPath || !client.pool || typeof client.driver?.Pool !== 'function') return null;
    const pool = new client.driver.Pool({
      ...client.connectionSettings,
      max: client.pool.max,
      idleTimeoutMillis: client.pool.idleTimeoutMillis,
      connectionTimeoutMillis: client.config.acquireConnectionTimeout ?? 60_000,
    });
    // An idle connection that breaks (a server restart) is dropped by the pool; unhandled, this event
    // would end the process.
    pool.on('error', (err) =>
      this.logger.warn({ err }, 'an idle PostgreSQL read connection failed; the pool replaces it'),
    );
    this.pgReader = pool;
    return pool;
  }

  /** The statement cache of one of the pool's SQLite connections. */
  private prepared(conn: SqliteHandle, sql: string): SqliteStatement {
    let cache = this.statements.get(conn);
    if (!cache) this.statements.set(conn, (cache = new StatementCache(conn)));
    return cache.get(sql);
  }

  /**
   * `?` → `$1, $2…` once per distinct statement (Core's SQL never holds a literal `?`), and a name for
   * the first `MAX_NAMED_PG` of them. A named statement is parsed and planned once per read connection
   * (pg remembers which it has sent), then only bound and executed: what the raw `pg` baseline does,
   * and it saves the server a parse and a plan on every read. PostgreSQL re-plans a named statement
   * by itself when a table it reads changes.
   */
  private pgStatement(sql: string): PgStatement {
    let statement = this.pgStatements.get(sql);
    if (statement === undefined) {
      let n = 0;
      const text = sql.replace(/\?/g, () => `$${++n}`);
      const name = this.pgNamed && this.pgNames < MAX_NAMED_PG ? `core_${++this.pgNames}` : undefined;
      statement = { text, name };
      this.pgStatements.set(sql, statement);
    }
    return statement;
  }

  /** better-sqlite3 binds neither booleans nor Dates; MikroORM stores SQLite datetimes as epoch ms. */
  toDriverValue(value: unknown): unknown {
    if (this.dialect !== 'sqlite') return value;
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (value instanceof Date) return value.getTime();
    return value;
  }

  /** Creates (or re-creates, dropping everything) the schema from the models: tests and the demo. */
  async resetSchema(): Promise<void> {
    await this.orm.schema.refreshDatabase();
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.reader?.conn.close();
    // Closed for good: a late read goes to the (closed) pool and fails there, instead of reopening.
    this.reader = null;
    const pgReader = this.pgReader;
    this.pgReader = null;
    await pgReader?.end();
    await this.orm.close(true);
  }
}

/**
 * Holds the app's database. `initApp` is step 2 of an app's wiring: after it, repositories and the
 * unit of work reach the database through `dbManager.db`.
 */
export class DatabaseManager {
  private current: Database | undefined;

  /**
   * Connects to `dbUrl` (see `parseDatabaseUrl`) with every registered model. With `echo`, each SQL
   * statement is logged at info level through `options.logger`.
   */
  async initApp(dbUrl: string, echo = false, options: InitOptions = {}): Promise<Database> {
    const target = parseDatabaseUrl(dbUrl);
    const logger = options.logger ?? silentLogger;
    applyDecimalCompareFix();
    keepTransactionContextInCoreStore();
    // A project without apps yet has no models: the database still opens (health checks, migrations).
    const entities = options.entities ?? registeredModels();
    const limits: DatabaseSettings = { ...loadDatabaseSettings(), ...options.database };
    const orm = await MikroORM.init({
      ...(await driverOptions(target, limits)),
      entities,
      // A unit of work always forks its own EntityManager; the global one must never hold request state.
      allowGlobalContext: false,
      forceUtcTimezone: true,
      discovery: { warnWhenNoEntities: false },
      ...options.orm,
    } as Options);
    bindOrmStatements(orm, target.dialect);
    const db = new Database(orm, target.dialect, logger, options.cursorSecret ?? cursorSecretFromSettings(logger), {
      preparedStatements: target.dialect === 'postgresql' && target.preparedStatements,
    });
    if (echo) db.onQuery((q) => logger.info({ sql: q.sql, params: q.params }, 'sql'));
    if (this.current) await this.current.close();
    this.current = db;
    return db;
  }

  /** The initialised database; throws when `initApp` has not run. */
  get db(): Database {
    if (!this.current) throw new Error('The database is not initialised: call `await dbManager.initApp(url)` first');
    return this.current;
  }

  get isInitialised(): boolean {
    return this.current !== undefined;
  }

  async close(): Promise<void> {
    const db = this.current;
    this.current = undefined;
    await db?.close();
  }
}

/** The SQLite writer connection's page cache: a negative `cache_size` is in KiB (SQLite's own default). */
export const WRITER_CACHE_KIB = -2000;

/** The app-wide database manager (step 2 of the wiring in `src/main.ts`). */
export const dbManager = new DatabaseManager();

async function driverOptions(target: DatabaseTarget, limits: DatabaseSettings): Promise<Partial<Options>> {
  // knex's own default is a minute of waiting for a connection: to a client, a hang.
  const acquireConnectionTimeout = limits.poolTimeoutMs;
  if (target.dialect === 'sqlite') {
    applySqliteForeignKeyFix();
    const { BetterSqliteDriver } =
      await importDriver<typeof import('@mikro-orm/better-sqlite')>('@mikro-orm/better-sqlite');
    const onDisk = target.dbName !== ':memory:';
    return {
      driver: BetterSqliteDriver,
      dbName: target.dbName,
      pool: {
        afterCreate: (conn: { pragma(s: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
          // WAL lets readers run beside a writer on a file database; foreign keys are off by default in SQLite.
          if (onDisk) {
            conn.pragma('journal_mode = WAL');
            // better-sqlite3 builds SQLite with a 16 MB page cache per connection. The writer's fills with
            // the random leaves of the primary-key index as rows are created, and the process keeps that
            // memory; SQLite's stock 2 MB is enough for writes (docs/performance.md, Memory). The read
            // connection keeps 16 MB: deep reads need it.
            conn.pragma(`cache_size = ${WRITER_CACHE_KIB}`);
          }
          conn.pragma('foreign_keys = ON');
          done(null, conn);
        },
      },
      driverOptions: { acquireConnectionTimeout },
    } as Partial<Options>;
  }
  const { PostgreSqlDriver } = await importDriver<typeof import('@mikro-orm/postgresql')>('@mikro-orm/postgresql');
  // A startup parameter of the pg driver, so every connection of both pools has it from the start;
  // Core's read pool copies these connection settings.
  const connection = limits.statementTimeoutMs > 0 ? { statement_timeout: limits.statementTimeoutMs } : {};
  return {
    driver: PostgreSqlDriver,
    clientUrl: target.clientUrl,
    pool: { max: limits.poolMax },
    driverOptions: { acquireConnectionTimeout, connection },
  } as Partial<Options>;
}

/**
 * One statement on a connection of `pool`: one promise for the caller, callbacks inside.
 *
 * A named statement whose result columns changed since this connection prepared it (`select *` on a
 * table a migration has since altered) fails with "cached plan must not change result type": it is
 * run again unnamed on the same connection, and loses its name, so every later call runs unnamed too.
 */
function pgQuery<R>(pool: PgPool, statement: PgStatement, values: unknown[]): Promise<R[]> {
  return new Promise<R[]>((resolve, reject) => {
    pool.connect((connectErr, client, release) => {
      if (connectErr) {
        reject(connectErr);
        return;
      }
      const done = (err: Error | undefined, res: { rows: unknown[] }): void => {
        // A connection whose query failed goes back to the pool only if the error was the statement's
        // own (the server answered); a broken connection is destroyed instead.
        release(err && !('severity' in err) ? err : undefined);
        if (err) reject(err);
        else resolve(res.rows as R[]);
      };
      const { text, name } = statement;
      if (name === undefined) {
        client.query({ text, values }, done);
        return;
      }
      client.query({ name, text, values }, (err, res) => {
        if (!err || (err as { code?: string }).code !== STALE_PLAN) return done(err, res);
        statement.name = undefined;
        client.query({ text, values }, done);
      });
    });
  });
}

/** SQLSTATE of "cached plan must not change result type" (feature_not_supported). */
const STALE_PLAN = '0A000';

/** The absolute path of a SQLite database on disk, or null for an in-memory or temporary one. */
function fileOf(client: BetterSqliteClient): string | null {
  const filename = client.connectionSettings.filename;
  if (filename === '' || filename === ':memory:' || filename.startsWith('file:')) return null;
  // Resolved now, as the writer connection opened it: a later chdir must not point reads elsewhere.
  return resolve(filename);
}

const requireUnbundled = createRequire(import.meta.url);

/**
 * MikroORM 6's drivers are CommonJS, loaded with `require`: an `import` of CommonJS makes Node scan
 * every file the driver re-exports (MikroORM and knex: hundreds) for export names, which would
 * lengthen every start (docs/performance.md, "Cold start: where the time goes").
 *
 * The `require` calls name each driver literally, for the project's production build: the bundler
 * copies the driver into the bundle beside the one MikroORM it bundles (a driver from node_modules
 * would load a second `@mikro-orm/core`, which knows none of the models). Unbundled, this module is
 * an ES module, which has no `require`; `createRequire` loads the driver from node_modules.
 */
const DRIVERS = {
  '@mikro-orm/better-sqlite': () =>
    typeof require === 'function' ? require('@mikro-orm/better-sqlite') : requireUnbundled('@mikro-orm/better-sqlite'),
  '@mikro-orm/postgresql': () =>
    typeof require === 'function' ? require('@mikro-orm/postgresql') : requireUnbundled('@mikro-orm/postgresql'),
} satisfies Record<string, () => unknown>;

async function importDriver<T>(name: keyof typeof DRIVERS): Promise<T> {
  try {
    return DRIVERS[name]() as T;
  } catch (err) {
    throw new Error(`The database driver ${name} is not installed: run \`npm install -E ${name}@6.6.16\``, {
      cause: err,
    });
  }
}

/**
 * `SECRET_KEY`, as `loadSettings` reads and checks it (outside development a missing or short key is
 * an error). A process that signed cursors with a key of its own would refuse every cursor issued
 * before a restart or by another instance.
 */
function cursorSecretFromSettings(logger: Logger): string {
  const { secretKey, secretKeyIsEphemeral } = loadSecretKey({ logger: { warn: () => undefined } });
  if (secretKeyIsEphemeral) {
    logger.warn(
      { setting: 'SECRET_KEY' },
      'SECRET_KEY is not set: pagination cursors are signed with a random key of this process, so they stop working on restart and on other instances. Set SECRET_KEY in .env.',
    );
  }
  return secretKey;
}
