import { silentLogger, type Logger } from '../logging/logger.js';
import type { DomainEvent } from './events.js';

export type EventHandler<E extends DomainEvent = DomainEvent> = (event: E) => void | Promise<void>;

/**
 * In-process event bus. Handlers run one after another in subscription order; a handler that throws is
 * logged and the rest still run, because by the time events are dispatched the data is committed and a
 * failing subscriber must not look like a failed write.
 */
export class Dispatcher {
  private readonly handlers = new Map<string, EventHandler[]>();

  constructor(private logger: Logger = silentLogger) {}

  setLogger(logger: Logger): void {
    this.logger = logger;
  }

  /** Subscribes to one event name, or to every event with `*`. Returns the unsubscribe function. */
  subscribe<E extends DomainEvent = DomainEvent>(name: string, handler: EventHandler<E>): () => void {
    const list = this.handlers.get(name) ?? [];
    list.push(handler as EventHandler);
    this.handlers.set(name, list);
    return () => {
      const current = this.handlers.get(name);
      if (!current) return;
      const at = current.indexOf(handler as EventHandler);
      if (at >= 0) current.splice(at, 1);
    };
  }

  /** Delivers one event to its subscribers. Never throws. */
  async dispatch(event: DomainEvent): Promise<void> {
    const exact = this.handlers.get(event.name);
    const wildcard = this.handlers.get('*');
    if (!exact?.length && !wildcard?.length) return;
    for (const handler of [...(exact ?? []), ...(wildcard ?? [])]) {
      try {
        await handler(event);
      } catch (err) {
        this.logger.error({ err, event: event.name }, 'event handler failed; the committed data stays');
      }
    }
  }

  /** Delivers events in order. Never throws. */
  async dispatchAll(events: readonly DomainEvent[]): Promise<void> {
    for (const event of events) await this.dispatch(event);
  }
}
