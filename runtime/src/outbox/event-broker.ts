import type { Database } from '../db/database.js';
import type { Dispatcher, EventTransport, NamedSubscription } from '../events/dispatcher.js';
import type { DomainEvent } from '../events/events.js';
import { silentLogger, type Logger } from '../logging/logger.js';
import { applyCoreMigrations, pendingCoreMigrations } from '../migrations/core-migrations.js';
import type { EventsSettings } from '../settings/events-settings.js';
import { outboxFor, setOutbox, type OutboxWriter } from '../uow/registry.js';
import { UnitOfWork } from '../uow/unit-of-work.js';
import { HandlerConsumer, type HandlerStats } from './handler-consumer.js';
import { toOutboxRecord, type OutboxRecord } from './message.js';
import { brokerNames, type BrokerNames } from './names.js';
import { NatsLink } from './nats-link.js';
import { OutboxRelay, type RelayStats } from './relay.js';
import { insertStatements, relayStore } from './store.js';

export interface EventBrokerOptions {
  /** `EVENTS_*`; `events.url` must be set. */
  readonly events: EventsSettings;
  /** `PROJECT_NAME`: names the streams and subjects (see `brokerNames`). */
  readonly projectName: string;
}

export interface EventBrokerStats {
  /** Connected to the broker, with its streams and the handlers' consumers in place. */
  readonly ready: boolean;
  readonly relay: Readonly<RelayStats>;
  /** By handler name. */
  readonly handlers: Readonly<Record<string, Readonly<HandlerStats>>>;
}

/**
 * Events across instances, for one database and one dispatcher: the transactional outbox, its relay
 * to NATS JetStream, and a durable consumer per named handler (see `docs/events.md`).
 *
 * - Write side: every unit of work on the database writes its events to `core_outbox` in its own
 *   transaction (this object is the database's `OutboxWriter`). Events raised outside a unit
 *   (`dispatcher.dispatch`, a plain `em.flush()`'s entity events) get a transaction of their own.
 * - Relay: publishes committed rows (`OutboxRelay`), on its own database connection.
 * - Read side: each handler subscribed with a name on the dispatcher runs from its durable consumer
 *   (`HandlerConsumer`); the others still run in-process after the commit.
 *
 * Made by `registerDbEventDispatcher` when `EVENTS_URL` is set; `start()` (the kernel's lifespan
 * calls it when the app is ready) connects in the background, so the app starts, and commits, while
 * the broker is down.
 */
export class EventBroker implements EventTransport, OutboxWriter {
  readonly names: BrokerNames;
  private readonly link: NatsLink;
  private readonly relay: OutboxRelay;
  private readonly consumers = new Map<string, HandlerConsumer>();
  private readonly records = new WeakMap<DomainEvent, OutboxRecord>();
  private logger: Logger = silentLogger;
  private state: 'new' | 'started' | 'stopped' = 'new';

  constructor(
    readonly db: Database,
    readonly dispatcher: Dispatcher,
    private readonly options: EventBrokerOptions,
  ) {
    const url = options.events.url;
    if (!url) throw new Error('EventBroker needs EVENTS_URL (events.url)');
    this.names = brokerNames(options.projectName);
    const log = (): Logger => this.logger;
    this.link = new NatsLink({
      servers: url.split(','),
      names: this.names,
      settings: options.events,
      logger: log,
      onConnected: async () => {
        await Promise.all([...this.consumers.values()].map((consumer) => consumer.ensure()));
      },
      onReady: () => this.relay.poke(),
    });
    this.relay = new OutboxRelay(
      relayStore(db, log),
      this.link,
      this.names,
      { intervalMs: options.events.relayIntervalS * 1000, retentionMs: options.events.outboxRetentionS * 1000 },
      log,
    );
  }

  // The write side (OutboxWriter) ----------------------------------------------------------------------

  /** @internal */
  prepare(event: DomainEvent): DomainEvent {
    if (this.records.has(event)) return event;
    const { event: stamped, record } = toOutboxRecord(event);
    this.records.set(stamped, record);
    return stamped;
  }

  /** @internal */
  async write(
    query: (sql: string, params: readonly unknown[]) => Promise<unknown>,
    events: readonly DomainEvent[],
  ): Promise<void> {
    const records = events.map((event) => this.records.get(event) ?? toOutboxRecord(event).record);
    for (const { sql, params } of insertStatements(this.db, records)) await query(sql, params);
  }

  /** @internal */
  committed(): void {
    this.relay.poke();
  }

  // The dispatcher's side (EventTransport) -------------------------------------------------------------

  /** @internal Events raised outside a unit of work: a unit of their own (or the active one) records them. */
  async record(events: readonly DomainEvent[], dispatcher: Dispatcher): Promise<void> {
    await UnitOfWork.run(
      (uow) => {
        for (const event of events) uow.raise(event);
      },
      { db: this.db, dispatcher },
    );
  }

  /** @internal */
  subscribed(subscription: NamedSubscription): void {
    const consumer = new HandlerConsumer(subscription, this.link, this.names, this.options.events, () => this.logger);
    this.consumers.set(subscription.name, consumer);
    if (this.state === 'started') consumer.start();
  }

  /** @internal */
  unsubscribed(subscription: NamedSubscription): void {
    const consumer = this.consumers.get(subscription.name);
    if (consumer?.subscription !== subscription) return;
    this.consumers.delete(subscription.name);
    void consumer.stop();
  }

  /**
   * Creates Core's tables if `core migrate` has not (an in-memory test database), then connects to the
   * broker in the background and starts the relay and the handlers' consumers.
   */
  async start(logger: Logger = this.logger): Promise<void> {
    if (this.state !== 'new') return;
    this.logger = logger;
    // Read-only when `core migrate` has run: a database user without DDL rights can still start.
    const created = (await pendingCoreMigrations(this.db)).length > 0 ? await applyCoreMigrations(this.db) : [];
    if (created.length > 0)
      logger.info(
        { migrations: created },
        `created Core's tables (${created.join(', ')}); \`core migrate\` does so ahead of time`,
      );
    this.state = 'started';
    for (const consumer of this.consumers.values()) consumer.start();
    this.link.start();
    this.relay.start();
    logger.info(
      { stream: this.names.eventsStream, handlers: [...this.consumers.keys()] },
      'events go through the outbox to the broker',
    );
  }

  /** Stops the consumers (a running handler finishes), then the relay, then the connection. Pending rows stay for the next start. */
  async stop(): Promise<void> {
    if (this.state !== 'started') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopped';
    await Promise.all([...this.consumers.values()].map((consumer) => consumer.stop()));
    await this.relay.stop();
    await this.link.stop();
  }

  /** Whether the broker answers, with the streams and consumers set up. */
  get ready(): boolean {
    return this.link.ready;
  }

  /** Resolves once the broker is ready (or the broker is stopped). */
  whenReady(): Promise<void> {
    return this.link.whenReady();
  }

  stats(): EventBrokerStats {
    const handlers: Record<string, HandlerStats> = {};
    for (const [name, consumer] of this.consumers) handlers[name] = { ...consumer.stats };
    return { ready: this.link.ready, relay: { ...this.relay.stats }, handlers };
  }
}

const brokers = new WeakMap<Dispatcher, EventBroker>();

/**
 * Attaches an event broker for `db` to `dispatcher` (replacing one it had), and makes it `db`'s outbox.
 * Returns it, or detaches it and returns undefined when `events.url` is unset.
 */
export function attachEventBroker(
  dispatcher: Dispatcher,
  db: Database,
  options: EventBrokerOptions,
): EventBroker | undefined {
  detachEventBroker(dispatcher);
  if (!options.events.url) return undefined;
  const broker = new EventBroker(db, dispatcher, options);
  for (const subscription of dispatcher.subscriptions) broker.subscribed(subscription);
  brokers.set(dispatcher, broker);
  dispatcher.attachTransport(broker);
  setOutbox(db, broker);
  return broker;
}

/** Detaches the dispatcher's event broker, stopping it; events go back to in-process dispatch. */
export function detachEventBroker(dispatcher: Dispatcher): void {
  const broker = brokers.get(dispatcher);
  if (!broker) return;
  brokers.delete(dispatcher);
  if (dispatcher.attachedTransport === broker) dispatcher.attachTransport(undefined);
  if (outboxFor(broker.db) === broker) setOutbox(broker.db, undefined);
  void broker.stop();
}

/** The event broker attached to `dispatcher` (`EVENTS_URL` set), if any: its stats, `whenReady()`. */
export function eventBrokerOf(dispatcher: Dispatcher): EventBroker | undefined {
  return brokers.get(dispatcher);
}
