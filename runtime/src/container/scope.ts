import { AsyncLocalStorage } from 'node:async_hooks';
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
 * The active request scope. `run` only, never `enterWith`: `enterWith` leaks the store into whatever
 * the connection does next (measured: keep-alive requests saw the previous request's store).
 */
export const scopeStorage = new AsyncLocalStorage<ScopeImpl>();

/** The scope active in the current async context, if any. */
export function currentScope(): Scope | undefined {
  return scopeStorage.getStore();
}

type ResolveIn = (token: Token, scope: ScopeImpl) => unknown;

let lastScopeId = 0;

/** The implementation behind `Scope`; only the container creates it. */
export class ScopeImpl implements Scope {
  readonly id = ++lastScopeId;
  /** Scoped instances by registration (not token), so a re-registration gets a fresh instance. */
  readonly instances = new Map<Registration, unknown>();
  private readonly owned: Disposable[] = [];
  private readonly ownedSet = new WeakSet<object>();
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
    return scopeStorage.run(this, fn);
  }

  /** Remembers an instance this scope must dispose; objects without a disposer are not kept. */
  track(name: string, instance: unknown): void {
    if (!disposerOf(instance)) return;
    const object = instance as object;
    // A factory may hand out one object under two tokens; dispose it once.
    if (this.ownedSet.has(object)) return;
    this.ownedSet.add(object);
    this.owned.push({ name, instance: object });
  }

  dispose(): Promise<void> {
    this.disposal ??= this.disposeOwned();
    return this.disposal;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  private async disposeOwned(): Promise<void> {
    const owned = this.owned.splice(0);
    this.instances.clear();
    await disposeAll(owned, this.logger, `scope #${this.id}`);
  }
}
