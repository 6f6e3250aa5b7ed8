import { DependencyCycleError, MissingDependencyError } from './kernel-errors.js';

/** What ordering needs from a plugin. */
export interface PluginNode {
  readonly name: string;
  readonly dependencies: readonly string[];
}

/**
 * Topological order (Kahn's algorithm): a plugin comes after everything it depends on. Among the
 * plugins that are ready at the same time, the one added first goes first, so the order depends only
 * on the graph and the insertion order — never on hash or object-key order.
 *
 * Throws `MissingDependencyError` (naming both plugins) or `DependencyCycleError` (naming the cycle).
 * O(n² + e) with n plugins and e dependencies, because `ready` is kept sorted by insertion; n is tiny.
 */
export function orderPlugins<P extends PluginNode>(plugins: readonly P[]): P[] {
  const indexOf = new Map(plugins.map((plugin, index) => [plugin.name, index] as const));
  const waitingFor: number[] = [];
  const dependents: number[][] = plugins.map(() => []);

  plugins.forEach((plugin, index) => {
    const dependencies = new Set(plugin.dependencies);
    for (const dependency of dependencies) {
      const at = indexOf.get(dependency);
      if (at === undefined) throw new MissingDependencyError(plugin.name, dependency);
      dependents[at].push(index);
    }
    waitingFor[index] = dependencies.size;
  });

  // Insertion indexes of the plugins whose dependencies are all placed, smallest first.
  const ready = plugins.flatMap((_, index) => (waitingFor[index] === 0 ? [index] : []));
  const order: P[] = [];
  while (ready.length > 0) {
    const index = ready.shift()!;
    order.push(plugins[index]);
    for (const dependent of dependents[index]) {
      if (--waitingFor[dependent] === 0) insertSorted(ready, dependent);
    }
  }
  if (order.length < plugins.length) throw new DependencyCycleError(findCycle(plugins, new Set(order)));
  return order;
}

function insertSorted(sorted: number[], value: number): void {
  let at = sorted.length;
  while (at > 0 && sorted[at - 1] > value) at--;
  sorted.splice(at, 0, value);
}

/**
 * Kahn leaves exactly the plugins that are on a cycle or depend on one, and each of them still
 * waits for at least one other left-over plugin. Walking from the first left-over plugin to its
 * first left-over dependency, again and again, must therefore revisit a plugin: the walk from that
 * plugin's first visit is a cycle. Deterministic, like the order itself.
 */
function findCycle<P extends PluginNode>(plugins: readonly P[], placed: ReadonlySet<P>): string[] {
  const left = new Map(plugins.filter((plugin) => !placed.has(plugin)).map((plugin) => [plugin.name, plugin] as const));
  const walk: string[] = [];
  const seenAt = new Map<string, number>();
  let current = left.values().next().value as P;
  while (!seenAt.has(current.name)) {
    seenAt.set(current.name, walk.length);
    walk.push(current.name);
    const next = current.dependencies.find((name) => left.has(name))!;
    current = left.get(next)!;
  }
  return [...walk.slice(seenAt.get(current.name)), current.name];
}
