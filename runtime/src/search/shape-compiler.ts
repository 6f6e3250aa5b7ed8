import type { Database } from '../db/database.js';
import { compileFilters, type FieldHandler } from './filter-compiler.js';
import { buildIncludeTree, planObject, type ObjectPlan } from './include-planner.js';
import { JoinGraph, qualified } from './joins.js';
import type { KeysetSql } from './keyset.js';
import type { SearchLimits } from './limits.js';
import type { ModelInfo } from '../model/model-info.js';
import type { IncludeRef, LeafRef } from './request-shape.js';
import type { FilterNode, SortRule } from './search-request.js';
import { compileSort, type CompiledSort } from './sort-compiler.js';
import { AliasAllocator, BoundedCache } from './sql-text.js';
import { finishWhere, type CompiledWhere, type HandlerEnv } from './where-binder.js';

/**
 * Everything about a request that does not depend on its values, compiled once per shape and
 * restriction set: the SELECT … FROM … JOIN text, the WHERE with its bind slots, the ORDER BY with
 * its keys, the row plan with its loaders, and (filled lazily) keyset predicates and whole statements.
 */
export interface CompiledShape {
  readonly info: ModelInfo;
  readonly rootAlias: string;
  /** `select <columns> from <table> t0 <joins>` */
  readonly from: string;
  readonly where: CompiledWhere;
  readonly sort: CompiledSort;
  readonly plan: ObjectPlan;
  readonly env: HandlerEnv;
  /** Keyset predicates by cursor null pattern. */
  readonly keysets: Map<number, KeysetSql>;
  /** Complete statements of unextended queries, by pagination mode. */
  readonly statements: Map<string, string>;
}

export interface ShapeInput {
  readonly db: Database;
  readonly info: ModelInfo;
  readonly restricted: ReadonlySet<string>;
  readonly limits: Readonly<SearchLimits>;
  readonly handlers: ReadonlyMap<string, FieldHandler>;
  readonly filters: readonly FilterNode[];
  readonly leaves: readonly LeafRef[];
  readonly sort: readonly Required<SortRule>[];
  readonly include: readonly IncludeRef[];
}

/** Shapes kept per model and database; beyond this the oldest is recompiled when next seen. */
const MAX_SHAPES = 512;
const caches = new WeakMap<Database, Map<string, BoundedCache<string, CompiledShape>>>();

function cacheFor(db: Database, className: string): BoundedCache<string, CompiledShape> {
  let perDb = caches.get(db);
  if (!perDb) caches.set(db, (perDb = new Map()));
  let cache = perDb.get(className);
  if (!cache) perDb.set(className, (cache = new BoundedCache(MAX_SHAPES)));
  return cache;
}

/**
 * The compiled shape for `key` (the request's shape key plus the restriction key), compiling it on a
 * miss. A request that fails to compile (unknown field, restricted path…) throws and caches nothing.
 */
export function compiledShape(key: string, input: ShapeInput): CompiledShape {
  const cache = cacheFor(input.db, input.info.className);
  let shape = cache.get(key);
  if (!shape) {
    shape = compileShape(input);
    cache.set(key, shape);
  }
  return shape;
}

function compileShape(input: ShapeInput): CompiledShape {
  const { db, info, restricted, limits } = input;
  const aliases = new AliasAllocator();
  const rootAlias = aliases.next('t');
  const joins = new JoinGraph(db, aliases, 'j');
  const scope = { db, root: info, rootAlias, aliases, joins, restricted, limits, handlers: input.handlers };

  const where = finishWhere(compileFilters(scope, input.filters, input.leaves));
  const sort = compileSort(scope, input.sort);
  const tree = buildIncludeTree(scope, info, input.include);
  const select: string[] = [];
  const plan = planObject(scope, { model: info, hops: [], alias: rootAlias, graph: joins, tree, top: true }, select);
  select.push(...sort.extraSelect);
  const joinText = joins.clauses.length > 0 ? ` ${joins.clauses.join(' ')}` : '';
  return {
    info,
    rootAlias,
    from: `select ${select.join(', ')} from ${info.quotedTable} ${rootAlias}${joinText}`,
    where,
    sort,
    plan,
    env: { db, alias: rootAlias, column: (field) => rootColumn(info, rootAlias, field) },
    keysets: new Map(),
    statements: new Map(),
  };
}

/** `t0."title"` for a field of the root model; a programming error otherwise. */
export function rootColumn(info: ModelInfo, alias: string, field: string): string {
  const col = info.fields.get(field);
  if (!col) throw new Error(`${info.namespace} has no field '${field}'; fields: ${[...info.fields.keys()].join(', ')}`);
  return qualified(alias, col.quoted);
}

const restrictionKeys = new WeakMap<ReadonlySet<string>, string>();

/** A stable key for a restriction set (sorted entries), computed once per set object. */
export function restrictionKey(restricted: ReadonlySet<string>): string {
  if (restricted.size === 0) return '';
  let key = restrictionKeys.get(restricted);
  if (key === undefined) {
    key = JSON.stringify([...restricted].sort());
    restrictionKeys.set(restricted, key);
  }
  return key;
}
