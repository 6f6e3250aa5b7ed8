import { isPathRestricted, type PathHop } from '../context/restrictions.js';
import { reachableSchemas, type SchemaInfo } from './schema-info.js';

/**
 * The part of a context's restricted set that can change what one schema accepts, returns or
 * documents, and a stable key for it. Every compiled artifact (validator, serializer, introspection)
 * is cached per (schema, key): two roles with the same relevant entries share one compilation, and
 * a role whose entries concern other tables shares the unrestricted one.
 */
export interface RestrictionScope {
  /** The applicable entries, sorted: also `meta.restricted_fields`. */
  readonly entries: readonly string[];
  readonly set: ReadonlySet<string>;
  /** `entries` joined: the cache key. */
  readonly key: string;
  /** Longest entry, counted in names after the namespace (0 when none). */
  readonly maxNames: number;
}

const EMPTY_SCOPE: RestrictionScope = Object.freeze({
  entries: Object.freeze([]) as readonly string[],
  set: new Set<string>(),
  key: '',
  maxNames: 0,
});

interface ScopeCache {
  /** Fast path: contexts built from the same policy usually share their Set instance. */
  readonly bySet: WeakMap<ReadonlySet<string>, RestrictionScope>;
  readonly byKey: Map<string, RestrictionScope>;
  /** entry → does it name something in this schema's graph? (policies have few distinct entries) */
  readonly applies: Map<string, boolean>;
}

const caches = new WeakMap<SchemaInfo, ScopeCache>();

export function restrictionScope(info: SchemaInfo, restricted: ReadonlySet<string>): RestrictionScope {
  if (restricted.size === 0) return EMPTY_SCOPE;
  let cache = caches.get(info);
  if (!cache) {
    cache = { bySet: new WeakMap(), byKey: new Map(), applies: new Map() };
    caches.set(info, cache);
  }
  const known = cache.bySet.get(restricted);
  if (known) return known;

  const entries: string[] = [];
  for (const entry of restricted) {
    let applies = cache.applies.get(entry);
    if (applies === undefined) {
      applies = entryApplies(info, entry);
      cache.applies.set(entry, applies);
    }
    if (applies) entries.push(entry);
  }
  entries.sort();
  const key = entries.join('\n');
  let scope = entries.length === 0 ? EMPTY_SCOPE : cache.byKey.get(key);
  if (!scope) {
    const maxNames = Math.max(...entries.map((e) => e.split('.').length - 1));
    scope = Object.freeze({ entries: Object.freeze(entries), set: new Set(entries), key, maxNames });
    cache.byKey.set(key, scope);
  }
  cache.bySet.set(restricted, scope);
  return scope;
}

/**
 * An entry `<ns>.<a>.<b>…` applies when some schema of the graph has namespace `<ns>` and the names
 * resolve from it: every name but the last through a relation, the last a field or a relation.
 * This is the same walk `isPathRestricted` matches, so filtering by it never changes a mask.
 */
function entryApplies(root: SchemaInfo, entry: string): boolean {
  const [namespace, ...names] = entry.split('.');
  if (names.length === 0) return false;
  return reachableSchemas(root).some((info) => info.namespace === namespace && resolves(info, names, 0));
}

function resolves(info: SchemaInfo, names: readonly string[], i: number): boolean {
  const name = names[i]!;
  if (i === names.length - 1)
    return info.properties[name] !== undefined || info.relations.has(name) || info.fkOfRelation.has(name);
  const relation = info.relations.get(name);
  return relation !== undefined && resolves(relation.target(), names, i + 1);
}

/** What a caller may see of one schema reached through `hops` (relations walked from the root). */
export interface Visibility {
  readonly fields: readonly string[];
  readonly relations: readonly string[];
}

/**
 * Fields and relations of `info` left visible. A field is hidden when its path is restricted, or when
 * it is the foreign key of a hidden relation; a relation is hidden when its path is restricted or its
 * foreign key is — both halves of one link go together, so neither leaks the other.
 */
export function visibility(info: SchemaInfo, hops: readonly PathHop[], scope: RestrictionScope): Visibility {
  if (scope.entries.length === 0) return { fields: info.fieldNames, relations: [...info.relations.keys()] };
  const restricted = (name: string): boolean =>
    isPathRestricted(scope.set, [...hops, { namespace: info.namespace, name }]);
  const hiddenFields = new Set(info.fieldNames.filter(restricted));
  const hiddenRelations = new Set<string>();
  for (const [relation, fk] of info.fkOfRelation) {
    if (restricted(relation) || hiddenFields.has(fk)) {
      hiddenRelations.add(relation);
      hiddenFields.add(fk);
    }
  }
  for (const relation of info.relations.keys()) if (restricted(relation)) hiddenRelations.add(relation);
  return {
    fields: info.fieldNames.filter((f) => !hiddenFields.has(f)),
    relations: [...info.relations.keys()].filter((r) => !hiddenRelations.has(r)),
  };
}

/**
 * The hops that can still matter below a node: an entry of n names matches at most n consecutive
 * hops, so only the last `maxNames - 1` hops of a path influence what is hidden under it. Cutting
 * the path there makes the set of distinct nodes finite even for cyclic relations.
 */
export function relevantHops(hops: readonly PathHop[], scope: RestrictionScope): readonly PathHop[] {
  const keep = Math.max(scope.maxNames - 1, 0);
  return hops.length <= keep ? hops : hops.slice(hops.length - keep);
}
