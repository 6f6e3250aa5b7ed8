export { Lifetime, LIFETIMES, isLifetime } from './lifetime.js';
export { createToken, tokenName, type Class, type Constructable, type InjectionToken, type Token } from './token.js';
export {
  DEFAULT_LIFETIME,
  type ClassProvider,
  type FactoryProvider,
  type LifetimeOption,
  type Provider,
  type Resolver,
  type ValueProvider,
} from './registration.js';
export {
  CaptiveDependencyError,
  ContainerError,
  CycleError,
  MissingRegistrationError,
  RegistrationError,
  ScopeDisposedError,
  ScopeRequiredError,
} from './container-errors.js';
export { currentScope, type Scope } from './scope.js';
export { Container, container, type ScopeOptions, type ShortFormProvider } from './container.js';
export { Inject } from './inject.js';
export {
  DEFAULT_ABORT_GRACE_MS,
  ScopedDependencyMiddleware,
  type ScopedDependencyOptions,
} from './scoped-dependency-middleware.js';
