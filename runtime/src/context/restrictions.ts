/**
 * The restriction rule, in one place. A restricted set holds entries such as `tasks.assignee_email`,
 * `tasks.project` (a whole relation), `tasks.project.budget` (a path) or `projects.budget` (a field of
 * the projects namespace wherever projects rows appear, e.g. nested under a task).
 *
 * A path is walked hop by hop: hop i is (namespace of the model at that point, property name). The path
 * is restricted when, for some hop i, `<namespace_i>.<name_i>[.<name_i+1>…]` is in the set — i.e. any
 * entry that names the path or one of its prefixes, rooted at any model the path passes through.
 */
export interface PathHop {
  /** Permission namespace (table name) of the model the property belongs to. */
  namespace: string;
  /** Property name as written (wire name). */
  name: string;
}

export function isPathRestricted(restricted: ReadonlySet<string>, hops: readonly PathHop[]): boolean {
  if (restricted.size === 0) return false;
  for (let i = 0; i < hops.length; i++) {
    let entry = hops[i]!.namespace;
    for (let k = i; k < hops.length; k++) {
      entry += `.${hops[k]!.name}`;
      if (restricted.has(entry)) return true;
    }
  }
  return false;
}
