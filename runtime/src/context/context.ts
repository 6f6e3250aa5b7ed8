import { activeStore, runWithStoreContext } from '../container/request-store.js';
import type { RowFilterSource } from './row-filters.js';

/**
 * Who is calling and what they may see: resolved once per request (see the context resolver) and
 * held in AsyncLocalStorage for the request's lifetime.
 */
export interface CoreContext {
  /** Subject (`sub` claim), or null for an anonymous caller. */
  readonly sub: string | null;
  readonly roles: readonly string[];
  /** Permission strings granted: exact actions (`tasks:view`), `<table>:*` or `*`. */
  readonly permissions: ReadonlySet<string>;
  /** Restriction entries in force (see `isPathRestricted`). */
  readonly restrictedFields: ReadonlySet<string>;
  /** The verified token's claims (what `{ "$claim": … }` values of row filters read); absent without a token. */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** The row filters of the caller's roles; absent when none of them filters any table. */
  readonly rowFilters?: RowFilterSource;
}

/**
 * A context with every permission and no restriction: scripts, tests, migrations, jobs. No row filter
 * applies to it either, not even one written in code (see `BaseRepository.buildBaseQuery`).
 */
export const SYSTEM_CONTEXT: CoreContext = Object.freeze({
  sub: null,
  roles: Object.freeze(['system']) as readonly string[],
  permissions: new Set(['*']),
  restrictedFields: new Set<string>(),
});

/** The active context; outside any request it is `SYSTEM_CONTEXT`. */
export function getContext(): CoreContext {
  // The store sits in the container layer, below this one, so it holds the context untyped; only
  // `runWithContext` puts one there.
  return (activeStore()?.context as CoreContext | undefined) ?? SYSTEM_CONTEXT;
}

/**
 * Runs `fn` with `ctx` active (and the active DI scope kept), for tests, scripts and background jobs.
 * It shares Core's one AsyncLocalStorage with the DI scope (see `request-store.ts`); `run`, never
 * `enterWith`, which leaks across keep-alive requests.
 */
export function runWithContext<T>(ctx: CoreContext, fn: () => T): T {
  return runWithStoreContext(ctx, fn);
}

/** Exact permission match, plus `*` and `<table>:*` wildcards. No case folding or trimming. */
export function hasPermission(ctx: CoreContext, action: string): boolean {
  const perms = ctx.permissions;
  if (perms.has(action) || perms.has('*')) return true;
  const colon = action.indexOf(':');
  return colon > 0 && perms.has(`${action.slice(0, colon)}:*`);
}
