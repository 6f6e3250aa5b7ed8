export {
  ANONYMOUS_ROLE,
  PolicyDocumentSchema,
  PolicyError,
  PolicySet,
  RolePolicySchema,
  loadPolicies,
} from './policies.js';
export type { PolicyDocument, Principal, RolePolicy } from './policies.js';
export { createTokenVerifier, parseDuration, signToken } from './jwt.js';
export type { SignTokenOptions, VerifiedToken } from './jwt.js';
export { ACCESS_TOKEN_COOKIE, extractCredential, readCookie } from './credentials.js';
export type { Credential } from './credentials.js';
export { ContextResolver, JwtContextResolver } from './resolver.js';
export { JwksKeyStore, KeysUnavailableError } from './jwks-keys.js';
export type { JwksKeyStoreOptions } from './jwks-keys.js';
export { ProviderTokenVerifier } from './provider-tokens.js';
export type { ProviderAuthSettings, ProviderVerifiedToken } from './provider-tokens.js';
export type { JwtContextResolverOptions } from './resolver.js';
export { assertPermission, CONTEXT_RESOLVER, coreContextPlugin } from './plugin.js';
export type { CoreAuthState, CoreContextPluginOptions } from './plugin.js';
