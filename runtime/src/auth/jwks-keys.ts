import {
  createLocalJWKSet,
  errors,
  type CryptoKey,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from 'jose';
import { silentLogger, type Logger } from '../logging/logger.js';

/**
 * The identity provider's signing keys, fetched from its JWKS URL and kept in memory.
 *
 * Why not jose's `createRemoteJWKSet`: Core needs three things it does not expose — to remember a
 * failed fetch (so an outage answers 503 at once instead of refetching on every bad token), to know
 * which `kid`s the current set holds (so remembered tokens are dropped when their key is withdrawn),
 * and the time left before the next fetch (`Retry-After`). Key parsing, selection by `kid`/`alg` and
 * import stay jose's (`createLocalJWKSet`); this class only decides when to fetch.
 *
 * Rules:
 * - one fetch at a time: concurrent callers share it;
 * - on demand (no keys yet, or a token names an unknown `kid`) at most once per cooldown, counted
 *   from the end of the last fetch whether it succeeded or failed: a flood of tokens with made-up
 *   `kid`s costs one fetch per cooldown;
 * - in the background every `refreshMs`, whatever the cooldown; a failed fetch keeps the keys there were;
 * - a fetch that takes longer than `timeoutMs` fails.
 */
export interface JwksKeyStoreOptions {
  url: string;
  timeoutMs: number;
  cooldownMs: number;
  refreshMs: number;
  logger?: Logger;
}

/** No key can be had for the token right now (fetch failed or still cooling down after a failure). */
export class KeysUnavailableError extends Error {
  constructor(
    message: string,
    /** Seconds until the key set will be fetched again. */
    readonly retryAfterS: number,
  ) {
    super(message);
    this.name = 'KeysUnavailableError';
  }
}

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;

export class JwksKeyStore {
  /** Bumped on every successful fetch, so a memo can tell cheaply whether the set may have changed. */
  generation = 0;
  /** Fetches started (observability and tests). */
  fetchCount = 0;

  private readonly url: string;
  private readonly timeoutMs: number;
  private readonly cooldownMs: number;
  private readonly refreshMs: number;
  private readonly logger: Logger;
  private local: LocalKeySet | undefined;
  private kids: ReadonlySet<string> = new Set();
  /** When the last fetch ended (success or failure), epoch ms. */
  private lastFetchAt = Number.NEGATIVE_INFINITY;
  /** Why the last fetch failed; undefined after a success. */
  private lastFailure: string | undefined;
  private pending: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: JwksKeyStoreOptions) {
    this.url = options.url;
    this.timeoutMs = Math.max(1, Math.round(options.timeoutMs));
    this.cooldownMs = options.cooldownMs;
    // Timers overflow past ~24.8 days and would then fire every millisecond.
    this.refreshMs = Math.min(options.refreshMs, 2 ** 31 - 1);
    this.logger = options.logger ?? silentLogger;
  }

  /** Fetches the keys now (without waiting) and then every `refreshMs` until `close()`. */
  start(): void {
    void this.refresh();
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.refresh(), this.refreshMs);
    // The refresh must never keep a process alive on its own (tests, scripts, a closing server).
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Fetches the key set now, ignoring the cooldown; a failure is logged and keeps the current keys. */
  async refresh(): Promise<void> {
    try {
      await this.load();
    } catch {
      // Already logged by fetchOnce; the previous keys stay in use.
    }
  }

  /** Whether a token verified when the set was at `generation` with key `kid` may still be trusted. */
  stillHolds(kid: string | null, generation: number): boolean {
    return generation === this.generation || (kid !== null && this.kids.has(kid));
  }

  /** jose's key lookup: `jwtVerify(token, store.getKey, …)`. Throws `KeysUnavailableError` during an outage. */
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> => {
    if (this.local === undefined) {
      await this.loadOnDemand();
      return this.local!(header, token);
    }
    try {
      return await this.local(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      // An unknown `kid`: perhaps a key published since the last fetch (rotation).
      await this.loadOnDemand();
      return this.local(header, token);
    }
  };

  private coolingDown(): boolean {
    return Date.now() < this.lastFetchAt + this.cooldownMs;
  }

  /**
   * A fetch on a request's behalf, subject to the cooldown. While cooling down after a success there
   * is nothing new to learn (the caller's lookup fails as before: 401); after a failure, no key can be
   * had (503).
   */
  private async loadOnDemand(): Promise<void> {
    if (this.pending === undefined && this.coolingDown()) {
      if (this.lastFailure === undefined && this.local !== undefined) throw new errors.JWKSNoMatchingKey();
      throw this.unavailable();
    }
    try {
      await this.load();
    } catch {
      throw this.unavailable();
    }
  }

  private unavailable(): KeysUnavailableError {
    const retryAfterS = Math.max(1, Math.ceil((this.lastFetchAt + this.cooldownMs - Date.now()) / 1000));
    return new KeysUnavailableError(
      `The identity provider's signing keys cannot be fetched (${this.lastFailure ?? 'unknown reason'}).`,
      retryAfterS,
    );
  }

  private load(): Promise<void> {
    this.pending ??= this.fetchOnce().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async fetchOnce(): Promise<void> {
    this.fetchCount += 1;
    try {
      // No redirects: a key set must come from the configured URL itself (jose does the same).
      const response = await fetch(this.url, {
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
        headers: { accept: 'application/jwk-set+json, application/json' },
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new Error(`HTTP ${response.status} from the key set URL`);
      }
      const json = (await response.json()) as JSONWebKeySet;
      const local = createLocalJWKSet(json); // rejects anything that is not a key set
      const recovered = this.lastFailure !== undefined;
      this.local = local;
      this.kids = new Set(json.keys.map((key) => key.kid).filter((kid): kid is string => typeof kid === 'string'));
      this.generation += 1;
      this.lastFailure = undefined;
      if (recovered)
        this.logger.info({ jwksUrl: this.url, keys: this.kids.size }, "identity provider's signing keys fetched again");
    } catch (error) {
      this.lastFailure = describeFailure(error, this.timeoutMs);
      this.logger.warn(
        { jwksUrl: this.url, reason: this.lastFailure, keptKeys: this.kids.size },
        this.local === undefined
          ? "cannot fetch the identity provider's signing keys: requests with its tokens answer 503 until they can be fetched"
          : "cannot refresh the identity provider's signing keys: the keys fetched earlier stay in use",
      );
      throw error;
    } finally {
      this.lastFetchAt = Date.now();
    }
  }
}

/** A one-line reason for logs and the 503's log entry (never shown to the client). */
function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string') return `${error.message}: ${code}`;
    if (error instanceof SyntaxError) return 'the answer is not JSON';
    return error.message;
  }
  return String(error);
}
