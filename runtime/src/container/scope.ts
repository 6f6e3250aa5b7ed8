import { activeStore, runWithStoreScope } from './request-store.js';
import type { Logger } from '../logging/logger.js';
import type { Container } from './container.js';
import { disposeAll, disposerOf, type Disposable } from './disposal.js';
import type { Registration } from './registration.js';
import type { Token } from './token.js';

/**
 * A unit of work for scoped services, usually one HTTP request: scoped registrations get one
 * instance per scope, and the scope disposes what it created when it ends.
 */
export interface Scope {
  /** Increasing number, for logs. */
  readonly id: number;
  readonly container: Container;
  /** True once `dispose()` has been called; a disposed scope resolves nothing but singletons. */
  readonly disposed: boolean;
  /** Resolves `token` in this scope (constructor defaults calling `Inject` resolve here too). */
  resolve<T>(token: Token<T>): T;
  /** Runs `fn` with this scope active, so `Inject` inside it (and in what it awaits) resolves here. */
  run<R>(fn: () => R): R;
  /**
   * Disposes the scoped instances and the disposable transients created in this scope, in reverse
   * creation order. Failures are logged, never thrown. Idempotent: later calls return the same promise.
   */
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * The scope active in the current async context, if any. It lives in Core's one AsyncLocalStorage
 * store, next to the caller's context (`context/request-store.ts`).
 */
export function currentScope(): Scope | undefined {
  return activeStore()?.scope;
}

/** `currentScope()` with the implementation type, for the container. */
export function activeScope(): ScopeImpl | undefined {
  return activeStore()?.scope;
}

const DISPOSED: Promise<void> = Promise.resolve();

type ResolveIn = (token: Token, scope: ScopeImpl) => unknown;

let lastScopeId = 0;

/** The implementation behind `Scope`; only the container creates it. */
export class ScopeImpl implements Scope {
  readonly id = ++lastScopeId;
  /** Scoped instances by registration (not token), so a re-registration gets a fresh instance. */
  readonly instances = new Map<Registration, unknown>();
  /** What this scope must dispose, in creation order; allocated on the first one (most scopes own none). */
  private owned: Disposable[] | undefined;
  private ownedSet: WeakSet<object> | undefined;
  /** Set when disposal starts: the pending promise, or `DISPOSED` when it completed synchronously. */
  private disposal: Promise<void> | undefined;

  constructor(
    readonly container: Container,
    private readonly logger: Logger,
    private readonly resolveIn: ResolveIn,
  ) {}

  get disposed(): boolean {
    return this.disposal !== undefined;
  }

  resolve<T>(token: Token<T>): T {
    return this.resolveIn(token, this) as T;
  }

  run<R>(fn: () => R): R {
    return runWithStoreScope(this, fn);
  }

  /** Remembers an instance this scope must dispose; objects without a disposer are not kept. */
  track(name: string, instance: unknown): void {
    if (!disposerOf(instance)) return;
    const object = instance as object;
    // A factory may hand out one object under two tokens; dispose it once.
    this.ownedSet ??= new WeakSet();
    if (this.ownedSet.has(object)) return;
    this.ownedSet.add(object);
    (this.owned ??= []).push({ name, instance: object });
  }

  dispose(): Promise<void> {
    this.disposeNow();
    return this.disposal!;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  /**
   * `dispose()` without a promise when none is needed: returns undefined once disposal has completed
   * (synchronously: nothing to dispose, or only synchronous disposers), else the pending promise. The
   * request middleware's fast path; most request scopes own nothing disposable.
   */
  disposeNow(): Promise<void> | undefined {
    if (this.disposal === undefined) {
      const owned = this.owned;
      this.owned = undefined;
      this.instances.clear();
      this.disposal =
        (owned === undefined ? undefined : disposeAll(owned, this.logger, `scope #${this.id}`)) ?? DISPOSED;
    }
    return this.disposal === DISPOSED ? undefined : this.disposal;
  }
}
