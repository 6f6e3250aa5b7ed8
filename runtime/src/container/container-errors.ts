import { tokenName } from './token.js';

/**
 * Errors raised by the container. They are programming errors (wiring mistakes), not client errors,
 * so they are plain `Error`s: inside a request the app's exception handler turns them into a 500.
 * Each carries the resolution path so the message can show how the failing token was reached.
 */
export class ContainerError extends Error {
  /** Token names from the outermost resolution to the failing one. */
  readonly path: readonly string[];

  constructor(message: string, path: readonly string[] = []) {
    super(message);
    this.name = new.target.name;
    this.path = path;
  }
}

/** `A → B → C`, the shape every message uses for a path. */
export function formatPath(path: readonly string[]): string {
  return path.join(' → ');
}

function via(path: readonly string[]): string {
  return path.length > 1 ? ` (resolving ${formatPath(path)})` : '';
}

/** A registration was given a wrong token, lifetime or provider. Raised by `register`. */
export class RegistrationError extends ContainerError {}

/** Nothing is registered under the requested token. */
export class MissingRegistrationError extends ContainerError {
  constructor(token: unknown, path: readonly string[]) {
    const name = tokenName(token);
    const hint =
      typeof token === 'function'
        ? `container.register(${name}, { lifetime: 'scoped' }) or container.singleton(${name})`
        : `container.register(${name}, { useValue: … }) or { useFactory: … }`;
    super(`No registration for ${name}${via(path)}. Register it first, e.g. ${hint}.`, path);
  }
}

/** A service depends on itself, directly or through others. */
export class CycleError extends ContainerError {
  constructor(cycle: readonly string[], path: readonly string[]) {
    super(
      `Cycle: ${formatPath(cycle)}${path.length > cycle.length ? ` (resolving ${formatPath(path)})` : ''}. ` +
        'Break it by moving the shared part into a third service, or by calling Inject() inside a method ' +
        'instead of as a constructor default, so it resolves at call time.',
      path,
    );
  }
}

/** A singleton would keep a scoped instance alive past its scope (a "captive dependency"). */
export class CaptiveDependencyError extends ContainerError {
  constructor(singleton: string, scoped: string, path: readonly string[]) {
    super(
      // With just [singleton, scoped] the path would only repeat the two names.
      `Singleton ${singleton} cannot depend on scoped ${scoped}${path.length > 2 ? via(path) : ''}: it would keep the first ` +
        `request's ${scoped} for the whole app. Make ${singleton} scoped (or transient), make ${scoped} ` +
        `singleton, or call Inject(${scoped}) inside the method that needs it.`,
      path,
    );
  }
}

/** A scoped service was asked for where no scope is active. */
export class ScopeRequiredError extends ContainerError {
  constructor(token: unknown, path: readonly string[]) {
    const name = tokenName(token);
    super(
      `${name} is scoped and no scope is active${via(path)}. Resolve it while handling a request ` +
        '(register ScopedDependencyMiddleware on the app), or inside container.runInScope(fn) / ' +
        'scope.run(fn) in scripts and tests.',
      path,
    );
  }
}

/** The scope has been disposed (its request ended) and cannot create or hand out instances. */
export class ScopeDisposedError extends ContainerError {
  constructor(token: unknown, path: readonly string[]) {
    super(
      `Cannot resolve ${tokenName(token)}${via(path)}: its scope was already disposed (the request ended). ` +
        'Resolve services while the request is being handled, not in callbacks that outlive it.',
      path,
    );
  }
}
