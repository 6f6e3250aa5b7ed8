import { getContext, type CoreContext } from '../context/context.js';
import type { Base, ModelClass } from '../model/base.js';
import type { Database } from '../db/database.js';
import type { Page, Row } from '../model/types.js';
import { BaseQuery, type KeysetBinding } from './base-query.js';
import { CursorCodec, cursorBinding } from './cursor.js';
import type { FieldHandler } from './filter-compiler.js';
import { invalid } from '../model/issues.js';
import { buildKeyset, nullMask } from './keyset.js';
import { limitsKey, resolveSearchLimits, type SearchLimits } from './limits.js';
import { modelInfo, type ModelInfo } from '../model/model-info.js';
import { analyzeRequest, type AnalyzedRequest, type AnalyzeOptions } from './request-shape.js';
import { materializeRows, materializeRowsSync } from './row-loader.js';
import type { SearchRequest } from './search-request.js';
import { type RowAction, scopeRequest } from './row-scope.js';
import { compiledShape, restrictionKey, type CompiledShape } from './shape-compiler.js';
import { bindParams, bindWhere, type LeafSources } from './where-binder.js';

export interface SearchEngineOptions {
  /** Nesting limit of and/or groups; a group inside the top-level `filters` array is level 1. Default 3. */
  maxDepth?: number;
  limits?: Partial<SearchLimits>;
}

/** A handler's identity is part of a shape's cache key: the same function shares compiled statements. */
const handlerIds = new WeakMap<FieldHandler, number>();
let nextHandlerId = 1;
function handlerId(handler: FieldHandler): number {
  let id = handlerIds.get(handler);
  if (id === undefined) handlerIds.set(handler, (id = nextHandlerId++));
  return id;
}

/**
 * An engine's settings as `analyzeRequest` reads them. A class, not a literal with an arrow function:
 * bundles built with `keepNames` pay a `defineProperty` for every function expression evaluated.
 */
class EngineAnalyzeOptions implements AnalyzeOptions {
  constructor(
    readonly maxDepth: number,
    readonly limits: Readonly<SearchLimits>,
    private readonly handlers: ReadonlyMap<string, FieldHandler>,
  ) {}

  handlerId(field: string): number | undefined {
    const handler = this.handlers.get(field);
    return handler ? handlerId(handler) : undefined;
  }
}

interface Prepared {
  readonly analyzed: AnalyzedRequest;
  readonly shape: CompiledShape;
  readonly sources: LeafSources;
  readonly query: BaseQuery;
  /** The cursor binding, when the request's cursor was checked against it. */
  readonly binding: string | undefined;
}

/**
 * Turns a `SearchRequest` into SQL for one model and runs it without hydrating entities (see
 * `README.md` in this folder for the pipeline). Every check — structure, bounds, depth, fields,
 * operators, value types, restrictions, cursor — happens before any SQL is sent.
 *
 * Every statement is confined to the caller's row scope (`row-scope.ts`): the root's rows for
 * `listview`, and the related rows its relation paths, sorts and includes reach for `view`.
 *
 * Compiled statements are cached per (database, model, request shape, restriction set), not per
 * engine, so a request-scoped engine costs nothing to create.
 */
export class SearchEngine<M extends Base = Base> {
  readonly maxDepth: number;
  readonly limits: Readonly<SearchLimits>;
  private readonly info: ModelInfo;
  private readonly handlers = new Map<string, FieldHandler>();
  private readonly codec: CursorCodec;
  /** What `analyzeRequest` needs from this engine; the same object for every request. */
  private readonly analyzeOptions: AnalyzeOptions;
  /** Suffix of every shape key of this engine (the limits part; the restriction part varies). */
  private readonly limitsKey: string;

  constructor(
    private readonly db: Database,
    readonly model: ModelClass<M>,
    options: SearchEngineOptions = {},
  ) {
    const maxDepth = options.maxDepth ?? 3;
    if (!Number.isSafeInteger(maxDepth) || maxDepth < 0)
      throw new Error(`SearchEngine maxDepth must be an integer of 0 or more, got ${String(maxDepth)}`);
    this.maxDepth = maxDepth;
    this.limits = resolveSearchLimits(options.limits);
    this.limitsKey = limitsKey(this.limits);
    this.info = modelInfo(db, model.name);
    this.codec = CursorCodec.forSecret(db.cursorSecret);
    this.analyzeOptions = new EngineAnalyzeOptions(maxDepth, this.limits, this.handlers);
  }

  /**
   * Makes `name` a filter field whose SQL `handler` writes (e.g. full-text search over several
   * columns). It takes precedence over a column of the same name, is subject to restrictions as
   * `<table>.<name>`, and cannot be sorted on or included. Its `column()` reaches every column of the
   * model, restricted or not: the handler decides what it reveals. Register module-level functions:
   * the function's identity is part of the statement cache key.
   */
  registerHandler(name: string, handler: FieldHandler): this {
    if (typeof name !== 'string' || name === '' || name.includes('.')) {
      throw new Error(`registerHandler needs a field name without dots, received ${JSON.stringify(name)}`);
    }
    if (typeof handler !== 'function') throw new Error(`registerHandler('${name}') needs a handler function`);
    this.handlers.set(name, handler);
    return this;
  }

  /** Checks a request against the model and the context; throws ValidationError / ForbiddenError. Sends no SQL. */
  validate(request: SearchRequest, ctx: CoreContext = getContext()): void {
    this.prepare(request, ctx);
  }

  /**
   * The compiled query of a request, for the caller to extend and execute (see `BaseQuery`); the
   * caller's row scope for `listview` is already part of it.
   */
  buildBaseQuery(request: SearchRequest = {}, ctx: CoreContext = getContext()): BaseQuery<M> {
    return this.prepare(request, ctx).query as BaseQuery<M>;
  }

  /**
   * One page: `limit` (default 50) rows after `offset` or after `cursor`. Reads `limit + 1` rows to
   * know whether more exist; `nextCursor` (whenever `hasMore`, in offset mode too) resumes after the
   * last row with a keyset predicate.
   */
  search(request: SearchRequest, ctx: CoreContext = getContext()): Promise<Page<Row<M>>> {
    // Not an async function: a synchronous read then makes one promise, the one returned (with
    // AsyncLocalStorage every promise also runs Node's async hooks).
    try {
      const prepared = this.prepare(request, ctx);
      const limit = prepared.analyzed.limit ?? this.limits.defaultLimit;
      const raw = prepared.query.limit(limit + 1).fetchRaw();
      return Promise.resolve(
        raw instanceof Promise ? raw.then((rows) => this.page(prepared, limit, rows)) : this.page(prepared, limit, raw),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The page of `limit + 1` fetched rows at most: the cursor from the last row's raw sort values, then the output. */
  private page(
    { analyzed, shape, sources, binding }: Prepared,
    limit: number,
    raw: Record<string, unknown>[],
  ): Page<Row<M>> | Promise<Page<Row<M>>> {
    const hasMore = raw.length > limit;
    if (hasMore) raw.length = limit;
    const last = raw[raw.length - 1];
    const nextCursor =
      hasMore && last
        ? this.codec.encode(
            {
              binding: binding ?? cursorBinding(shape, analyzed.filters),
              values: shape.sort.keys.map((k) => cursorValue(last[k.alias])),
            },
            { seal: shape.sort.sealCursor },
          )
        : null;
    const offset = analyzed.cursor !== undefined ? null : (analyzed.offset ?? 0);
    // After the cursor: it reads the last row's raw sort values, which decoding in place may change.
    const items = materializeRowsSync(shape.plan, raw, shape.rowsAreOutput) as Row<M>[] | null;
    if (items) return { items, limit, offset, nextCursor, hasMore };
    return materializeRows(this.db, shape.plan, raw, this.limits, sources, shape.rowsAreOutput).then((all) => ({
      items: all as Row<M>[],
      limit,
      offset,
      nextCursor,
      hasMore,
    }));
  }

  private prepare(request: SearchRequest, ctx: CoreContext, action: RowAction = 'listview'): Prepared {
    const analyzed = analyzeRequest(request, this.analyzeOptions);
    const restricted = ctx.restrictedFields;
    const { shape, sources } = compiledShape(`${analyzed.key}|${restrictionKey(restricted)}|${this.limitsKey}`, {
      db: this.db,
      info: this.info,
      restricted,
      limits: this.limits,
      handlers: this.handlers,
      filters: analyzed.filters,
      leaves: analyzed.leaves,
      sort: analyzed.sort,
      include: analyzed.include,
      scope: scopeRequest(this.db, ctx, action),
    });
    const where = bindWhere(shape.where, sources, shape.env);
    let keyset: KeysetBinding | undefined;
    let binding: string | undefined;
    if (analyzed.cursor !== undefined) {
      binding = cursorBinding(shape, analyzed.filters);
      keyset = this.keyset(shape, analyzed.cursor, binding);
    }
    const query = new BaseQuery(this.db, {
      shape,
      where,
      ...(shape.fromSlots ? { fromParams: bindParams(shape.fromSlots, sources) } : {}),
      ...(shape.deps.length > 0 ? { sources } : {}),
      limits: this.limits,
      ...(keyset ? { keyset } : {}),
      ...(analyzed.limit !== undefined ? { limit: analyzed.limit } : {}),
      ...(analyzed.offset ? { offset: analyzed.offset } : {}),
    });
    return { analyzed, shape, sources, query, binding };
  }

  /** Opens the cursor, checks what it is bound to, and binds the keyset predicate for its values. */
  private keyset(shape: CompiledShape, cursor: string, binding: string): KeysetBinding {
    const payload = this.codec.decode(cursor, 'cursor');
    if (payload.binding !== binding) {
      throw invalid(
        'cursor',
        'this cursor was issued for a different resource, sort or filters; send the same filters and sort as for the first page, or start again without a cursor',
        'cursor_mismatch',
      );
    }
    const keys = shape.sort.keys;
    const values = payload.values;
    const fits =
      values.length === keys.length && values.every((v, i) => (v === null ? keys[i]!.nullable : isCursorScalar(v)));
    if (!fits)
      throw invalid('cursor', 'the cursor does not match this sort; start again without a cursor', 'cursor_mismatch');
    const mask = nullMask(values);
    let compiled = shape.keysets.get(mask);
    if (!compiled) shape.keysets.set(mask, (compiled = buildKeyset(keys, mask)));
    return { mask, sql: compiled.sql, params: compiled.order.map((i) => values[i]) };
  }
}

function isCursorScalar(value: unknown): boolean {
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean';
}

/** Raw sort values go into the cursor as JSON; the database gets them back exactly as it gave them. */
function cursorValue(raw: unknown): unknown {
  if (raw === undefined) return null;
  if (raw instanceof Date) return raw.toISOString();
  if (typeof raw === 'bigint') return raw.toString();
  return raw;
}
