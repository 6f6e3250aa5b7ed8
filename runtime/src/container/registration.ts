import { RegistrationError } from './container-errors.js';
import { LIFETIMES, Lifetime, isLifetime } from './lifetime.js';
import { describeValue, isToken, tokenName, type Constructable, type Token } from './token.js';

/** What a factory receives: resolves further tokens in the same scope and resolution path. */
export interface Resolver {
  resolve<T>(token: Token<T>): T;
}

/** Construct `useClass` (with no arguments; its parameter defaults may call `Inject`). */
export interface ClassProvider<T> {
  lifetime?: Lifetime;
  useClass: Constructable<T>;
  useFactory?: never;
  useValue?: never;
}

/** Call `useFactory` synchronously; `Inject` and `resolver.resolve` work inside it. */
export interface FactoryProvider<T> {
  lifetime?: Lifetime;
  useFactory: (resolver: Resolver) => T;
  useClass?: never;
  useValue?: never;
}

/** Hand out `useValue` as is. Always a singleton; the container never disposes it (its creator owns it). */
export interface ValueProvider<T> {
  lifetime?: typeof Lifetime.SINGLETON;
  useValue: T;
  useClass?: never;
  useFactory?: never;
}

/** Options for a class token that is its own implementation. */
export interface LifetimeOption {
  lifetime?: Lifetime;
  useClass?: never;
  useFactory?: never;
  useValue?: never;
}

export type Provider<T> = ClassProvider<T> | FactoryProvider<T> | ValueProvider<T>;

/** A validated registration (internal). Singletons keep their instance here. */
export interface Registration {
  readonly token: Token;
  readonly name: string;
  readonly lifetime: Lifetime;
  /** Builds a new instance; undefined for values. */
  readonly create: ((resolver: Resolver) => unknown) | undefined;
  /** Singletons (and values) once created. */
  instance?: { readonly value: unknown };
}

/** Lifetime of a registration made without one: a fresh instance each time is never wrong. */
export const DEFAULT_LIFETIME: Lifetime = Lifetime.TRANSIENT;

const PROVIDER_KEYS = ['lifetime', 'useClass', 'useFactory', 'useValue'] as const;
const SOURCES = ['useClass', 'useFactory', 'useValue'] as const;

/**
 * Checks a `register` call completely, before anything is constructed, and returns the normalized
 * registration. Every message names the token and says what was received.
 */
export function normalizeRegistration(token: unknown, provider: unknown): Registration {
  if (!isToken(token)) {
    throw new RegistrationError(
      `A token must be a class, a non-empty string or a symbol; received ${describeValue(token)}.`,
    );
  }
  const name = tokenName(token);
  if (provider !== undefined && (typeof provider !== 'object' || provider === null || Array.isArray(provider))) {
    throw new RegistrationError(
      `The options for ${name} must be an object like { lifetime: 'scoped' }; received ${describeValue(provider)}.`,
    );
  }
  const options = (provider ?? {}) as Record<string, unknown>;
  const unknownKeys = Object.keys(options).filter((key) => !(PROVIDER_KEYS as readonly string[]).includes(key));
  if (unknownKeys.length > 0) {
    throw new RegistrationError(
      `Unknown option ${unknownKeys.map((k) => `"${k}"`).join(', ')} for ${name}; allowed: ${PROVIDER_KEYS.join(', ')}.`,
    );
  }
  if (options.lifetime !== undefined && !isLifetime(options.lifetime)) {
    throw new RegistrationError(
      `Unknown lifetime ${describeValue(options.lifetime)} for ${name}; use one of ${LIFETIMES.map((l) => `'${l}'`).join(', ')}.`,
    );
  }
  const sources = SOURCES.filter((key) => key in options);
  if (sources.length > 1) {
    throw new RegistrationError(
      `${name} has ${sources.join(' and ')}; give exactly one of useClass, useFactory, useValue.`,
    );
  }
  const lifetime = options.lifetime as Lifetime | undefined;

  switch (sources[0]) {
    case 'useValue':
      if (lifetime !== undefined && lifetime !== Lifetime.SINGLETON) {
        throw new RegistrationError(
          `${name} uses useValue with lifetime '${lifetime}'; a value is one shared instance, so use ` +
            "lifetime 'singleton' (or omit it), or useFactory to build a new value per resolution.",
        );
      }
      return { token, name, lifetime: Lifetime.SINGLETON, create: undefined, instance: { value: options.useValue } };
    case 'useFactory': {
      const factory = options.useFactory;
      if (typeof factory !== 'function') {
        throw new RegistrationError(`useFactory for ${name} must be a function; received ${describeValue(factory)}.`);
      }
      return { token, name, lifetime: lifetime ?? DEFAULT_LIFETIME, create: (resolver) => factory(resolver) };
    }
    case 'useClass':
      return classRegistration(token, name, options.useClass, lifetime);
    default:
      if (typeof token !== 'function') {
        throw new RegistrationError(
          `${name} is not a class, so it needs a provider: { useClass }, { useFactory } or { useValue }.`,
        );
      }
      return classRegistration(token, name, token, lifetime);
  }
}

function classRegistration(
  token: Token,
  name: string,
  useClass: unknown,
  lifetime: Lifetime | undefined,
): Registration {
  if (typeof useClass !== 'function') {
    throw new RegistrationError(`useClass for ${name} must be a class; received ${describeValue(useClass)}.`);
  }
  const Ctor = useClass as Constructable<unknown>;
  return { token, name, lifetime: lifetime ?? DEFAULT_LIFETIME, create: () => new Ctor() };
}
