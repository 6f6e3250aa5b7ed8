import { container } from '../container/container.js';
import type { Token } from '../container/token.js';
import { dbManager } from '../db/database.js';
import type { ValueKind } from '../model/codecs.js';
import { modelInfo, type ModelInfo } from '../model/model-info.js';
import { resolveFieldPath, resolveRelationPath } from '../model/paths.js';
import { DEFAULT_SEARCH_LIMITS, type SearchLimits } from '../search/limits.js';
import { FILTER_OPERATORS, type FilterOperator } from '../search/search-request.js';
import type { ResourceDescription } from '../http/route-doc.js';

/**
 * The operators a filter leaf may use on a column, by the column's kind, as the filter compiler
 * accepts them (`search/filter-compiler.ts`): text takes every operator, ordered values the
 * comparisons, booleans equality, other columns (json, blobs) only `isnull` (and `eq`/`ne` null).
 */
const ORDERED_OPS: readonly FilterOperator[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'isnull'];
const OPERATOR_SETS: Record<OperatorSet, readonly FilterOperator[]> = {
  text: FILTER_OPERATORS,
  ordered: ORDERED_OPS,
  boolean: ['eq', 'ne', 'in', 'nin', 'isnull'],
  opaque: ['isnull'],
};

export type OperatorSet = 'text' | 'ordered' | 'boolean' | 'opaque';

export const OPERATOR_SET_NAMES: readonly OperatorSet[] = ['text', 'ordered', 'boolean', 'opaque'];

export function operatorsOf(set: OperatorSet): readonly FilterOperator[] {
  return OPERATOR_SETS[set];
}

function operatorSetOf(kind: ValueKind): OperatorSet {
  switch (kind) {
    case 'string':
      return 'text';
    case 'boolean':
      return 'boolean';
    case 'json':
    case 'other':
      return 'opaque';
    default:
      return 'ordered';
  }
}

/**
 * Most names one enumeration (filter fields, sort fields, include paths) lists. Paths multiply at
 * each hop of a densely related model graph; past this the document would weigh megabytes, so that
 * list is dropped and its schema is a plain string, as it was before names were enumerated.
 */
export const MAX_ENUMERATED = 2000;

/** What a resource's reads accept, for one view of the document. */
export interface ResourceQueries {
  readonly limits: Readonly<SearchLimits>;
  /** Filter fields by operator set, in the model's order; null when they could not be enumerated. */
  readonly filterFields: ReadonlyMap<OperatorSet, readonly string[]> | null;
  /** Fields a sort may name; null when they could not be enumerated. */
  readonly sortFields: readonly string[] | null;
  /** Relation paths `include` may name; null when they could not be enumerated. */
  readonly includePaths: readonly string[] | null;
}

interface Candidates {
  readonly filter: readonly { path: string; set: OperatorSet }[] | null;
  readonly sort: readonly string[] | null;
  readonly include: readonly string[] | null;
}

interface Facts {
  readonly limits: Readonly<SearchLimits>;
  readonly model: ModelInfo | undefined;
  readonly candidates: Candidates;
}

const NOTHING_RESTRICTED: ReadonlySet<string> = new Set();

/** Per resource: its limits, model and every path it accepts for an unrestricted caller. */
const factsCache = new WeakMap<ResourceDescription, Facts>();

/**
 * The fields, operators, sort keys and include paths a resource's reads accept, enumerated from the
 * model graph to the search engine's path depth, and the limits of its repository. `restricted` (a
 * caller's restriction entries) leaves out the paths that caller would get a 403 for; null lists
 * every path (the shared document).
 */
export function resourceQueries(
  resource: ResourceDescription,
  restricted: ReadonlySet<string> | null,
): ResourceQueries {
  let facts = factsCache.get(resource);
  if (facts === undefined) {
    const limits = repositoryLimits(resource.service);
    const model = modelOf(resource.entity);
    facts = { limits, model, candidates: enumerate(model, limits.maxPathDepth) };
    factsCache.set(resource, facts);
  }
  const { limits, model, candidates } = facts;
  const entries = restricted ?? NOTHING_RESTRICTED;
  const accepted = (kind: 'field' | 'relation', path: string): boolean => {
    if (model === undefined) return false;
    try {
      // The engine's own resolution: the same depth rule and the same restriction checks.
      if (kind === 'field') resolveFieldPath(model, path, '', limits.maxPathDepth, entries);
      else resolveRelationPath(model, path, '', limits.maxPathDepth, entries);
      return true;
    } catch {
      return false;
    }
  };
  let filterFields: Map<OperatorSet, string[]> | null = null;
  if (candidates.filter !== null) {
    filterFields = new Map();
    for (const { path, set } of candidates.filter) {
      if (!accepted('field', path)) continue;
      const list = filterFields.get(set);
      if (list === undefined) filterFields.set(set, [path]);
      else list.push(path);
    }
  }
  return {
    limits,
    filterFields,
    sortFields: candidates.sort?.filter((path) => accepted('field', path)) ?? null,
    includePaths: candidates.include?.filter((path) => accepted('relation', path)) ?? null,
  };
}

/** The model's compiled description, or undefined when the database does not know it. */
function modelOf(entity: string): ModelInfo | undefined {
  try {
    return modelInfo(dbManager.db, entity);
  } catch {
    return undefined;
  }
}

/**
 * Every filter field (each column of each model reached in at most `maxHops` relations), sort field
 * (the same through to-one relations only, columns with an order) and include path (1 to `maxHops`
 * relations), in the model's declaration order, shallow paths first.
 */
function enumerate(root: ModelInfo | undefined, maxHops: number): Candidates {
  if (root === undefined) return { filter: null, sort: null, include: null };
  let filter: { path: string; set: OperatorSet }[] | null = [];
  let sort: string[] | null = [];
  let include: string[] | null = [];
  // Level by level (paths of 0 hops, then 1…), so the walk stops as soon as every list is over the cap.
  let level: { prefix: string; model: ModelInfo; toOne: boolean }[] = [{ prefix: '', model: root, toOne: true }];
  for (let hops = 0; level.length > 0; hops++) {
    const next: typeof level = [];
    for (const { prefix, model, toOne } of level) {
      for (const column of model.columns) {
        const path = prefix + column.key;
        filter?.push({ path, set: operatorSetOf(column.kind) });
        if (toOne && column.kind !== 'json' && column.kind !== 'other') sort?.push(path);
      }
      if (hops === maxHops) continue;
      for (const relation of model.relations.values()) {
        const path = prefix + relation.name;
        include?.push(path);
        next.push({ prefix: `${path}.`, model: relation.target(), toOne: toOne && !relation.toMany });
      }
    }
    if (filter !== null && filter.length > MAX_ENUMERATED) filter = null;
    if (sort !== null && sort.length > MAX_ENUMERATED) sort = null;
    if (include !== null && include.length > MAX_ENUMERATED) include = null;
    if (filter === null && sort === null && include === null) break;
    level = next;
  }
  return { filter, sort, include };
}

/**
 * The search limits of the repository behind a router's service (`service.repository.reader.engine`),
 * read from one instance built in a scope of its own; the defaults when the service has no such
 * repository or cannot be built outside a request.
 */
function repositoryLimits(service: Token<unknown> | undefined): Readonly<SearchLimits> {
  if (service === undefined) return DEFAULT_SEARCH_LIMITS;
  const scope = container.createScope();
  try {
    const instance = scope.resolve(service) as {
      repository?: { reader?: { engine?: { limits?: Readonly<SearchLimits> } } };
    };
    const limits = instance?.repository?.reader?.engine?.limits;
    return typeof limits?.maxLimit === 'number' && typeof limits.maxPathDepth === 'number'
      ? limits
      : DEFAULT_SEARCH_LIMITS;
  } catch {
    return DEFAULT_SEARCH_LIMITS;
  } finally {
    void scope.dispose();
  }
}
