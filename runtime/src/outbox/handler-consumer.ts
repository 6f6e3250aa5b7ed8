import type { ConsumerMessages, JsMsg } from 'nats';
import type { NamedSubscription } from '../events/dispatcher.js';
import type { Logger } from '../logging/logger.js';
import type { EventsSettings } from '../settings/events-settings.js';
import { fromMessageBody } from './message.js';
import type { BrokerNames } from './names.js';
import type { NatsLink } from './nats-link.js';

/** What one handler's consumer did in this process. */
export interface HandlerStats {
  /** Deliveries received (first ones and redeliveries). */
  delivered: number;
  /** Deliveries the handler finished: acknowledged. */
  handled: number;
  /** Deliveries whose handler threw and that are retried later. */
  retried: number;
  /** Events given up on: copied to the dead-letter subject. */
  deadLettered: number;
}

/** The longest wait before a retry, however many attempts came before. */
const MAX_RETRY_DELAY_MS = 5 * 60_000;
const WAIT_AFTER_ERROR_MS = 1_000;

/**
 * One named handler's durable consumer on the events stream, shared by every instance of the app: the
 * broker hands each event to one of them. Deliveries are handled one at a time per instance (the
 * consumer asks for one message at a time, so none waits in this process while its redelivery timer
 * runs out).
 *
 * A handler that returns acknowledges the event. One that throws has it redelivered after
 * `retryDelayS`, doubled at each attempt (up to 5 minutes); the delay is given with each negative
 * acknowledgement rather than as the consumer's `backoff`, which the server applies unreliably
 * together with delayed naks. After `maxAttempts` deliveries the event is copied to
 * `<project>.dlq.<handler>` (stream `<PROJECT>_DLQ`) with the reason in headers, then terminated. A
 * handler still running is kept alive with progress acknowledgements; one whose process died is
 * redelivered after `ackWaitS`, and an event delivered more than `maxAttempts` times that way (a
 * handler that crashes its process) is dead-lettered without running it again.
 */
export class HandlerConsumer {
  readonly stats: HandlerStats = { delivered: 0, handled: 0, retried: 0, deadLettered: 0 };
  private ensured = false;
  private stopped = false;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private pause: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  /** Resolves when `stop()` is called: ends a wait for the broker that would otherwise outlast it. */
  private readonly stopping: Promise<void>;
  private signalStop: () => void = () => undefined;

  constructor(
    readonly subscription: NamedSubscription,
    private readonly link: NatsLink,
    private readonly names: BrokerNames,
    private readonly settings: EventsSettings,
    private readonly logger: () => Logger,
  ) {
    this.stopping = new Promise((resolve) => (this.signalStop = resolve));
  }

  /** Creates or updates the durable consumer on the server (on every (re)connect). */
  async ensure(): Promise<void> {
    const { AckPolicy, DeliverPolicy, nanos } = this.link.module;
    await this.link.ensureConsumer(this.names.eventsStream, {
      durable_name: this.subscription.name,
      ack_policy: AckPolicy.Explicit,
      // A handler added to a running app starts with the events raised from then on, not the stream's history.
      deliver_policy: DeliverPolicy.New,
      filter_subject: this.names.subject(this.subscription.event),
      ack_wait: nanos(this.settings.ackWaitS * 1000),
      // Unlimited for the server: the handler's attempts are counted here, so the last one can be dead-lettered first.
      max_deliver: -1,
    });
    this.ensured = true;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.signalStop();
    this.pause?.wake();
    await this.messages?.close().catch(() => undefined);
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await Promise.race([this.link.whenReady(), this.stopping]);
        if (this.stopped) return;
        if (!this.ensured) await this.ensure();
        const consumer = await this.link.js.consumers.get(this.names.eventsStream, this.subscription.name);
        const messages = await consumer.consume({ max_messages: 1 });
        this.messages = messages;
        if (this.stopped) {
          await messages.close();
          return;
        }
        for await (const message of messages) await this.handle(message);
        // The iterator ended without stop(): the client gave up on the consumer; start over shortly.
        if (!this.stopped) await this.sleep(WAIT_AFTER_ERROR_MS);
      } catch (err) {
        if (this.stopped) return;
        this.logger().warn({ err, handler: this.subscription.name }, 'event handler consumer failed; it starts again');
        this.ensured = false;
        await this.sleep(WAIT_AFTER_ERROR_MS);
      }
    }
  }

  private async handle(message: JsMsg): Promise<void> {
    this.stats.delivered++;
    const attempt = message.info.deliveryCount;
    let event: ReturnType<typeof fromMessageBody>;
    try {
      event = fromMessageBody(message.data);
    } catch (err) {
      await this.deadLetter(message, undefined, attempt, err);
      return;
    }
    const max = this.settings.maxAttempts;
    if (attempt > max) {
      const reason = new Error(
        `delivered ${attempt} times without an answer (the process running the handler may have died, or the handler outlived EVENTS_ACK_WAIT_S)`,
      );
      await this.deadLetter(message, event, attempt, reason);
      return;
    }
    // Tells the server the handler is still at work, so a slow one is not redelivered elsewhere meanwhile.
    const keepAlive = setInterval(() => message.working(), Math.max(250, (this.settings.ackWaitS * 1000) / 3));
    keepAlive.unref();
    try {
      await this.subscription.handler(event);
      message.ack();
      this.stats.handled++;
    } catch (err) {
      if (attempt >= max) {
        await this.deadLetter(message, event, attempt, err);
      } else {
        const delay = this.retryDelay(attempt);
        this.stats.retried++;
        message.nak(delay);
        this.logger().warn(
          { err, handler: this.subscription.name, event: event.name, eventId: event.id, attempt, retryInMs: delay },
          'event handler failed; retrying',
        );
      }
    } finally {
      clearInterval(keepAlive);
    }
  }

  private retryDelay(attempt: number): number {
    const base = this.settings.retryDelayS * 1000;
    return Math.min(base * 2 ** (attempt - 1), Math.max(base, MAX_RETRY_DELAY_MS));
  }

  /** Copies the message to the handler's dead-letter subject, then terminates it; if that copy fails, retries later. */
  private async deadLetter(
    message: JsMsg,
    event: { id: string; name: string } | undefined,
    attempt: number,
    err: unknown,
  ): Promise<void> {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').slice(0, 500);
    const headers = this.link.module.headers();
    headers.set('Core-Handler', this.subscription.name);
    headers.set('Core-Error', reason);
    headers.set('Core-Attempts', String(attempt));
    headers.set('Core-Subject', message.subject);
    headers.set('Core-Stream-Seq', String(message.seq));
    const id = `${event?.id ?? `seq-${message.seq}`}.${this.subscription.name}`;
    try {
      await this.link.publish(this.names.deadLetterSubject(this.subscription.name), message.data, id, headers);
      message.term();
      this.stats.deadLettered++;
      this.logger().error(
        { err, handler: this.subscription.name, event: event?.name, eventId: event?.id, attempts: attempt },
        `event handler gave up; the event is in ${this.names.deadLetterSubject(this.subscription.name)}`,
      );
    } catch (publishErr) {
      message.nak(this.retryDelay(attempt));
      this.logger().error(
        { err: publishErr, handler: this.subscription.name },
        'event handler: could not dead-letter an event; it is delivered again later',
      );
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.pause = undefined;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.pause = { timer, wake };
    });
  }
}
