/**
 * How long a resolved instance lives. Plain data, so registrations can be checked (and printed)
 * before anything is constructed.
 *
 * - `singleton`: one instance per container, created on first use, kept until `container.dispose()`.
 * - `scoped`: one instance per scope (per HTTP request under `ScopedDependencyMiddleware`), disposed
 *   with the scope.
 * - `transient`: a new instance on every resolution.
 */
export const Lifetime = {
  SINGLETON: 'singleton',
  SCOPED: 'scoped',
  TRANSIENT: 'transient',
} as const;

export type Lifetime = (typeof Lifetime)[keyof typeof Lifetime];

export const LIFETIMES: readonly Lifetime[] = Object.freeze(Object.values(Lifetime));

export function isLifetime(value: unknown): value is Lifetime {
  return typeof value === 'string' && (LIFETIMES as readonly string[]).includes(value);
}
