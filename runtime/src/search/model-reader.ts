import { getContext } from '../context/context.js';
import type { Base, ModelClass } from '../model/base.js';
import type { Database } from '../db/database.js';
import type { Page, PageParams, Row } from '../model/types.js';
import { readById, readByIds, type RowExtras } from './by-id.js';
import { describeValue, invalid } from '../model/issues.js';
import { DEFAULT_SEARCH_LIMITS, type SearchLimits } from './limits.js';
import { modelInfo, type ModelInfo } from '../model/model-info.js';
import { scopeRequest } from './row-scope.js';
import { SearchEngine } from './search-engine.js';
import type { FilterNode, SearchRequest, SortRule } from './search-request.js';

export interface ModelReaderOptions {
  /** Largest page size (default 500). */
  maxLimit?: number;
  /** Page size when none is asked for (default 50, lowered to `maxLimit` if that is smaller). */
  defaultLimit?: number;
  /** and/or nesting limit of searches (default 3). */
  maxDepth?: number;
  limits?: Partial<SearchLimits>;
}

export interface ReadOptions {
  /** Relation paths to load with each row, e.g. `['project', 'comments.author']`. */
  include?: string[];
  /**
   * A repository's or service's `get` only: also read the record's ETag, in the row's own statement
   * where the model allows it, and attach it to the returned row (`etagOf(row)`) as the writes'
   * `etag` option does.
   */
  etag?: boolean;
}

export type ListParams = PageParams & { sort?: SortRule[]; filters?: FilterNode[]; include?: string[] };

/**
 * The read side of a repository: plain rows straight from SQL, no entities. Every read applies the
 * active context (`getContext()`): restricted columns are not selected, restricted includes, filters
 * and sorts are ForbiddenErrors, and only the rows of the caller's row scope are read (a hidden row
 * is a missing one). For an unrestricted read inside a restricted request (e.g. business logic
 * needing a hidden column or row) run it under `runWithContext(SYSTEM_CONTEXT, …)`.
 *
 * Rows: each column under its property name, each owning to-one relation's key as `<relation>_id`,
 * datetimes as Date, booleans as booleans, bigint/decimal as strings, included relations under the
 * relation name (object or null for to-one, array for to-many).
 */
export class ModelReader<M extends Base = Base> {
  readonly engine: SearchEngine<M>;
  private readonly info: ModelInfo;

  constructor(
    private readonly db: Database,
    readonly model: ModelClass<M>,
    options: ModelReaderOptions = {},
  ) {
    const maxLimit = options.maxLimit ?? options.limits?.maxLimit ?? DEFAULT_SEARCH_LIMITS.maxLimit;
    const defaultLimit =
      options.defaultLimit ?? options.limits?.defaultLimit ?? Math.min(DEFAULT_SEARCH_LIMITS.defaultLimit, maxLimit);
    this.engine = new SearchEngine(db, model, {
      ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
      limits: { ...options.limits, maxLimit, defaultLimit },
    });
    this.info = modelInfo(db, model.name);
  }

  /** The row with this primary key, or null. An id that is not valid for the key's type is a ValidationError (no SQL). */
  async get(id: unknown, options: ReadOptions = {}): Promise<Row<M> | null> {
    return this.getWith(id, options);
  }

  /**
   * @internal `get`, with `extras` read in the same statement (the repository's ETag); without a
   * promise when the read is synchronous.
   */
  getWith(id: unknown, options: ReadOptions, extras?: RowExtras): Row<M> | null | Promise<Row<M> | null> {
    const ctx = getContext();
    const scope = scopeRequest(this.db, ctx, 'view');
    return readById(this.db, this.info, id, options.include, ctx, this.engine.limits, scope, extras) as
      | Row<M>
      | null
      | Promise<Row<M> | null>;
  }

  /**
   * @internal The row as `get` reads it without includes, whatever the caller's row scope: what a
   * write answers with, read in its own transaction (its scope was checked there).
   */
  async readWritten(id: unknown): Promise<Row<M> | null> {
    return (await readById(this.db, this.info, id, undefined, getContext(), this.engine.limits)) as Row<M> | null;
  }

  /**
   * The rows with these primary keys in one statement (per 500 ids), in the order of `ids`: duplicates
   * collapse onto their first occurrence and missing ids are left out. Any invalid id fails the whole
   * call with a ValidationError naming it (`ids[3]`) before any SQL.
   */
  async getByIds(ids: readonly unknown[], options: ReadOptions = {}): Promise<Row<M>[]> {
    if (!Array.isArray(ids))
      throw invalid('ids', `expected an array of ids, received ${describeValue(ids)}`, 'invalid_request');
    const ctx = getContext();
    return (await readByIds(
      this.db,
      this.info,
      ids,
      options.include,
      ctx,
      this.engine.limits,
      scopeRequest(this.db, ctx, 'view'),
    )) as Row<M>[];
  }

  /** A page of rows: the list endpoint's reader (same rules as `search`). */
  getList(params: ListParams = {}): Promise<Page<Row<M>>> {
    const request: SearchRequest = {};
    if (params.filters !== undefined) request.filters = params.filters;
    if (params.sort !== undefined) request.sort = params.sort;
    if (params.include !== undefined) request.include = params.include;
    if (params.limit !== undefined) request.limit = params.limit;
    if (params.offset !== undefined) request.offset = params.offset;
    if (params.cursor !== undefined) request.cursor = params.cursor;
    return this.engine.search(request);
  }

  search(request: SearchRequest): Promise<Page<Row<M>>> {
    return this.engine.search(request);
  }
}
