/**
 * Row scoping, in one place: which rows of a model a caller may read or write for an action. Every read
 * (list, search, by id, includes, relation paths in filters and sorts, cursors) and every write check
 * (the repository's) gets its scope from `resolveRowScope`, and compiles it with the search compiler.
 *
 * Where a scope comes from, for one model:
 * - a hook registered for the model (`registerRowScope`; a repository that overrides `buildBaseQuery`
 *   registers itself), which may build on the policies' filter;
 * - otherwise the row filters of the caller's roles (`ctx.rowFilters`, from `src/policies.json`);
 * - `SYSTEM_CONTEXT` is never scoped.
 *
 * A scope is a filter in the search syntax whose values may be `{ "$claim": "<path>" }`. Resolving it
 * for a context replaces each claim by the token's value; a claim the token lacks, or one the column
 * cannot hold (a scalar where `in` wants a list, text for an integer column…), makes its leaf match no
 * row. Resolved scopes are kept per context (contexts are per token and immutable).
 */
import { PolicyError, type PolicySet, setRowFilterModelCheck } from '../auth/policies.js';
import { type CoreContext, SYSTEM_CONTEXT } from '../context/context.js';
import { isClaimValue, readClaim } from '../context/row-filters.js';
import { dbManager, type Database } from '../db/database.js';
import { ValidationError, type ErrorDetail } from '../errors.js';
import type { ModelClass } from '../model/base.js';
import { coerceValue } from '../model/codecs.js';
import { modelInfo, type ModelInfo } from '../model/model-info.js';
import { resolveFieldPath } from '../model/paths.js';
import { setBoundFieldsSource, type BoundFields } from '../schema/claim-bound.js';
import { compileFilters, type FilterScope, type RelatedScoping, type WherePiece } from './filter-compiler.js';
import { JoinGraph, qualified } from './joins.js';
import { DEFAULT_SEARCH_LIMITS } from './limits.js';
import { type LeafRef, valueTag } from './request-shape.js';
import { FILTER_OPERATORS, type FilterLeaf, type FilterNode, type FilterOperator } from './search-request.js';
import { AliasAllocator, BoundedCache } from './sql-text.js';
import { bindParams, finishWhere, type CompiledWhere, type LeafSources } from './where-binder.js';

/** The actions a row scope is asked for: those of the permissions (`tasks:view`…). */
export type RowAction = 'view' | 'listview' | 'create' | 'update' | 'delete';

/**
 * A row scope written in code: the filter on the rows of one model `ctx` may `action` (values may be
 * `{ $claim }`), or null for every row. It must depend on its arguments only: its answer is kept per
 * context, and a context lives as long as its token is cached.
 */
export type RowScopeHook = (ctx: CoreContext, action: RowAction) => readonly FilterNode[] | null;

/** A scope resolved for one context: claims replaced by values, ready to compile and bind. */
export interface ResolvedScope {
  /** What decides its SQL text: fields, operators and value tags, as a request's shape key. */
  readonly key: string;
  readonly filters: readonly FilterNode[];
  readonly leaves: readonly LeafRef[];
  /** Some leaf goes through a relation. */
  readonly hasPaths: boolean;
  /**
   * Fields bound by `eq` to a claim at the top level, with the claim's value, or null when the claim
   * is missing or unusable: a create takes them from the token, a replace or patch keeps them.
   */
  readonly bound: ReadonlyMap<string, { readonly value: unknown } | null>;
  /** The names of `bound`, shared by every scope binding the same ones; undefined when none. */
  readonly boundFields: BoundFields | undefined;
}

// ---- hooks ----------------------------------------------------------------------------------------

interface HookEntry {
  /** What identifies the hook: a change of owner makes every kept scope stale. */
  readonly owner: unknown;
  hook: RowScopeHook;
}

const hooks = new Map<string, HookEntry>();
/** Bumped whenever the hooks change, so scopes kept per context are resolved again. */
let generation = 0;

/**
 * Scopes every read and write of `model` (by its class or class name) with `hook`, process-wide, in
 * place of the policies' row filters; `null` removes it. Call it at start-up, before any request, so
 * that includes and relation paths from other resources obey it from the first one.
 */
export function registerRowScope(model: ModelClass | string, hook: RowScopeHook | null): void {
  setRowScopeHook(typeof model === 'string' ? model : model.name, hook, hook);
}

/**
 * @internal `registerRowScope` with an owner: an owner that registers again (a repository class, each
 * time an instance is built) replaces the hook without invalidating the scopes already resolved.
 */
export function setRowScopeHook(className: string, owner: unknown, hook: RowScopeHook | null): void {
  const current = hooks.get(className);
  if (hook === null) {
    if (current) {
      hooks.delete(className);
      generation++;
    }
    return;
  }
  if (current && current.owner === owner) {
    current.hook = hook;
    return;
  }
  hooks.set(className, { owner, hook });
  generation++;
}

// ---- resolution -----------------------------------------------------------------------------------

/** True when some read or write of this context may be scoped: otherwise nothing here runs. */
export function scopingActive(ctx: CoreContext): boolean {
  return ctx !== SYSTEM_CONTEXT && (ctx.rowFilters !== undefined || hooks.size > 0);
}

const resolvedCache = new WeakMap<Database, WeakMap<CoreContext, Map<string, ResolvedScope | null>>>();

/** The caller's scope on `info`'s rows for `action`, or null when every row is theirs. */
export function resolveRowScope(
  db: Database,
  info: ModelInfo,
  action: RowAction,
  ctx: CoreContext,
): ResolvedScope | null {
  if (!scopingActive(ctx)) return null;
  const entry = hooks.get(info.className);
  if (entry === undefined && ctx.rowFilters === undefined) return null;
  let perDb = resolvedCache.get(db);
  if (!perDb) resolvedCache.set(db, (perDb = new WeakMap()));
  let perCtx = perDb.get(ctx);
  if (!perCtx) perDb.set(ctx, (perCtx = new Map()));
  const key = `${info.className}\u0000${action}\u0000${generation}`;
  let resolved = perCtx.get(key);
  if (resolved === undefined) {
    if (ctx.rowFilters !== undefined) checkPoliciesOnce(db, ctx.rowFilters.origin);
    const filter = entry ? entry.hook(ctx, action) : policyFilter(ctx, info, action);
    resolved = filter === null ? null : resolveFilter(db, info, filter, ctx, entry !== undefined);
    // The policies were checked at start; a hook's answer is checked here, once per context: a
    // mistake in it is the server's (500), never a 422 about a filter the client did not send.
    if (entry && resolved) checkHookFilter(db, info, filter!);
    perCtx.set(key, resolved);
  }
  return resolved;
}

/** The row filters of the caller's roles for this table and action (null: every row). */
function policyFilter(ctx: CoreContext, info: ModelInfo, action: RowAction): readonly FilterNode[] | null {
  return (ctx.rowFilters?.filterFor(info.table, action) as readonly FilterNode[] | null | undefined) ?? null;
}

const OPERATORS: ReadonlySet<string> = new Set(FILTER_OPERATORS);
const FALSE_NODE: FilterNode = Object.freeze({ op: 'or', items: [] }) as FilterNode;

/** Replaces the claims of a filter by the context's values and computes its shape key. */
function resolveFilter(
  db: Database,
  info: ModelInfo,
  filter: readonly FilterNode[],
  ctx: CoreContext,
  fromHook: boolean,
): ResolvedScope {
  if (!Array.isArray(filter)) {
    throw new TypeError(`The row scope of ${info.className} must be an array of filter nodes or null`);
  }
  const leaves: LeafRef[] = [];
  const bound = new Map<string, { value: unknown } | null>();
  let hasPaths = false;
  const base = `rowScope(${info.table})`;
  const walk = (node: FilterNode, path: string, top: boolean): { node: FilterNode; key: string } => {
    if (typeof node !== 'object' || node === null) throw scopeError(info, path, 'is not a filter node', fromHook);
    if (node.op === 'and' || node.op === 'or') {
      const items = (node as { items?: unknown }).items;
      if (!Array.isArray(items)) throw scopeError(info, path, 'is a group without an items array', fromHook);
      const walked = (items as FilterNode[]).map((item, i) => walk(item, `${path}.items[${i}]`, false));
      return {
        node: { op: node.op, items: walked.map((w) => w.node) },
        key: `${node.op}(${walked.map((w) => w.key).join(',')})`,
      };
    }
    const { field, op } = node as FilterLeaf;
    if (typeof field !== 'string' || !OPERATORS.has(op as string)) {
      throw scopeError(info, path, 'needs a field and a known operator', fromHook);
    }
    if (field.includes('.')) hasPaths = true;
    let value = (node as FilterLeaf).value;
    if (isClaimValue(value)) {
      const claimed = usableClaim(db, info, field, op, readClaim(ctx.claims, value.$claim));
      const isBound = top && op === 'eq' && !field.includes('.');
      if (claimed === undefined) {
        if (isBound) bound.set(field, null);
        return { node: FALSE_NODE, key: 'or()' };
      }
      value = claimed.value;
      if (isBound) bound.set(field, { value });
    }
    const leaf = { field, op, ...(value === undefined ? {} : { value }) } as FilterNode;
    leaves.push({ node: leaf as LeafRef['node'], path });
    return { node: leaf, key: `${JSON.stringify(field)}${op}:${valueTag(op as FilterOperator, value)}` };
  };
  const walked = filter.map((node, i) => walk(node, `${base}[${i}]`, true));
  return {
    key: walked.map((w) => w.key).join(','),
    filters: walked.map((w) => w.node),
    leaves,
    hasPaths,
    bound,
    boundFields: bound.size === 0 ? undefined : sharedBoundFields([...bound.keys()]),
  };
}

/**
 * Equal sets of bound names as one object, so what the schemas derive from it is cached once for
 * every caller binding the same fields. Names come from the policies and the hooks (model fields), so
 * the distinct sets are few; the bound only guards against a hook that invents them.
 */
const boundSets = new BoundedCache<string, BoundFields>(256);

function sharedBoundFields(names: string[]): BoundFields {
  const key = names.sort().join(',');
  let found = boundSets.get(key);
  if (!found) {
    found = Object.freeze({ names: new Set(names), key });
    boundSets.set(key, found);
  }
  return found;
}

/**
 * A claim's value when the leaf can use it: a scalar for eq and ne, a list of scalars for in and nin,
 * each one a value the column can hold. Undefined otherwise: the leaf then matches no row.
 */
function usableClaim(
  db: Database,
  info: ModelInfo,
  field: string,
  op: string,
  claim: unknown,
): { value: unknown } | undefined {
  const list = op === 'in' || op === 'nin';
  if (list ? !Array.isArray(claim) : !isScalar(claim)) return undefined;
  let column: ReturnType<typeof resolveFieldPath>['column'];
  try {
    column = resolveFieldPath(info, field, 'field', DEFAULT_SEARCH_LIMITS.maxPathDepth, NOTHING).column;
  } catch {
    return undefined;
  }
  const limit = DEFAULT_SEARCH_LIMITS.maxStringLength;
  try {
    if (list) {
      for (const item of claim as unknown[]) {
        if (!isScalar(item)) return undefined;
        coerceValue(column, item, 'value', db.dialect, limit, true);
      }
    } else {
      coerceValue(column, claim, 'value', db.dialect, limit, true);
    }
  } catch {
    return undefined;
  }
  return { value: claim };
}

function isScalar(value: unknown): boolean {
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean';
}

const NOTHING: ReadonlySet<string> = new Set();

/** Every leaf of a hook's filter compiles and binds as a search's would; a TypeError listing the mistakes otherwise. */
function checkHookFilter(db: Database, info: ModelInfo, filter: readonly FilterNode[]): void {
  const problems = filter.flatMap((node, i) => checkNode(db, info, node, `rowScope(${info.table})[${i}]`));
  if (problems.length === 0) return;
  const list = problems.map((p) => `${p.path} ${p.message}`).join('; ');
  throw new TypeError(`The row scope written in code for ${info.className}: ${list}`);
}

function scopeError(info: ModelInfo, path: string, problem: string, fromHook: boolean): Error {
  const where = fromHook ? `The row scope written in code for ${info.className}` : `A row filter of ${info.table}`;
  return new TypeError(`${where}: ${path} ${problem}`);
}

// ---- compiling ------------------------------------------------------------------------------------

/** One row scope a compiled statement depends on: its SQL is valid for callers whose scope has this key. */
export interface ScopeDep {
  readonly info: ModelInfo;
  readonly action: RowAction;
  readonly key: string | null;
}

/** How a read asks for scoping: the caller's context and the action on the root model. */
export interface ScopeRequest {
  readonly db: Database;
  readonly ctx: CoreContext;
  readonly action: RowAction;
}

/** A scope request for `ctx`, or undefined when nothing can be scoped for it (the statements stay as they are). */
export function scopeRequest(db: Database, ctx: CoreContext, action: RowAction): ScopeRequest | undefined {
  return scopingActive(ctx) ? { db, ctx, action } : undefined;
}

/**
 * The row scopes met while one statement is compiled, numbered as leaf sources (1, 2, …): the root's
 * (for the request's action) and those of the related tables its joins, relation paths and includes
 * reach (for `view`). The compiled statement keeps the list; a caller may reuse it when each scope
 * resolves to the same key for them (`matchDeps`).
 */
export class ShapeScoping implements RelatedScoping {
  readonly deps: ScopeDep[] = [];
  private readonly resolved: (ResolvedScope | null)[] = [];

  constructor(private readonly request: ScopeRequest) {}

  /** The scope of `info` for `action`, recorded as a dependency; its source number, or undefined when unscoped. */
  use(info: ModelInfo, action: RowAction): { source: number; scope: ResolvedScope } | undefined {
    let index = this.deps.findIndex((dep) => dep.info === info && dep.action === action);
    if (index < 0) {
      const scope = resolveRowScope(this.request.db, info, action, this.request.ctx);
      this.deps.push({ info, action, key: scope?.key ?? null });
      this.resolved.push(scope);
      index = this.deps.length - 1;
    }
    const scope = this.resolved[index];
    return scope ? { source: index + 1, scope } : undefined;
  }

  /** The leaf sources of the statement being compiled: the request's leaves, then each scope's. */
  sources(requestLeaves: readonly LeafRef[]): LeafSources {
    return [requestLeaves, ...this.resolved.map((scope) => scope?.leaves ?? [])];
  }

  scoped(target: ModelInfo): boolean {
    return this.use(target, 'view') !== undefined;
  }

  related(target: ModelInfo, alias: string, aliases: AliasAllocator): WherePiece[] | null {
    const used = this.use(target, 'view');
    return used ? scopePieces(this.request.db, target, alias, aliases, used.scope, used.source) : null;
  }

  /** The root's scope, compiled at `alias` with its relation paths joined `raw` into `graph`. */
  root(info: ModelInfo, alias: string, graph: JoinGraph, aliases: AliasAllocator): WherePiece[] | null {
    const used = this.use(info, this.request.action);
    if (!used) return null;
    return compileFilters(
      rawScope(this.request.db, info, alias, graph, aliases, used.source),
      used.scope.filters,
      used.scope.leaves,
    );
  }
}

/**
 * The current context's scopes for the dependencies of a compiled statement, or undefined when one of
 * them resolves differently (the statement's text would not be the same).
 */
export function matchDeps(
  request: ScopeRequest,
  deps: readonly ScopeDep[],
  requestLeaves: readonly LeafRef[],
): LeafSources | undefined {
  const sources: (readonly LeafRef[])[] = [requestLeaves];
  for (const dep of deps) {
    const scope = resolveRowScope(request.db, dep.info, dep.action, request.ctx);
    if ((scope?.key ?? null) !== dep.key) return undefined;
    sources.push(scope?.leaves ?? []);
  }
  return sources;
}

/** What compiling a row filter needs: no restrictions, no handlers, relation paths joined as stored. */
function rawScope(
  db: Database,
  info: ModelInfo,
  alias: string,
  graph: JoinGraph,
  aliases: AliasAllocator,
  source: number,
): FilterScope {
  return {
    db,
    root: info,
    rootAlias: alias,
    aliases,
    joins: graph,
    restricted: NOTHING,
    limits: DEFAULT_SEARCH_LIMITS,
    handlers: NO_HANDLERS,
    source,
    raw: true,
  };
}

const NO_HANDLERS: ReadonlyMap<string, never> = new Map<string, never>();

/**
 * A scope as a condition on the rows of `info` read at `alias`, usable anywhere (a join's `on`, a
 * subquery, a loader): directly on the alias when it names the row's own columns only, else inside
 * `exists (select 1 from <table> s where s.pk = alias.pk and …)`, where its relation paths are joined
 * as they are in a search — the same meaning, in a place that cannot take joins of its own.
 */
function scopePieces(
  db: Database,
  info: ModelInfo,
  alias: string,
  aliases: AliasAllocator,
  scope: ResolvedScope,
  source: number,
): WherePiece[] {
  if (!scope.hasPaths) {
    const graph = new JoinGraph(db, aliases, 's');
    return compileFilters(rawScope(db, info, alias, graph, aliases, source), scope.filters, scope.leaves);
  }
  const self = aliases.next('s');
  const graph = new JoinGraph(db, aliases, 's');
  const body = compileFilters(rawScope(db, info, self, graph, aliases, source), scope.filters, scope.leaves);
  const pk = info.pk.quoted;
  return [
    `exists (select 1 from ${info.quotedTable} ${self}`,
    ...graph.pieces,
    ` where ${qualified(self, pk)} = ${qualified(alias, pk)} and (`,
    ...body,
    '))',
  ];
}

// ---- statements of the write path ---------------------------------------------------------------

/**
 * A scope as the WHERE of a statement on the model's own table, aliased `t0`: `from` is
 * `<table> t0 <joins>`, `where` a parenthesised condition, `params` its values (the joins have none).
 */
export interface ScopedRows {
  readonly from: string;
  readonly where: string;
  readonly params: readonly unknown[];
}

const rowSqlCache = new WeakMap<Database, Map<string, BoundedCache<string, { from: string; where: CompiledWhere }>>>();

/** The rows of `info` within `scope`, as `from` and `where` for the repository's statements. */
export function scopedRows(db: Database, info: ModelInfo, scope: ResolvedScope): ScopedRows {
  let perDb = rowSqlCache.get(db);
  if (!perDb) rowSqlCache.set(db, (perDb = new Map()));
  let cache = perDb.get(info.className);
  if (!cache) perDb.set(info.className, (cache = new BoundedCache(256)));
  let compiled = cache.get(scope.key);
  if (!compiled) {
    const aliases = new AliasAllocator();
    const alias = aliases.next('t');
    const graph = new JoinGraph(db, aliases, 'j');
    const pieces = compileFilters(rawScope(db, info, alias, graph, aliases, 1), scope.filters, scope.leaves);
    let joins = '';
    for (const piece of graph.pieces) joins += piece as string;
    compiled = { from: `${info.quotedTable} ${alias}${joins}`, where: finishWhere(pieces) };
    cache.set(scope.key, compiled);
  }
  const where = compiled.where;
  return {
    from: compiled.from,
    where: where.empty ? '1 = 1' : `(${where.sql})`,
    params: bindParams(where.pieces, [[], scope.leaves]),
  };
}

// ---- checking the policies against the models ----------------------------------------------------

const checked = new WeakMap<object, WeakSet<Database>>();

function checkPoliciesOnce(db: Database, origin: object): void {
  let dbs = checked.get(origin);
  if (dbs?.has(db)) return;
  checkRowFilters(db, origin as PolicySet);
  if (!dbs) checked.set(origin, (dbs = new WeakSet()));
  dbs.add(db);
}

/**
 * Checks every row filter of the policies against the models of `db`: the table exists; each field,
 * relation path and operator is one a search could use; a literal value is one the column can hold;
 * a `$claim` leaf names an equatable column. Throws `PolicyError` naming the JSON path of each mistake.
 */
export function checkRowFilters(db: Database, policies: PolicySet): void {
  const tables = tableModels(db);
  const problems: string[] = [];
  for (const entry of policies.rowFilterEntries) {
    const className = tables.get(entry.table);
    if (className === undefined) {
      problems.push(
        `${entry.path} names the table ${JSON.stringify(entry.table)}, which no model has; tables: ${[...tables.keys()].sort().join(', ') || '(none)'}`,
      );
      continue;
    }
    const info = modelInfo(db, className);
    entry.nodes.forEach((node, i) => {
      for (const detail of checkNode(db, info, node as FilterNode, `${entry.path}[${i}]`)) {
        problems.push(`${detail.path} ${detail.message}`);
      }
    });
  }
  if (problems.length === 0) return;
  const shown = problems.slice(0, 5).join('; ');
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
  throw new PolicyError(`${policies.source}: ${shown}${more}.`);
}

/** The mistakes of one node (and of the nodes under it). */
function checkNode(db: Database, info: ModelInfo, node: FilterNode, path: string): ErrorDetail[] {
  if (node.op === 'and' || node.op === 'or') {
    return (node as { items: FilterNode[] }).items.flatMap((item, i) =>
      checkNode(db, info, item, `${path}.items[${i}]`),
    );
  }
  const { field, op, value } = node as FilterLeaf;
  if (!OPERATORS.has(op)) {
    const message = `unknown operator ${JSON.stringify(op)}; use one of ${FILTER_OPERATORS.join(', ')}`;
    return [{ path: `${path}.op`, message }];
  }
  try {
    if (isClaimValue(value)) {
      const { column } = resolveFieldPath(info, field, `${path}.field`, DEFAULT_SEARCH_LIMITS.maxPathDepth, NOTHING);
      if (column.kind === 'json' || column.kind === 'other') {
        return [{ path: `${path}.op`, message: `'${op}' does not apply to ${field} (${column.kind} column)` }];
      }
      return [];
    }
    // Compiled and bound as a search would: every check of a search's leaf applies.
    const aliases = new AliasAllocator();
    const alias = aliases.next('t');
    const graph = new JoinGraph(db, aliases, 'j');
    const leaves: LeafRef[] = [{ node: node as LeafRef['node'], path }];
    const pieces = compileFilters(rawScope(db, info, alias, graph, aliases, 0), [node], leaves);
    bindParams(pieces, [leaves]);
    return [];
  } catch (error) {
    if (error instanceof ValidationError) return error.details.map((d) => ({ ...d, path: d.path ?? path }));
    throw error;
  }
}

// ---- what request bodies may leave out -----------------------------------------------------------

const modelsByTable = new WeakMap<Database, Map<string, string>>();

/** Table name → model class name, for the models of `db` (what `checkRowFilters` reads too). */
function tableModels(db: Database): Map<string, string> {
  let tables = modelsByTable.get(db);
  if (!tables) {
    tables = new Map();
    for (const meta of Object.values(db.orm.getMetadata().getAll())) {
      if (meta.embeddable || meta.pivotTable || meta.virtual || !meta.tableName || !meta.className) continue;
      tables.set(meta.tableName, meta.className);
    }
    modelsByTable.set(db, tables);
  }
  return tables;
}

// A schema names its table (`__model__`); the fields the caller's scope binds there for a create or an
// update, on the default database (the one the routers serve), need not be in the body: the
// repository sets them from the token or keeps them. Without active scoping this returns at once.
setBoundFieldsSource((ctx, table, action) => {
  if (!scopingActive(ctx) || !dbManager.isInitialised) return undefined;
  const db = dbManager.db;
  const className = tableModels(db).get(table);
  if (className === undefined) return undefined;
  return resolveRowScope(db, modelInfo(db, className), action, ctx)?.boundFields;
});

// The policies are checked against the models of the default database when the context resolver is
// built (at start, after `dbManager.initApp`); a database opened later is checked on first use.
setRowFilterModelCheck((policies) => {
  if (dbManager.isInitialised) checkPoliciesOnce(dbManager.db, policies);
});
