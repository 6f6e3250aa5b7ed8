import { silentLogger, type Logger } from '../logging/logger.js';
import type { DomainEvent } from './events.js';

export type EventHandler<E extends DomainEvent = DomainEvent> = (event: E) => void | Promise<void>;

export interface SubscribeOptions {
  /**
   * A stable name for the handler (letters, digits, `_` and `-`), unique in the dispatcher. With an
   * event broker (`EVENTS_URL`) a named handler receives events from the broker rather than in the
   * process that raised them: through a durable consumer of that name shared by every instance, so it
   * sees each event once across all of them, with retries and a dead-letter subject of that name.
   * Renaming it starts a new consumer. Without a broker it runs in-process like any other handler.
   */
  name?: string;
}

/** A handler subscribed under a name (see `SubscribeOptions.name`). */
export interface NamedSubscription {
  readonly name: string;
  /** The event name it listens to, or `*`. */
  readonly event: string;
  readonly handler: EventHandler;
}

/**
 * Where a dispatcher sends events when an event broker is attached to it (`EventBroker`).
 * @internal
 */
export interface EventTransport {
  /** Records events raised outside a unit of work in the outbox, in a transaction of their own. */
  record(events: readonly DomainEvent[], dispatcher: Dispatcher): Promise<void>;
  subscribed(subscription: NamedSubscription): void;
  unsubscribed(subscription: NamedSubscription): void;
  start(logger: Logger): Promise<void>;
  stop(): Promise<void>;
}

const HANDLER_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The event bus. Handlers run one after another in subscription order; a handler that throws is
 * logged and the rest still run, because by the time events are dispatched the data is committed and a
 * failing subscriber must not look like a failed write.
 *
 * With an event broker attached (`EVENTS_URL`, see `EventBroker`), events also go to the broker
 * through the outbox, and handlers subscribed with a `name` receive them from there instead of
 * in-process; the others still run in the process that raised the event, after its commit.
 */
export class Dispatcher {
  private readonly handlers = new Map<string, Entry[]>();
  private readonly named = new Map<string, NamedSubscription>();
  private transport: EventTransport | undefined;

  constructor(private logger: Logger = silentLogger) {}

  setLogger(logger: Logger): void {
    this.logger = logger;
  }

  /**
   * Subscribes to one event name, or to every event with `*`. Returns the unsubscribe function. A
   * `name` makes it a durable handler when an event broker is attached (see `SubscribeOptions`).
   */
  subscribe<E extends DomainEvent = DomainEvent>(
    event: string,
    handler: EventHandler<E>,
    options: SubscribeOptions = {},
  ): () => void {
    const name = options.name;
    const entry: Entry = { handler: handler as EventHandler, name };
    let subscription: NamedSubscription | undefined;
    if (name !== undefined) {
      if (!HANDLER_NAME.test(name)) {
        throw new Error(
          `Handler name ${JSON.stringify(name)} must be 1 to 100 letters, digits, "_" or "-": it names the handler's consumer and dead-letter subject on the broker.`,
        );
      }
      if (this.named.has(name))
        throw new Error(`A handler named "${name}" is already subscribed; handler names must be unique.`);
      subscription = Object.freeze({ name, event, handler: entry.handler });
      this.named.set(name, subscription);
    }
    const list = this.handlers.get(event) ?? [];
    list.push(entry);
    this.handlers.set(event, list);
    if (subscription) this.transport?.subscribed(subscription);
    return () => {
      const current = this.handlers.get(event);
      const at = current ? current.indexOf(entry) : -1;
      if (at >= 0) current!.splice(at, 1);
      if (subscription && this.named.get(subscription.name) === subscription) {
        this.named.delete(subscription.name);
        this.transport?.unsubscribed(subscription);
      }
    };
  }

  /** The handlers subscribed with a name. */
  get subscriptions(): readonly NamedSubscription[] {
    return [...this.named.values()];
  }

  /**
   * Delivers one event. Never throws because of a handler. With an event broker attached, the event
   * is first recorded in the outbox (in a transaction of its own, or in the active unit of work); that
   * rejects if the event cannot go to the broker (too large, a bad name) or cannot be stored.
   */
  async dispatch(event: DomainEvent): Promise<void> {
    await this.dispatchAll([event]);
  }

  /** Delivers events in order; see `dispatch`. */
  async dispatchAll(events: readonly DomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    if (this.transport) return this.transport.record(events, this);
    await this.dispatchCommitted(events);
  }

  /**
   * @internal Whether `dispatchCommitted(events)` would call any handler: a unit of work with nothing
   * to deliver completes without waiting for it.
   */
  handles(events: readonly DomainEvent[]): boolean {
    const local = this.transport === undefined;
    const wildcard = this.handlers.get('*');
    for (const event of events) {
      for (const entries of [this.handlers.get(event.name), wildcard]) {
        if (entries?.some((entry) => local || entry.name === undefined)) return true;
      }
    }
    return false;
  }

  /**
   * @internal Delivers committed events to the in-process handlers: every handler without a broker,
   * only the unnamed ones with one (the named ones get the events from the broker). Never throws.
   */
  async dispatchCommitted(events: readonly DomainEvent[]): Promise<void> {
    const local = this.transport === undefined;
    for (const event of events) {
      const exact = this.handlers.get(event.name);
      const wildcard = this.handlers.get('*');
      if (!exact?.length && !wildcard?.length) continue;
      for (const entry of [...(exact ?? []), ...(wildcard ?? [])]) {
        if (!local && entry.name !== undefined) continue;
        try {
          await entry.handler(event);
        } catch (err) {
          this.logger.error({ err, event: event.name }, 'event handler failed; the committed data stays');
        }
      }
    }
  }

  /** @internal Attaches an event broker, or detaches it (undefined). */
  attachTransport(transport: EventTransport | undefined): void {
    this.transport = transport;
  }

  /** @internal The attached event broker. */
  get attachedTransport(): EventTransport | undefined {
    return this.transport;
  }

  /** Starts the attached event broker, if any (the kernel's lifespan calls it once the plugins have started). */
  async start(): Promise<void> {
    await this.transport?.start(this.logger);
  }

  /** Stops the attached event broker, if any; pending events stay in the outbox for the next start. */
  async stop(): Promise<void> {
    await this.transport?.stop();
  }
}

interface Entry {
  readonly handler: EventHandler;
  /** Set for a named (durable) handler. */
  readonly name: string | undefined;
}
