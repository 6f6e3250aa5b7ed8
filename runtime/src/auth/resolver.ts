import type { FastifyRequest } from 'fastify';
import type { CoreContext } from '../context/context.js';
import { UnauthenticatedError } from '../errors.js';
import { extractCredential } from './credentials.js';
import { createTokenVerifier, expiredTokenError, type VerifiedToken } from './jwt.js';
import { loadPolicies, type PolicyDocument, type PolicySet } from './policies.js';
import { LruCache } from './token-cache.js';

/**
 * Turns a request into the caller's `CoreContext`. The default reads an HS256 JWT
 * (`JwtContextResolver`); apps with sessions, OIDC, API keys… subclass this and pass their resolver to
 * `coreContextPlugin({ resolver })` (registering it in the DI container is planned as the other way).
 *
 * Contract for implementations:
 * - return `null` when the request carries no credential at all (the caller is anonymous);
 * - throw `UnauthenticatedError` when a credential is present but invalid, expired or malformed: the
 *   plugin then runs the request as anonymous and records the error for guarded routes;
 * - any other exception is a bug or an outage (e.g. an identity provider is down) and fails the request.
 * `resolve` may be synchronous (preferred: no promise per request) or return a promise.
 */
export abstract class ContextResolver {
  abstract resolve(request: FastifyRequest): CoreContext | null | Promise<CoreContext | null>;

  /** The context of a caller without a (valid) credential. */
  abstract anonymousContext(): CoreContext;
}

export interface JwtContextResolverOptions {
  /** `SECRET_KEY`: its UTF-8 bytes are the HS256 key. */
  secret: string;
  /** Loaded policies, a policies object, or the path of `policies.json`. */
  policies: PolicySet | PolicyDocument | string | URL;
  /** How many verified tokens to remember (LRU); 0 turns the cache off. Default 1000. */
  cacheSize?: number;
}

interface CachedToken {
  context: CoreContext;
  expiresAt: number;
}

const DEFAULT_CACHE_SIZE = 1000;

/**
 * The default resolver: `Authorization: Bearer <jwt>` or the `access_token` cookie, verified as HS256,
 * `sub` and `roles` mapped through the policies. Verified tokens are cached by their raw string; the
 * expiry is re-checked on every hit, so a cached token stops working the moment its `exp` passes.
 */
export class JwtContextResolver extends ContextResolver {
  readonly policies: PolicySet;
  private readonly verify: (token: string) => VerifiedToken;
  private readonly cache: LruCache<string, CachedToken>;

  constructor(options: JwtContextResolverOptions) {
    super();
    this.policies = loadPolicies(options.policies);
    this.verify = createTokenVerifier(options.secret);
    this.cache = new LruCache(options.cacheSize ?? DEFAULT_CACHE_SIZE);
  }

  override resolve(request: FastifyRequest): CoreContext | null {
    const { token } = extractCredential(request.headers);
    return token === null ? null : this.resolveToken(token);
  }

  override anonymousContext(): CoreContext {
    return this.policies.anonymousContext();
  }

  /** The context for one raw token; throws `UnauthenticatedError` when it is not acceptable. */
  resolveToken(token: string): CoreContext {
    if (token === '') {
      throw new UnauthenticatedError('The Authorization header has the Bearer scheme but no token.', [
        { reason: 'malformed', message: 'Send "Authorization: Bearer <token>".' },
      ]);
    }
    const cached = this.cache.get(token);
    if (cached !== undefined) {
      // Same rule as fast-jwt: still valid at exactly `exp`, expired one millisecond later.
      if (Date.now() > cached.expiresAt) {
        this.cache.delete(token);
        throw expiredTokenError();
      }
      return cached.context;
    }
    const verified = this.verify(token);
    const context = this.policies.contextFor(verified);
    this.cache.set(token, { context, expiresAt: verified.expiresAt });
    return context;
  }

  /** Number of tokens currently cached (observability and tests). */
  get cachedTokenCount(): number {
    return this.cache.size;
  }
}
