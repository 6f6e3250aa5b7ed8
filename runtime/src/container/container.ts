import { silentLogger, type Logger } from '../logging/logger.js';
import {
  CaptiveDependencyError,
  CycleError,
  MissingRegistrationError,
  RegistrationError,
  ScopeDisposedError,
  ScopeRequiredError,
} from './container-errors.js';
import { disposeAll, disposerOf, type Disposable } from './disposal.js';
import { Lifetime } from './lifetime.js';
import {
  normalizeRegistration,
  type ClassProvider,
  type FactoryProvider,
  type LifetimeOption,
  type Provider,
  type Registration,
} from './registration.js';
import { ScopeImpl, activeScope, type Scope } from './scope.js';
import { tokenName, type Constructable, type Token } from './token.js';

/** A provider for the short forms `singleton` / `scoped` / `transient`, which fix the lifetime. */
export type ShortFormProvider<T> = Omit<ClassProvider<T>, 'lifetime'> | Omit<FactoryProvider<T>, 'lifetime'>;

export interface ScopeOptions {
  /** Where failing disposers are reported; defaults to the container's logger. */
  logger?: Logger;
}

/** One step of a resolution in progress: what is being constructed and how long it will live. */
interface PathEntry {
  readonly token: Token;
  readonly name: string;
  readonly lifetime: Lifetime;
}

/**
 * A resolution in progress. Construction is synchronous, so while a class or factory runs, this
 * module-level frame tells `Inject` (called from a constructor default) which container and scope
 * to use and which tokens are already being built (for cycle and captive-dependency checks).
 * See README.md in this folder.
 */
interface Frame {
  readonly container: Container;
  readonly scope: ScopeImpl | undefined;
  readonly path: PathEntry[];
}

let activeFrame: Frame | undefined;

const names = (path: readonly PathEntry[]): string[] => path.map((entry) => entry.name);

/**
 * Registrations plus the singletons built from them. Resolution is synchronous; scoped instances
 * live in a `Scope` (see `createScope`, `ScopedDependencyMiddleware`).
 */
export class Container {
  private readonly registrations = new Map<Token, Registration>();
  private singletons: Disposable[] = [];
  private logger: Logger = silentLogger;
  /** What scopes call back into; one function per container rather than a closure per scope (per request). */
  private readonly resolveInScope = (token: Token, scope: ScopeImpl): unknown => this.resolveIn(token, scope);

  /**
   * Registers `token`. A class without a provider is its own implementation; the lifetime defaults
   * to transient. Registering a token again replaces the earlier registration. Chainable.
   */
  register<T>(token: Constructable<T>, options?: LifetimeOption): this;
  register<T>(token: Token<T>, provider: Provider<T>): this;
  register(token: unknown, provider?: unknown): this {
    const registration = normalizeRegistration(token, provider);
    this.registrations.set(registration.token, registration);
    return this;
  }

  /** `register(token, { ...provider, lifetime: 'singleton' })`. */
  singleton<T>(token: Constructable<T>): this;
  singleton<T>(token: Token<T>, provider: ShortFormProvider<T>): this;
  singleton(token: Token, provider?: ShortFormProvider<unknown>): this {
    return this.registerAs(Lifetime.SINGLETON, token, provider);
  }

  /** `register(token, { ...provider, lifetime: 'scoped' })`. */
  scoped<T>(token: Constructable<T>): this;
  scoped<T>(token: Token<T>, provider: ShortFormProvider<T>): this;
  scoped(token: Token, provider?: ShortFormProvider<unknown>): this {
    return this.registerAs(Lifetime.SCOPED, token, provider);
  }

  /** `register(token, { ...provider, lifetime: 'transient' })`. */
  transient<T>(token: Constructable<T>): this;
  transient<T>(token: Token<T>, provider: ShortFormProvider<T>): this;
  transient(token: Token, provider?: ShortFormProvider<unknown>): this {
    return this.registerAs(Lifetime.TRANSIENT, token, provider);
  }

  has(token: Token): boolean {
    return this.registrations.has(token);
  }

  /**
   * Resolves `token` in the active scope: the one being built into (inside a constructor), else the
   * request scope in AsyncLocalStorage, else none — then only singletons and transients resolve.
   */
  resolve<T>(token: Token<T>): T {
    let scope: ScopeImpl | undefined;
    if (activeFrame?.container === this) scope = activeFrame.scope;
    else {
      const stored = activeScope();
      scope = stored?.container === this ? stored : undefined;
    }
    return this.resolveIn(token, scope) as T;
  }

  createScope(options: ScopeOptions = {}): Scope {
    return new ScopeImpl(this, options.logger ?? this.logger, this.resolveInScope);
  }

  /** Runs `fn` in a fresh scope and disposes it afterwards, also on failure. For scripts, jobs and tests. */
  async runInScope<R>(fn: (scope: Scope) => R | Promise<R>, options?: ScopeOptions): Promise<R> {
    const scope = this.createScope(options);
    try {
      return await scope.run(() => fn(scope));
    } finally {
      await scope.dispose();
    }
  }

  /** Where failing disposers are reported (scopes created later use it unless given their own). */
  setLogger(logger: Logger): void {
    this.logger = logger;
  }

  /**
   * Disposes the singletons this container built, in reverse creation order, and forgets them:
   * registrations stay, and the next resolution builds a new instance. `useValue` values are not
   * touched (their creator owns them). Failures are logged, never thrown.
   */
  async dispose(): Promise<void> {
    const built = this.singletons;
    this.singletons = [];
    for (const registration of this.registrations.values()) {
      if (registration.create) registration.instance = undefined;
    }
    await disposeAll(built, this.logger, 'container singletons');
  }

  private registerAs(lifetime: Lifetime, token: Token, provider: unknown): this {
    if (provider === undefined) return this.register(token as Constructable<unknown>, { lifetime });
    if (typeof provider === 'object' && provider !== null && !Array.isArray(provider)) {
      const given = (provider as { lifetime?: unknown }).lifetime;
      if (given !== undefined && given !== lifetime) {
        throw new RegistrationError(
          `${lifetime}(${tokenName(token)}) was given lifetime ${String(given)}; drop it, or use register().`,
        );
      }
      return this.register(token, { ...provider, lifetime } as Provider<unknown>);
    }
    // Not an object: let register() report it with the usual message.
    return this.register(token, provider as Provider<unknown>);
  }

  private resolveIn(token: Token, scope: ScopeImpl | undefined): unknown {
    const outer = activeFrame;
    // Inside a construction for the same container and scope: join it, so the path (and with it the
    // cycle and captive checks) spans constructor defaults, factories and explicit resolve() calls.
    if (outer && outer.container === this && outer.scope === scope) return this.resolveInFrame(token, outer);
    const frame: Frame = { container: this, scope, path: [] };
    activeFrame = frame;
    try {
      return this.resolveInFrame(token, frame);
    } finally {
      activeFrame = outer;
    }
  }

  private resolveInFrame(token: Token, frame: Frame): unknown {
    const { path, scope } = frame;
    const registration = this.registrations.get(token);
    if (!registration) throw new MissingRegistrationError(token, [...names(path), tokenName(token)]);
    if (registration.instance) return registration.instance.value;

    const { name, lifetime } = registration;
    // No closures here: this runs for every resolution of every request.
    const owner = lastSingleton(path);
    if (lifetime === Lifetime.SCOPED) {
      if (owner) throw new CaptiveDependencyError(owner.name, name, [...names(path), name]);
      if (!scope) throw new ScopeRequiredError(token, [...names(path), name]);
    }
    // What a singleton builds belongs to the singleton, not to the (possibly dead) scope around it.
    const ownedByScope = scope !== undefined && lifetime !== Lifetime.SINGLETON && owner === undefined;
    if (ownedByScope && scope.disposed) throw new ScopeDisposedError(token, [...names(path), name]);
    if (lifetime === Lifetime.SCOPED && scope?.instances.has(registration)) return scope.instances.get(registration);

    const seenAt = indexOfToken(path, token);
    if (seenAt >= 0) throw new CycleError([...names(path.slice(seenAt)), name], [...names(path), name]);

    path.push({ token, name, lifetime });
    let value: unknown;
    try {
      // Values have no `create` and returned above; every other registration has one.
      value = registration.create!(scope ?? this);
    } finally {
      path.pop();
    }

    if (lifetime === Lifetime.SINGLETON) {
      registration.instance = { value };
      if (disposerOf(value)) this.singletons.push({ name, instance: value as object });
    } else if (ownedByScope) {
      if (lifetime === Lifetime.SCOPED) scope.instances.set(registration, value);
      scope.track(name, value);
    }
    return value;
  }
}

/** The innermost singleton being built on `path`, if any: what a scoped service would be captive to. */
function lastSingleton(path: readonly PathEntry[]): PathEntry | undefined {
  for (let i = path.length - 1; i >= 0; i--) if (path[i]!.lifetime === Lifetime.SINGLETON) return path[i];
  return undefined;
}

function indexOfToken(path: readonly PathEntry[], token: Token): number {
  for (let i = 0; i < path.length; i++) if (path[i]!.token === token) return i;
  return -1;
}

/** The container apps register into and `Inject` falls back to outside any scope. */
export const container = new Container();

/** The container `Inject` uses: the one constructing right now, else the active scope's, else the default. */
export function activeContainer(): Container {
  return activeFrame?.container ?? activeScope()?.container ?? container;
}
