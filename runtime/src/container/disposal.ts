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
 * is logged and the rest still run; this never throws, and the returned promise never rejects.
 *
 * Synchronous as long as the disposers are: it returns undefined when every disposer returned
 * something other than a promise, and a promise only from the first disposer that returned one (the
 * remaining ones then run after it settles). Request scopes are disposed on every request, so the
 * common case allocates no promise.
 */
export function disposeAll(items: readonly Disposable[], logger: Logger, owner: string): Promise<void> | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const pending = disposeOne(items[i], logger, owner);
    if (pending !== undefined) return pending.then(() => disposeAll(items.slice(0, i), logger, owner));
  }
  return undefined;
}

/** Calls one disposer; a promise only when the disposer returned a thenable (settled, failures logged). */
function disposeOne({ name, instance }: Disposable, logger: Logger, owner: string): Promise<void> | undefined {
  const dispose = disposerOf(instance);
  if (!dispose) return undefined;
  const failed = (err: unknown): void => {
    logger.error({ err, service: name }, `disposing ${name} (${owner}) failed; the other instances are still disposed`);
  };
  let result: unknown;
  try {
    result = dispose.call(instance);
  } catch (err) {
    failed(err);
    return undefined;
  }
  if (!isThenable(result)) return undefined;
  return Promise.resolve(result).then(() => undefined, failed);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
