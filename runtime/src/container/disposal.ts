import type { Logger } from '../logging/logger.js';

/** An instance the container will clean up, with the name used when its disposer fails. */
export interface Disposable {
  readonly name: string;
  readonly instance: object;
}

type DisposeMethod = (this: object) => unknown;

/**
 * The instance's clean-up method, in order of preference: `[Symbol.asyncDispose]`,
 * `[Symbol.dispose]`, then a plain `dispose()` (the common pre-`using` convention).
 */
export function disposerOf(instance: unknown): DisposeMethod | undefined {
  if ((typeof instance !== 'object' && typeof instance !== 'function') || instance === null) return undefined;
  const candidate = instance as Record<PropertyKey, unknown>;
  for (const key of [Symbol.asyncDispose, Symbol.dispose, 'dispose'] as const) {
    const method = candidate[key];
    if (typeof method === 'function') return method as DisposeMethod;
  }
  return undefined;
}

/**
 * Disposes in reverse creation order (dependents were created after their dependencies, so they go
 * first). One at a time: a dependent may still use its dependency while closing. A failing disposer
 * is logged and the rest still run; this never throws.
 */
export async function disposeAll(items: readonly Disposable[], logger: Logger, owner: string): Promise<void> {
  for (let i = items.length - 1; i >= 0; i--) {
    const { name, instance } = items[i];
    const dispose = disposerOf(instance);
    if (!dispose) continue;
    try {
      await dispose.call(instance);
    } catch (err) {
      logger.error({ err, service: name }, `disposing ${name} (${owner}) failed; the other instances are still disposed`);
    }
  }
}
