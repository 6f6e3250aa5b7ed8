/**
 * What a registration is keyed by: a class (the usual case), a string, or a symbol. `createToken`
 * gives a symbol that carries the resolved type, so `Inject(CONFIG)` is typed without a cast.
 */

/** Any class, including abstract ones, whatever its constructor parameters. */
export type Class<T> = abstract new (...args: never[]) => T;

/** A class the container can construct: every constructor parameter is optional (e.g. `= Inject(Repo)`). */
export type Constructable<T> = new () => T;

declare const tokenType: unique symbol;

/** A symbol token that remembers the type it resolves to. Create one with `createToken`. */
export type InjectionToken<T> = symbol & { readonly [tokenType]?: T };

export type Token<T = unknown> = Class<T> | InjectionToken<T> | string | symbol;

/** `const CONFIG = createToken<Config>('Config')` → `Inject(CONFIG)` is a `Config`. */
export function createToken<T>(description: string): InjectionToken<T> {
  return Symbol(description) as InjectionToken<T>;
}

/** Readable name for messages: the class name, a quoted string, or `Symbol(description)`. */
export function tokenName(token: unknown): string {
  if (typeof token === 'function') return token.name || '<anonymous class>';
  if (typeof token === 'string') return JSON.stringify(token);
  if (typeof token === 'symbol') return token.toString();
  return describeValue(token);
}

/** Describes a wrong value in an error message: its type and a short rendering. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'undefined':
      return 'undefined';
    case 'string':
      return `the string ${JSON.stringify(value)}`;
    case 'function':
      return `the function ${value.name || '<anonymous>'}`;
    case 'object':
      return `an object (${value.constructor?.name ?? 'no prototype'})`;
    default:
      return `${typeof value} ${String(value)}`;
  }
}

export function isToken(value: unknown): value is Token {
  return typeof value === 'function' || typeof value === 'symbol' || (typeof value === 'string' && value.length > 0);
}
