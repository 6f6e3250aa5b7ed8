import type { Database } from '../db/database.js';
import type { Row } from '../model/types.js';
import type { Base } from '../model/base.js';
import type { SearchLimits } from './limits.js';
import { materializeRows } from './row-loader.js';
import type { CompiledShape } from './shape-compiler.js';
import { countPlaceholders } from './sql-text.js';
import type { LeafSources } from './where-binder.js';

/** Where the predicate "after the cursor row" comes from: compiled text plus its parameters. */
export interface KeysetBinding {
  readonly mask: number;
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** What `SearchEngine` hands a new query: the compiled shape and this request's bound values. */
export interface BaseQueryInit {
  readonly shape: CompiledShape;
  /** The values of the scoped joins in the shape's `from` (none without row scopes). */
  readonly fromParams?: readonly unknown[];
  readonly where: { readonly sql: string | null; readonly params: readonly unknown[] };
  /** The leaves the statement was bound with; its to-many includes bind their row scopes from them. */
  readonly sources?: LeafSources;
  readonly limits: Readonly<SearchLimits>;
  readonly keyset?: KeysetBinding;
  readonly limit?: number;
  readonly offset?: number;
}

function checkFragment(method: string, sql: string, params: readonly unknown[]): void {
  if (typeof sql !== 'string' || sql.trim() === '')
    throw new Error(`BaseQuery.${method} needs an SQL fragment, received ${JSON.stringify(sql)}`);
  const n = countPlaceholders(sql);
  if (n !== params.length) {
    throw new Error(
      `BaseQuery.${method}: the fragment has ${n} '?' placeholders but ${params.length} params were given; they must match (write no literal '?')`,
    );
  }
}

/**
 * The compiled SELECT of a search, open for extension before it runs: the base query a repository or
 * search engine may narrow. The caller's row scope is already in it (see `BaseRepository.buildBaseQuery`):
 * a fragment can narrow the rows further, never widen them.
 *
 * ```ts
 * const q = engine.buildBaseQuery({ filters: [{ field: 'is_completed', op: 'eq', value: false }], include: ['project'] });
 * const rows = await q.where(`${q.column('points')} % 2 = ?`, [0]).limit(10).execute();
 * ```
 *
 * - `where(sql, params)` ANDs a fragment with `?` placeholders (quote identifiers, or use `column()`).
 * - `orderBy(sql, params)` adds a leading sort expression; the request's sort and the primary-key
 *   tiebreaker stay behind it, so the order remains total.
 * - `limit(n)` / `offset(n)`; without a limit every matching row is read.
 * - `execute()` runs the statement (plus one per to-many include) and returns plain rows.
 * - `toSQL()` shows the statement and its parameters without running it.
 *
 * The request's filters, sort, include, limit, offset and cursor are already applied. Fragments are
 * trusted SQL: never build them from user input other than through `params`.
 */
export class BaseQuery<M extends Base = Base> {
  /** Alias of the searched model's table in the statement (`t0`). */
  readonly alias: string;
  private readonly wheres: { sql: string; params: readonly unknown[] }[] = [];
  private readonly orders: { sql: string; params: readonly unknown[] }[] = [];
  private limitValue: number | undefined;
  private offsetValue: number | undefined;

  constructor(
    private readonly db: Database,
    private readonly init: BaseQueryInit,
  ) {
    this.alias = init.shape.rootAlias;
    this.limitValue = init.limit;
    this.offsetValue = init.offset;
  }

  /** The qualified, quoted column of a field of the searched model, for use in fragments. */
  column(field: string): string {
    return this.init.shape.env.column(field);
  }

  where(sql: string, params: readonly unknown[] = []): this {
    checkFragment('where', sql, params);
    this.wheres.push({ sql, params });
    return this;
  }

  orderBy(sql: string, params: readonly unknown[] = []): this {
    checkFragment('orderBy', sql, params);
    this.orders.push({ sql, params });
    return this;
  }

  /** At most `n` rows; `null` removes the limit. */
  limit(n: number | null): this {
    if (n !== null && (!Number.isSafeInteger(n) || n < 0))
      throw new Error(`BaseQuery.limit needs an integer of 0 or more, received ${String(n)}`);
    this.limitValue = n ?? undefined;
    return this;
  }

  offset(n: number): this {
    if (!Number.isSafeInteger(n) || n < 0)
      throw new Error(`BaseQuery.offset needs an integer of 0 or more, received ${String(n)}`);
    this.offsetValue = n === 0 ? undefined : n;
    return this;
  }

  /** The statement and its parameters, in placeholder order. */
  toSQL(): { sql: string; params: unknown[] } {
    const { shape, where, keyset, fromParams } = this.init;
    const params: unknown[] =
      fromParams && fromParams.length > 0 ? [...fromParams, ...where.params] : [...where.params];
    if (keyset) params.push(...keyset.params);
    for (const w of this.wheres) params.push(...w.params);
    for (const o of this.orders) params.push(...o.params);
    if (this.limitValue !== undefined) params.push(this.limitValue);
    if (this.offsetValue !== undefined) params.push(this.offsetValue);

    // The common case — no fragments, static WHERE — reuses one string per mode, so the driver's
    // prepared-statement cache sees the same text every time.
    const staticWhere = shape.where.empty || shape.where.sql !== null;
    const plain = staticWhere && this.wheres.length === 0 && this.orders.length === 0;
    const mode = `${keyset ? `k${keyset.mask}` : '-'}${this.limitValue !== undefined ? 'L' : ''}${this.offsetValue !== undefined ? 'O' : ''}`;
    if (plain) {
      const cached = shape.statements.get(mode);
      if (cached !== undefined) return { sql: cached, params };
    }
    const conditions: string[] = [];
    if (where.sql !== null) conditions.push(`(${where.sql})`);
    if (keyset) conditions.push(keyset.sql);
    for (const w of this.wheres) conditions.push(`(${w.sql})`);
    let sql = shape.from;
    if (conditions.length > 0) sql += ` where ${conditions.join(' and ')}`;
    sql += ` order by ${[...this.orders.map((o) => o.sql), shape.sort.orderBy].join(', ')}`;
    if (this.limitValue !== undefined) sql += ` limit ${this.db.limitPlaceholder}`;
    // SQLite accepts OFFSET only after a LIMIT; -1 means none.
    if (this.offsetValue !== undefined)
      sql += this.limitValue === undefined && this.db.dialect === 'sqlite' ? ' limit -1 offset ?' : ' offset ?';
    if (plain) shape.statements.set(mode, sql);
    return { sql, params };
  }

  /** Runs the query; included relations are loaded (to-one joined, to-many one statement each). */
  async execute(): Promise<Row<M>[]> {
    const rows = await this.fetchRaw();
    return (await materializeRows(
      this.db,
      this.init.shape.plan,
      rows,
      this.init.limits,
      this.init.sources,
      this.init.shape.rowsAreOutput,
    )) as Row<M>[];
  }

  /**
   * @internal Raw rows, for the engine's pagination (it needs the sort values of the last row); not a
   * promise when the database answers synchronously (`Database.selectSync`).
   */
  fetchRaw(): Record<string, unknown>[] | Promise<Record<string, unknown>[]> {
    const { sql, params } = this.toSQL();
    return (
      this.db.selectSync<Record<string, unknown>>(sql, params) ?? this.db.select<Record<string, unknown>>(sql, params)
    );
  }
}
