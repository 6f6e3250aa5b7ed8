/**
 * Makes MikroORM send the values of its statements as bound parameters.
 *
 * MikroORM 6.6 writes every value into the SQL text (`Platform.formatQuery`) before knex sends the
 * statement: the inserts and `case when` batch updates of a flush, deletes, entity and collection
 * loads. A value then has to survive the platform's escaping as SQL text, and some cannot: SQLite
 * reads a NUL character as the end of the statement (`unrecognized token`, a 500 for a string the
 * client sent). Each connection's `execute` is replaced here by one that keeps the `?` placeholders
 * and hands the values to the driver, as Core's own statements do. Logging is unchanged: MikroORM's
 * logger still gets the statement with its values written in.
 *
 * A value is bound as MikroORM would have written it: raw SQL fragments (`raw('default')`, a custom
 * type's SQL) stay SQL with their own values bound, `??` is a quoted identifier, an array is a list
 * (`in (?, ?)`), a plain object or a JSON-marked array is its JSON text, and a Date is what the
 * platform writes (epoch milliseconds on SQLite, ISO text on PostgreSQL). The rare statement that
 * needs a literal `?` on SQLite, or holds a knex raw object, keeps MikroORM's own formatting: knex
 * has no way to pass either through alongside bound values.
 */
import { JsonProperty, Utils, type MikroORM } from '@mikro-orm/core';
import type { AbstractSqlConnection, AbstractSqlPlatform } from '@mikro-orm/knex';
import type { Dialect } from './database.js';

type Method = 'all' | 'get' | 'run';

interface KnexQueryLike {
  client: { transacting?: boolean };
  toSQL(): { sql: string; bindings?: readonly unknown[] };
}

interface KnexRaw extends PromiseLike<unknown> {
  transacting(ctx: unknown): KnexRaw;
}

/** What `execute` uses of a connection; most of it is protected in MikroORM's types. */
interface ConnectionInternals {
  execute(
    query: string | KnexQueryLike,
    params?: unknown[],
    method?: Method,
    ctx?: unknown,
    loggerContext?: object,
  ): Promise<unknown>;
  ensureConnection(): Promise<void>;
  config: {
    get(key: 'onQuery'): (sql: string, params: readonly unknown[]) => string;
    getLogger(): { isEnabled(ns: string, ctx?: object): boolean };
  };
  platform: AbstractSqlPlatform;
  getKnex(): { raw(sql: string, bindings?: readonly unknown[]): KnexRaw };
  getSql(query: string, formatted: string, context?: object): string;
  executeQuery<T>(query: string, cb: () => Promise<T>, context?: object): Promise<T>;
  transformRawResult<T>(res: unknown, method: Method): T;
}

interface DriverInternals {
  getConnection(type?: 'read' | 'write'): AbstractSqlConnection;
  replicas?: AbstractSqlConnection[];
}

const patched = new WeakSet<object>();

/** Replaces `execute` on every connection of `orm` (the writer and any read replicas). */
export function bindOrmStatements(orm: MikroORM, dialect: Dialect): void {
  const driver = orm.em.getDriver() as unknown as DriverInternals;
  for (const connection of [driver.getConnection('write'), ...(driver.replicas ?? [])]) {
    const conn = connection as unknown as ConnectionInternals;
    if (patched.has(conn)) continue;
    patched.add(conn);
    const formatted = conn.execute;
    const literalQuestionMark = dialect === 'postgresql' ? '\\?' : undefined;
    conn.execute = async function execute(
      this: ConnectionInternals,
      query,
      params = [],
      method = 'all',
      ctx,
      loggerContext,
    ) {
      if (typeof query !== 'string') {
        ctx ??= query.client.transacting ? query : undefined;
        const compiled = query.toSQL();
        query = compiled.sql;
        params = [...(compiled.bindings ?? [])];
      }
      await this.ensureConnection();
      const sql = this.config.get('onQuery')(query, params);
      const bound: BoundStatement = { sql: '', bindings: [] };
      if (!bindInto(bound, sql, params, this.platform, literalQuestionMark)) {
        // MikroORM's own execute applies `onQuery` itself: it gets the statement as it came.
        return formatted.call(this, query, params, method, ctx, loggerContext);
      }
      const logParams = this.config.getLogger().isEnabled('query-params', loggerContext);
      const logged = this.getSql(sql, logParams ? this.platform.formatQuery(sql, params) : sql, loggerContext);
      return this.executeQuery(
        logged,
        async () => {
          const raw =
            bound.bindings.length > 0 ? this.getKnex().raw(bound.sql, bound.bindings) : this.getKnex().raw(bound.sql);
          if (ctx) raw.transacting(ctx);
          return this.transformRawResult(await raw, method);
        },
        { query: sql, params, ...loggerContext },
      );
    };
  }
}

interface BoundStatement {
  sql: string;
  bindings: unknown[];
}

/**
 * Appends `sql` to `out` with each `?` left as a placeholder and its value added to `out.bindings`
 * (walking the text as `Platform.formatQuery` does). False when the statement cannot be bound.
 */
function bindInto(
  out: BoundStatement,
  sql: string,
  params: readonly unknown[],
  platform: AbstractSqlPlatform,
  literalQuestionMark: string | undefined,
): boolean {
  let next = 0;
  let pos = 0;
  for (;;) {
    const at = sql.indexOf('?', pos);
    if (at === -1) {
      out.sql += sql.slice(pos);
      return true;
    }
    if (at > 0 && sql[at - 1] === '\\') {
      if (literalQuestionMark === undefined) return false;
      out.sql += sql.slice(pos, at - 1) + literalQuestionMark;
      pos = at + 1;
      continue;
    }
    out.sql += sql.slice(pos, at);
    if (sql[at + 1] === '?') {
      out.sql += platform.quoteIdentifier(String(params[next++]));
      pos = at + 2;
      continue;
    }
    if (!bindValue(out, params[next++], platform, literalQuestionMark)) return false;
    pos = at + 1;
  }
}

function bindValue(
  out: BoundStatement,
  value: unknown,
  platform: AbstractSqlPlatform,
  literalQuestionMark: string | undefined,
): boolean {
  if (value === undefined || value === null) {
    out.sql += '?';
    out.bindings.push(null);
    return true;
  }
  if (Utils.isRawSql(value)) return bindInto(out, value.sql, value.params ?? [], platform, literalQuestionMark);
  if (platform.isRaw(value)) return false;
  if (Array.isArray(value) && !(value as { [JsonProperty]?: unknown })[JsonProperty]) {
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.sql += ', ';
      const item: unknown = value[i];
      if (Array.isArray(item)) {
        out.sql += '(';
        if (!bindValue(out, item, platform, literalQuestionMark)) return false;
        out.sql += ')';
      } else if (!bindValue(out, item, platform, literalQuestionMark)) {
        return false;
      }
    }
    return true;
  }
  out.sql += '?';
  out.bindings.push(driverValue(value, platform));
  return true;
}

/** A value as the driver should receive it, matching what MikroORM would have written into the text. */
function driverValue(value: unknown, platform: AbstractSqlPlatform): unknown {
  if (
    Utils.isPlainObject(value) ||
    (typeof value === 'object' && (value as { [JsonProperty]?: unknown })[JsonProperty])
  ) {
    return JSON.stringify(value);
  }
  if (value instanceof Date) {
    // SQLite's platform writes epoch milliseconds (knex binds a Date the same way); PostgreSQL's, its own text.
    const formatDate = (platform as unknown as { formatDate?: (date: Date) => string }).formatDate;
    return typeof formatDate === 'function' ? formatDate.call(platform, value) : value;
  }
  return value;
}
