/**
 * Dot-paths through the relation graph (`project.owner.email`, `comments.author`) for includes,
 * filters and sorts, and whether a caller may use one. The restriction rule, as documented: an
 * entry `<ns>.<name>` hides `name` of `<ns>` rows wherever they appear; a longer entry
 * `<ns>.<a>.<b>` hides `b` only where it is reached from `<ns>` rows through `a`; a to-one
 * relation and its `<relation>_id` key are hidden together.
 */
import type { Caller, Fuzzed } from './harness.js';
import type { Resource } from './resources.js';

/** Relations crossed by a path are limited (the default `maxPathDepth`). */
export const MAX_HOPS = 3;

/** The resources a path visits: the root, then one per relation hop (undefined past an unknown hop). */
function chainOf(fz: Fuzzed, root: Resource, hops: readonly string[]): (Resource | undefined)[] {
  const chain: (Resource | undefined)[] = [root];
  for (const hop of hops) {
    const here = chain[chain.length - 1];
    const rel = here?.relations.get(hop);
    chain.push(rel ? fz.resources.get(rel.target) : undefined);
  }
  return chain;
}

function canonical(resource: Resource | undefined, name: string): string {
  return resource && name.endsWith('_id') && resource.relations.has(name.slice(0, -3)) ? name.slice(0, -3) : name;
}

/** True when some name along `names` (relation hops, then possibly a field) is hidden from the caller. */
export function isRestricted(fz: Fuzzed, caller: Caller, root: Resource, names: readonly string[]): boolean {
  const chain = chainOf(fz, root, names.slice(0, -1));
  const canon = names.map((n, j) => canonical(chain[j], n));
  for (const entry of caller.context.restrictedFields) {
    const [ns, ...rest] = entry.split('.');
    for (let j = 0; j < names.length; j++) {
      const start = j - rest.length + 1;
      if (start < 0 || chain[start]?.name !== ns) continue;
      if (rest.every((part, k) => canonical(chain[start + k], part) === canon[start + k])) return true;
    }
  }
  return false;
}

export interface PathInfo {
  readonly path: string;
  /** The resource the path ends on (for fields: the one that holds the field). */
  readonly end: Resource;
  /** True when a to-many relation is crossed. */
  readonly crossesMany: boolean;
}

/** Relation paths of 1..maxHops hops from `root` (include paths), cycles allowed. */
export function relationPaths(fz: Fuzzed, root: Resource, maxHops: number): PathInfo[] {
  const out: PathInfo[] = [];
  const walk = (resource: Resource, prefix: string[], many: boolean): void => {
    if (prefix.length === maxHops) return;
    for (const [name, rel] of resource.relations) {
      const target = fz.resources.get(rel.target);
      if (!target) continue;
      const path = [...prefix, name];
      out.push({ path: path.join('.'), end: target, crossesMany: many || rel.many });
      walk(target, path, many || rel.many);
    }
  };
  walk(root, [], false);
  return out;
}

/** Field paths (`title`, `project.name`, `comments.author.email`) whose field is in the output schema. */
export function fieldPaths(fz: Fuzzed, root: Resource, maxHops: number): PathInfo[] {
  const admin = fz.caller('admin');
  const fieldsOf = (r: Resource): string[] => Object.keys(fz.doc(r, 'out', admin).properties ?? {});
  const out: PathInfo[] = fieldsOf(root).map((f) => ({ path: f, end: root, crossesMany: false }));
  for (const rel of relationPaths(fz, root, maxHops)) {
    for (const f of fieldsOf(rel.end))
      out.push({ path: `${rel.path}.${f}`, end: rel.end, crossesMany: rel.crossesMany });
  }
  return out;
}
