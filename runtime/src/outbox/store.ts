/**
 * `core_outbox`, as the unit of work writes it and the relay reads it. The table is created by Core's
 * own migrations (`migrations/core-migrations.ts`):
 *
 * | column | |
 * |---|---|
 * | `seq` | auto-increment key: the relay publishes in this order |
 * | `id`, `name`, `body` | the event id (`Nats-Msg-Id`), its name (the subject's end), the message body |
 * | `occurred_at` | when it was raised |
 * | `published_at` | null while pending; set when the broker acknowledged it (pruned after the retention) |
 * | `attempts`, `last_error` | failed publishes of this row, and the last reason |
 *
 * Timestamps are `timestamptz` on PostgreSQL and epoch milliseconds on SQLite, as MikroORM stores them there.
 */
import type { Database } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import type { OutboxRecord } from './message.js';

export const OUTBOX_TABLE = 'core_outbox';

/** Rows per INSERT: four parameters each, well under SQLite's and PostgreSQL's parameter limits. */
const INSERT_CHUNK = 250;

/** The INSERT of `count` rows, with `?` placeholders (the unit of work's `query` takes those). */
export function insertSql(db: Database, count: number): string {
  const table = db.quote(OUTBOX_TABLE);
  const columns = ['id', 'name', 'body', 'occurred_at'].map((c) => db.quote(c)).join(', ');
  return `insert into ${table} (${columns}) values ${Array.from({ length: count }, () => '(?, ?, ?, ?)').join(', ')}`;
}

/** The statements and parameters that insert `records`, in order. */
export function insertStatements(db: Database, records: readonly OutboxRecord[]): { sql: string; params: unknown[] }[] {
  const statements: { sql: string; params: unknown[] }[] = [];
  for (let at = 0; at < records.length; at += INSERT_CHUNK) {
    const chunk = records.slice(at, at + INSERT_CHUNK);
    const params: unknown[] = [];
    for (const r of chunk)
      params.push(r.id, r.name, r.body, db.dialect === 'sqlite' ? r.occurredAt.getTime() : r.occurredAt);
    statements.push({ sql: insertSql(db, chunk.length), params });
  }
  return statements;
}

/** A pending row, as the relay reads it. */
export interface PendingRow {
  readonly seq: string | number;
  readonly id: string;
  readonly name: string;
  readonly body: string;
}

export type RowOutcome = { readonly ok: true } | { readonly ok: false; readonly error: string };

/** The relay's access to `core_outbox`, on a connection of its own where the database has several. */
export interface RelayStore {
  /**
   * Claims up to `limit` pending rows, oldest first, hands them to `publish`, and records its outcome
   * per row (published, or one more failed attempt). Returns the number of rows claimed.
   */
  claim(limit: number, publish: (rows: readonly PendingRow[]) => Promise<readonly RowOutcome[]>): Promise<number>;
  /** Deletes up to `limit` rows published before `before`; returns how many. */
  prune(before: Date, limit: number): Promise<number>;
  close(): Promise<void>;
}

export function relayStore(db: Database, logger: () => Logger): RelayStore {
  return db.dialect === 'postgresql' ? new PgRelayStore(db, logger) : new SqliteRelayStore(db);
}

const ERROR_MAX = 1000;

function failures(rows: readonly PendingRow[], outcomes: readonly RowOutcome[]): Map<string, (string | number)[]> {
  const byError = new Map<string, (string | number)[]>();
  outcomes.forEach((outcome, i) => {
    if (outcome.ok) return;
    const error = outcome.error.slice(0, ERROR_MAX);
    const list = byError.get(error) ?? [];
    list.push(rows[i]!.seq);
    byError.set(error, list);
  });
  return byError;
}

// PostgreSQL -----------------------------------------------------------------------------------------

interface PgClient {
  connect(): Promise<void>;
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}
interface PgKnexClient {
  driver: { Client: new (config: Record<string, unknown>) => PgClient };
  connectionSettings: Record<string, unknown>;
}

/**
 * One `pg.Client` of its own, opened on first use with the pool's connection settings. The claim is a
 * transaction that holds its rows (`FOR UPDATE SKIP LOCKED`: another instance's relay skips them) while
 * they are published: a broker that stops answering holds this connection, never one of the pool's.
 */
class PgRelayStore implements RelayStore {
  private client: PgClient | undefined;
  private opening: Promise<PgClient> | undefined;
  private closed = false;

  constructor(
    private readonly db: Database,
    private readonly logger: () => Logger,
  ) {}

  async claim(
    limit: number,
    publish: (rows: readonly PendingRow[]) => Promise<readonly RowOutcome[]>,
  ): Promise<number> {
    const t = this.db.quote(OUTBOX_TABLE);
    const client = await this.connection();
    try {
      await client.query('begin');
      const { rows } = await client.query(
        `select "seq", "id", "name", "body" from ${t} where "published_at" is null order by "seq" limit $1 for update skip locked`,
        [limit],
      );
      const pending = rows as PendingRow[];
      if (pending.length > 0) {
        const outcomes = await publish(pending);
        const published = pending.filter((_row, i) => outcomes[i]!.ok).map((row) => row.seq);
        if (published.length > 0)
          await client.query(`update ${t} set "published_at" = now() where "seq" = any($1::bigint[])`, [published]);
        for (const [error, seqs] of failures(pending, outcomes)) {
          await client.query(
            `update ${t} set "attempts" = "attempts" + 1, "last_error" = $2 where "seq" = any($1::bigint[])`,
            [seqs, error],
          );
        }
      }
      await client.query('commit');
      return pending.length;
    } catch (err) {
      // The claim is released by the rollback (or by the server when the connection is gone).
      await client.query('rollback').catch(() => this.drop(client));
      throw err;
    }
  }

  async prune(before: Date, limit: number): Promise<number> {
    const t = this.db.quote(OUTBOX_TABLE);
    const client = await this.connection();
    const res = await client.query(
      `delete from ${t} where "seq" in (select "seq" from ${t} where "published_at" < $1 order by "published_at" limit $2)`,
      [before, limit],
    );
    return res.rowCount ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.opening?.catch(() => undefined));
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private connection(): Promise<PgClient> {
    if (this.closed) return Promise.reject(new Error('the outbox relay is stopped'));
    if (this.client) return Promise.resolve(this.client);
    return (this.opening ??= this.open().finally(() => (this.opening = undefined)));
  }

  private async open(): Promise<PgClient> {
    const knexClient = this.db.connection.getKnex().client as unknown as PgKnexClient;
    const client = new knexClient.driver.Client({ ...knexClient.connectionSettings, connectionTimeoutMillis: 10_000 });
    // A connection that breaks while idle (a server restart) is replaced on the next pass; unhandled,
    // this event would end the process.
    client.on('error', (err) => {
      this.logger().warn({ err }, 'outbox relay: its PostgreSQL connection failed; it reconnects on the next pass');
      this.drop(client);
    });
    await client.connect();
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error('the outbox relay is stopped');
    }
    this.client = client;
    return client;
  }

  private drop(client: PgClient): void {
    if (this.client === client) this.client = undefined;
    void client.end().catch(() => undefined);
  }
}

// SQLite ----------------------------------------------------------------------------------------------

interface SqliteStatement {
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number };
}
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}
interface KnexPoolClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(conn: unknown): Promise<unknown>;
}

/**
 * The pool's connection, borrowed for each step and given back before anything is awaited: SQLite runs
 * statements synchronously, so the relay never holds it while it waits for the broker. There is no
 * claim: one instance per SQLite database is the supported shape (a second process on the same file
 * would publish the same rows too, stored once only within the broker's duplicate window).
 */
class SqliteRelayStore implements RelayStore {
  private readonly statements = new WeakMap<object, Map<string, SqliteStatement>>();

  constructor(private readonly db: Database) {}

  async claim(
    limit: number,
    publish: (rows: readonly PendingRow[]) => Promise<readonly RowOutcome[]>,
  ): Promise<number> {
    const t = this.db.quote(OUTBOX_TABLE);
    const pending = await this.with(
      (conn) =>
        this.statement(
          conn,
          `select "seq", "id", "name", "body" from ${t} where "published_at" is null order by "seq" limit ?`,
        ).all(limit) as PendingRow[],
    );
    if (pending.length === 0) return 0;
    const outcomes = await publish(pending);
    await this.with((conn) => {
      this.statement(conn, 'begin').run();
      try {
        const now = Date.now();
        const mark = this.statement(conn, `update ${t} set "published_at" = ? where "seq" = ?`);
        const fail = this.statement(
          conn,
          `update ${t} set "attempts" = "attempts" + 1, "last_error" = ? where "seq" = ?`,
        );
        pending.forEach((row, i) => {
          const outcome = outcomes[i]!;
          if (outcome.ok) mark.run(now, row.seq);
          else fail.run(outcome.error.slice(0, ERROR_MAX), row.seq);
        });
        this.statement(conn, 'commit').run();
      } catch (err) {
        this.statement(conn, 'rollback').run();
        throw err;
      }
    });
    return pending.length;
  }

  async prune(before: Date, limit: number): Promise<number> {
    const t = this.db.quote(OUTBOX_TABLE);
    return this.with(
      (conn) =>
        this.statement(
          conn,
          `delete from ${t} where "seq" in (select "seq" from ${t} where "published_at" < ? order by "published_at" limit ?)`,
        ).run(before.getTime(), limit).changes,
    );
  }

  async close(): Promise<void> {}

  private async with<T>(fn: (conn: SqliteConnection) => T): Promise<T> {
    const client = this.db.connection.getKnex().client as unknown as KnexPoolClient;
    const conn = (await client.acquireConnection()) as SqliteConnection;
    try {
      return fn(conn);
    } finally {
      void client.releaseConnection(conn);
    }
  }

  private statement(conn: SqliteConnection, sql: string): SqliteStatement {
    let cache = this.statements.get(conn);
    if (!cache) this.statements.set(conn, (cache = new Map()));
    let stmt = cache.get(sql);
    if (!stmt) cache.set(sql, (stmt = conn.prepare(sql)));
    return stmt;
  }
}
