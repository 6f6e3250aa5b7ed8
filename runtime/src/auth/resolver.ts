import type { FastifyRequest } from 'fastify';
import type { CoreContext } from '../context/context.js';
import { UnauthenticatedError } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { AuthSettings } from '../settings/settings.js';
import { extractCredential } from './credentials.js';
import { createTokenVerifier, expiredTokenError, notYetValidError, type VerifiedToken } from './jwt.js';
import { checkRowFilterModels, loadPolicies, type PolicyDocument, type PolicySet } from './policies.js';
import { ProviderTokenVerifier, type ProviderVerifiedToken } from './provider-tokens.js';
import { LruCache } from './token-cache.js';

/**
 * Turns a request into the caller's `CoreContext`. The default reads a JWT, HS256 or from an identity
 * provider (`JwtContextResolver`); apps with sessions, API keys… subclass this and pass their resolver to
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
  /**
   * Tokens from an identity provider (`loadAuthSettings()`): with `jwksUrl` set, tokens are verified
   * against the provider's key set instead of `secret`. Without it, only HS256 tokens are accepted.
   */
  auth?: AuthSettings;
  /** Receives the key set's fetch failures and configuration warnings; default silent. */
  logger?: Logger;
}

interface CachedToken {
  context: CoreContext;
  expiresAt: number;
  /** Set for provider tokens, whose memo entries live shorter (see `resolveToken`). */
  provider?: ProviderMemo;
}

interface ProviderMemo {
  notBefore: number;
  /** The entry is verified again after this instant (epoch ms). */
  reverifyAfter: number;
  kid: string | null;
  generation: number;
}

const DEFAULT_CACHE_SIZE = 1000;
/**
 * How long a verified provider token is remembered: short, so a key the provider withdrew, or a
 * changed issuer or audience policy, stops being trusted within minutes even between refreshes.
 */
const PROVIDER_MEMO_MAX_AGE_MS = 5 * 60_000;

/**
 * The default resolver: `Authorization: Bearer <jwt>` or the `access_token` cookie, verified as HS256
 * with `SECRET_KEY` or, when `auth.jwksUrl` is set, against the identity provider's keys; subject and
 * roles mapped through the policies. Verified tokens are cached by their raw string; the expiry is
 * re-checked on every hit, so a cached token stops working the moment its `exp` passes.
 *
 * Provider tokens are verified asynchronously (the key may have to be fetched) but a remembered one
 * resolves synchronously, as HS256 tokens do.
 */
export class JwtContextResolver extends ContextResolver {
  readonly policies: PolicySet;
  /** Set when tokens come from an identity provider (`auth.jwksUrl`). */
  readonly provider: ProviderTokenVerifier | undefined;
  private readonly verify: (token: string) => VerifiedToken;
  private readonly cache: LruCache<string, CachedToken>;

  constructor(options: JwtContextResolverOptions) {
    super();
    this.policies = loadPolicies(options.policies);
    // The context plugin builds this resolver at start, once the models are known: a row filter naming
    // a table or field they do not have stops the app here rather than on the first request.
    checkRowFilterModels(this.policies);
    this.verify = createTokenVerifier(options.secret);
    this.cache = new LruCache(options.cacheSize ?? DEFAULT_CACHE_SIZE);
    const auth = options.auth;
    if (auth?.jwksUrl !== undefined) {
      this.provider = new ProviderTokenVerifier({ ...auth, jwksUrl: auth.jwksUrl }, options.logger);
      // Key sets are often shared (every tenant of a provider, every app of a tenant): without these
      // checks a token issued for someone else's application would be accepted here.
      const unchecked = [
        ...(auth.issuer === undefined ? [['AUTH_ISSUER', 'issuer ("iss")']] : []),
        ...(auth.audience === undefined ? [['AUTH_AUDIENCE', 'audience ("aud")']] : []),
      ];
      if (unchecked.length > 0) {
        const names = unchecked.map(([name]) => name).join(' and ');
        options.logger?.warn(
          { jwksUrl: auth.jwksUrl },
          `${names} not set: tokens signed with the identity provider's keys are accepted whatever their ` +
            `${unchecked.map(([, claim]) => claim).join(' and ')}; set ${names} to accept only tokens issued for this API`,
        );
      }
      this.provider.keys.start();
    }
  }

  override resolve(request: FastifyRequest): CoreContext | null | Promise<CoreContext> {
    const { token } = extractCredential(request.headers);
    return token === null ? null : this.resolveToken(token);
  }

  /**
   * Stops the background refresh of the provider's keys. The context plugin calls it on close for the
   * resolver it builds; one passed as `{ resolver }` is the app's to close.
   */
  close(): void {
    this.provider?.keys.close();
  }

  override anonymousContext(): CoreContext {
    return this.policies.anonymousContext();
  }

  /**
   * The context for one raw token; throws (or rejects with) `UnauthenticatedError` when it is not
   * acceptable, `ServiceUnavailableError` when the provider's key for it cannot be had.
   */
  resolveToken(token: string): CoreContext | Promise<CoreContext> {
    if (token === '') {
      throw new UnauthenticatedError('The Authorization header has the Bearer scheme but no token.', [
        { path: 'headers.authorization', reason: 'malformed', message: 'Send "Authorization: Bearer <token>".' },
      ]);
    }
    const cached = this.cache.get(token);
    if (cached !== undefined) {
      const now = Date.now();
      // Same rule as fast-jwt: still valid at exactly `exp`, expired one millisecond later.
      if (now > cached.expiresAt) {
        this.cache.delete(token);
        throw expiredTokenError();
      }
      const memo = cached.provider;
      if (memo === undefined) return cached.context;
      if (now < memo.notBefore) {
        // Only a clock set back gets here: the token is not valid at this time.
        this.cache.delete(token);
        throw notYetValidError();
      }
      if (this.providerMemoHolds(memo, now)) return cached.context;
      this.cache.delete(token);
    }
    if (this.provider === undefined || this.provider.route(token) === 'local') {
      const verified = this.verify(token);
      const context = this.policies.contextFor(verified);
      this.cache.set(token, { context, expiresAt: verified.expiresAt });
      return context;
    }
    return this.provider.verify(token).then((verified) => this.rememberProviderToken(token, verified));
  }

  /**
   * A remembered provider token is used again while it is young and the key that verified it is
   * still in the provider's set; otherwise it is verified afresh (and refused if its key is gone).
   */
  private providerMemoHolds(memo: ProviderMemo, now: number): boolean {
    if (now > memo.reverifyAfter) return false;
    const keys = this.provider!.keys;
    if (!keys.stillHolds(memo.kid, memo.generation)) return false;
    memo.generation = keys.generation;
    return true;
  }

  private rememberProviderToken(token: string, verified: ProviderVerifiedToken): CoreContext {
    const context = this.policies.contextFor(verified);
    this.cache.set(token, {
      context,
      expiresAt: verified.expiresAt,
      provider: {
        notBefore: verified.notBefore,
        reverifyAfter: Date.now() + PROVIDER_MEMO_MAX_AGE_MS,
        kid: verified.kid,
        generation: verified.generation,
      },
    });
    return context;
  }

  /** Number of tokens currently cached (observability and tests). */
  get cachedTokenCount(): number {
    return this.cache.size;
  }
}
