import type { Logger } from '../logging/logger.js';
import type { NatsLink } from './nats-link.js';
import type { BrokerNames } from './names.js';
import type { PendingRow, RelayStore, RowOutcome } from './store.js';

/** What the relay did since it started (per process). */
export interface RelayStats {
  /** Publishes sent to the broker, successful or not. */
  publishAttempts: number;
  /** Publishes the broker acknowledged (their rows are then marked published). */
  published: number;
  /** Acknowledgements with `duplicate: true`: the stream already had the event (a re-publish of a row some relay published without marking it). */
  duplicates: number;
  /** Publishes that failed (timeout, broker gone); their rows stay pending. */
  failures: number;
  /** Published rows deleted after the retention. */
  pruned: number;
}

export interface RelayOptions {
  readonly intervalMs: number;
  readonly retentionMs: number;
  readonly batchSize?: number;
}

/** Published rows past the retention are deleted at most this often (more often for a short retention). */
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 1_000;
/** A repeated failure (database down) is logged at most this often. */
const WARN_EVERY_MS = 30_000;

/**
 * Publishes the rows of `core_outbox` to the broker and marks them published.
 *
 * It runs a pass when poked (a unit of this process committed rows: from commit to broker takes one
 * pass, about a millisecond), every `intervalMs` (rows another process left pending, e.g. one killed
 * between its commit and its publish), and when the broker becomes ready again. Passes never overlap: a poke during a
 * pass runs another one right after. A pass claims batches of pending rows in `seq` order until one
 * comes back short, publishes each batch in parallel (sent in order on one connection, so the stream
 * keeps that order unless a publish fails and is retried later) and records every row's outcome: a
 * failed row stays pending with one more attempt and never holds up the others.
 */
export class OutboxRelay {
  readonly stats: RelayStats = { publishAttempts: 0, published: 0, duplicates: 0, failures: 0, pruned: 0 };
  private readonly batchSize: number;
  private readonly pruneEveryMs: number;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private nextPruneAt = 0;
  private lastWarnAt = 0;

  constructor(
    private readonly store: RelayStore,
    private readonly link: NatsLink,
    private readonly names: BrokerNames,
    private readonly options: RelayOptions,
    private readonly logger: () => Logger,
  ) {
    this.batchSize = options.batchSize ?? 100;
    this.pruneEveryMs = Math.min(PRUNE_EVERY_MS, Math.max(options.intervalMs, options.retentionMs / 2));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.timer = setInterval(() => this.poke(), this.options.intervalMs);
    // The relay never keeps the process alive by itself.
    this.timer.unref();
    this.poke();
  }

  /** Runs a pass now (or right after the current one). */
  poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => (this.running = undefined));
  }

  /** Stops the timer and waits for the current pass; then one last pass, if the broker answers, for rows committed just before. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    clearInterval(this.timer);
    this.stopped = true;
    await this.running;
    if (this.link.ready) await this.pass().catch(() => undefined);
    await this.store.close();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.pass();
      } catch (err) {
        this.warn(err, 'outbox relay: a pass failed; pending events stay in the outbox and the next pass retries');
      }
    } while (this.again && !this.stopped);
  }

  private async pass(): Promise<void> {
    // While the broker is away nothing is claimed: each publish would only wait for its timeout.
    if (!this.link.ready) return;
    for (;;) {
      const claimed = await this.store.claim(this.batchSize, (rows) => this.publish(rows));
      if (claimed < this.batchSize || !this.link.ready) break;
    }
    const now = Date.now();
    if (now >= this.nextPruneAt) {
      this.nextPruneAt = now + this.pruneEveryMs;
      const before = new Date(now - this.options.retentionMs);
      let deleted: number;
      do {
        deleted = await this.store.prune(before, PRUNE_BATCH);
        this.stats.pruned += deleted;
      } while (deleted === PRUNE_BATCH && !this.stopped);
    }
  }

  private async publish(rows: readonly PendingRow[]): Promise<RowOutcome[]> {
    this.stats.publishAttempts += rows.length;
    const settled = await Promise.allSettled(
      rows.map((row) => this.link.publish(this.names.subject(row.name), row.body, row.id)),
    );
    return settled.map((result) => {
      if (result.status === 'fulfilled') {
        this.stats.published++;
        if (result.value.duplicate) this.stats.duplicates++;
        return { ok: true };
      }
      this.stats.failures++;
      const error = result.reason instanceof Error ? result.reason.message : String(result.reason);
      this.warn(result.reason, 'outbox relay: a publish failed; the event stays pending and is retried');
      return { ok: false, error };
    });
  }

  private warn(err: unknown, message: string): void {
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_EVERY_MS) return;
    this.lastWarnAt = now;
    this.logger().warn({ err }, message);
  }
}
