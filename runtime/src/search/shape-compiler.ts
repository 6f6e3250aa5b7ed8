import type { Database } from '../db/database.js';
import { compileFilters, scoperOf, type FieldHandler, type WherePiece } from './filter-compiler.js';
import { buildIncludeTree, planObject, type ObjectPlan } from './include-planner.js';
import { JoinBudget, JoinGraph, qualified } from './joins.js';
import type { KeysetSql } from './keyset.js';
import type { SearchLimits } from './limits.js';
import type { ModelInfo } from '../model/model-info.js';
import type { IncludeRef, LeafRef } from './request-shape.js';
import { matchDeps, ShapeScoping, type ScopeDep, type ScopeRequest } from './row-scope.js';
import type { FilterNode, SortRule } from './search-request.js';
import { compileSort, type CompiledSort } from './sort-compiler.js';
import { AliasAllocator, BoundedCache } from './sql-text.js';
import { finishWhere, type CompiledWhere, type HandlerEnv, type LeafSources } from './where-binder.js';

/**
 * Everything about a request that does not depend on its values, compiled once per shape and
 * restriction set (and, for a caller with row scopes, per scope shape): the SELECT … FROM … JOIN text,
 * the WHERE with its bind slots, the ORDER BY with its keys, the row plan with its loaders, and
 * (filled lazily) keyset predicates and whole statements.
 */
export interface CompiledShape {
  readonly info: ModelInfo;
  readonly rootAlias: string;
  /** `select <columns> from <table> t0 <joins>` */
  readonly from: string;
  /** The bind slots in `from`'s joins (a related table's scope in a join's `on`); null when it has none. */
  readonly fromSlots: readonly WherePiece[] | null;
  /** The root's row scope and the request's filters, ANDed. */
  readonly where: CompiledWhere;
  readonly sort: CompiledSort;
  readonly plan: ObjectPlan;
  /**
   * The statement selects exactly the output's columns, under their output keys: a fetched row can
   * become its output object in place (`materializeRows`' `inPlace`).
   */
  readonly rowsAreOutput: boolean;
  readonly env: HandlerEnv;
  /** Keyset predicates by cursor null pattern. */
  readonly keysets: Map<number, KeysetSql>;
  /** Complete statements of unextended queries, by pagination mode. */
  readonly statements: Map<string, string>;
  /** The row scopes it was compiled with (see `ShapeScoping`); empty when none applied. */
  readonly deps: readonly ScopeDep[];
}

/** A compiled shape and the leaves its statements bind: the request's, then each row scope's. */
export interface ShapeUse {
  readonly shape: CompiledShape;
  readonly sources: LeafSources;
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
  /** The caller and the root's action, when row scopes may apply (`scopeRequest`). */
  readonly scope?: ScopeRequest | undefined;
}

/** Shapes kept per model and database; beyond this the oldest is recompiled when next seen. */
const MAX_SHAPES = 512;
/** Scope shapes kept per request shape: callers with differently shaped scopes (roles, claim types). */
const MAX_VARIANTS = 16;
const caches = new WeakMap<Database, Map<string, BoundedCache<string, CompiledShape>>>();
const scopedCaches = new WeakMap<Database, Map<string, BoundedCache<string, CompiledShape[]>>>();

function cacheFor<V>(
  all: WeakMap<Database, Map<string, BoundedCache<string, V>>>,
  db: Database,
  className: string,
): BoundedCache<string, V> {
  let perDb = all.get(db);
  if (!perDb) all.set(db, (perDb = new Map()));
  let cache = perDb.get(className);
  if (!cache) perDb.set(className, (cache = new BoundedCache(MAX_SHAPES)));
  return cache;
}

/**
 * The compiled shape for `key` (the request's shape key plus the restriction key), compiling it on a
 * miss. A request that fails to compile (unknown field, restricted path…) throws and caches nothing.
 *
 * With `input.scope`, the statement also carries the row scopes it meets, and is kept with them: a
 * caller reuses it when each of those scopes has the same key for them (the same SQL text), else a
 * statement is compiled for their scopes. Without, nothing is scoped and nothing of this runs.
 */
export function compiledShape(key: string, input: ShapeInput): ShapeUse {
  const request = input.scope;
  if (request === undefined) {
    const cache = cacheFor(caches, input.db, input.info.className);
    let shape = cache.get(key);
    if (!shape) {
      shape = compileShape(input, undefined);
      cache.set(key, shape);
    }
    return { shape, sources: [input.leaves] };
  }
  const cache = cacheFor(scopedCaches, input.db, input.info.className);
  const scopedKey = `${key}|S${request.action}`;
  const variants = cache.get(scopedKey);
  if (variants) {
    for (const shape of variants) {
      const sources = matchDeps(request, shape.deps, input.leaves);
      if (sources) return { shape, sources };
    }
  }
  const scoping = new ShapeScoping(request);
  const shape = compileShape(input, scoping);
  const kept = variants ?? [];
  if (kept.length >= MAX_VARIANTS) kept.shift();
  kept.push(shape);
  if (!variants) cache.set(scopedKey, kept);
  return { shape, sources: scoping.sources(input.leaves) };
}

function compileShape(input: ShapeInput, scoping: ShapeScoping | undefined): CompiledShape {
  const { db, info, restricted, limits } = input;
  const aliases = new AliasAllocator();
  const rootAlias = aliases.next('t');
  const joins = new JoinGraph(db, aliases, 'j', scoping && scoperOf(scoping));
  const scope = {
    db,
    root: info,
    rootAlias,
    aliases,
    joins,
    restricted,
    limits,
    handlers: input.handlers,
    budget: new JoinBudget(limits.maxJoins),
    ...(scoping ? { scoping } : {}),
  };

  // The root's own scope first: the caller's filters narrow within it, they can never widen it.
  const own = scoping?.root(info, rootAlias, joins, aliases);
  const filters = compileFilters(scope, input.filters, input.leaves);
  const pieces =
    own && own.length > 0 ? (filters.length > 0 ? ['(', ...own, ') and (', ...filters, ')'] : own) : filters;
  const where = finishWhere(pieces);
  const sort = compileSort(scope, input.sort);
  const tree = buildIncludeTree(scope, info, input.include);
  const select: string[] = [];
  const plan = planObject(scope, { model: info, hops: [], alias: rootAlias, graph: joins, tree, top: true }, select);
  const rowsAreOutput =
    sort.extraSelect.length === 0 &&
    plan.joined.length === 0 &&
    plan.loaders.length === 0 &&
    plan.columns.every((c) => !c.hidden);
  select.push(...sort.extraSelect);
  let joinText = '';
  let slotted = false;
  for (const piece of joins.pieces) {
    if (typeof piece === 'string') joinText += piece;
    else if (piece.kind === 'bind') {
      joinText += piece.text;
      slotted = true;
    }
  }
  return {
    info,
    rootAlias,
    from: `select ${select.join(', ')} from ${info.quotedTable} ${rootAlias}${joinText}`,
    fromSlots: slotted ? joins.pieces : null,
    where,
    sort,
    plan,
    rowsAreOutput,
    env: { db, alias: rootAlias, column: (field) => rootColumn(info, rootAlias, field) },
    keysets: new Map(),
    statements: new Map(),
    deps: scoping?.deps ?? [],
  };
}

/** `t0."title"` for a field of the root model; a programming error otherwise. */
export function rootColumn(info: ModelInfo, alias: string, field: string): string {
  const col = info.fields.get(field);
  if (!col) throw new Error(`${info.namespace} has no field '${field}'; fields: ${[...info.fields.keys()].join(', ')}`);
  return qualified(alias, col.quoted);
}

const restrictionKeys = new WeakMap<ReadonlySet<string>, string>();
/** Sorted entries as JSON → `R<n>`: distinct restriction sets are few (one per combination of roles). */
const sharedRestrictionKeys = new Map<string, string>();
const MAX_SHARED_RESTRICTION_KEYS = 1024;

/**
 * A stable key for a restriction set, computed once per set object; equal sets give equal keys. It is
 * short (`R<n>`) because every read builds its shape key around it and hashes the whole string.
 */
export function restrictionKey(restricted: ReadonlySet<string>): string {
  if (restricted.size === 0) return '';
  let key = restrictionKeys.get(restricted);
  if (key === undefined) {
    const entries = JSON.stringify([...restricted].sort());
    key = sharedRestrictionKeys.get(entries);
    if (key === undefined && sharedRestrictionKeys.size < MAX_SHARED_RESTRICTION_KEYS) {
      key = `R${sharedRestrictionKeys.size}`;
      sharedRestrictionKeys.set(entries, key);
    }
    // Past the bound, the entries themselves, which never look like `R<n>`.
    key ??= entries;
    restrictionKeys.set(restricted, key);
  }
  return key;
}
