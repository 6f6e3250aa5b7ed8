/**
 * The connection to NATS JetStream: connects in the background (an app starts and takes writes while
 * the broker is down: they wait in the outbox), reconnects for ever, and after every (re)connect makes
 * sure the streams exist before it reports itself ready.
 */
import type {
  ConsumerConfig,
  JetStreamClient,
  JetStreamManager,
  MsgHdrs,
  NatsConnection,
  PubAck,
  StreamConfig,
} from 'nats';
import type { Logger } from '../logging/logger.js';
import type { EventsSettings } from '../settings/events-settings.js';
import type { BrokerNames } from './names.js';

type NatsModule = typeof import('nats');

/** How long a publish or a JetStream API call may wait for its answer. */
const REQUEST_TIMEOUT_MS = 5_000;
/** Wait between two failed attempts to connect, or to set the streams up. */
const RETRY_MS = 1_000;
/** JetStream's error codes for an existing stream or consumer whose configuration differs. */
const STREAM_CONFIG_DIFFERS = 10058;

export interface NatsLinkOptions {
  readonly servers: readonly string[];
  readonly names: BrokerNames;
  readonly settings: EventsSettings;
  readonly logger: () => Logger;
  /** Runs after the streams are set up on each (re)connect, before the link reports ready (the handlers' consumers). */
  readonly onConnected: () => Promise<void>;
  /** The link became ready: pending events can be published. */
  readonly onReady: () => void;
}

let natsModule: Promise<NatsModule> | undefined;

/** The `nats` client, loaded on first use only: apps without `EVENTS_URL` never load it. */
export function loadNats(): Promise<NatsModule> {
  return (natsModule ??= import('nats'));
}

export class NatsLink {
  private nc: NatsConnection | undefined;
  private jsClient: JetStreamClient | undefined;
  private manager: JetStreamManager | undefined;
  private nats: NatsModule | undefined;
  private isReady = false;
  private stopped = false;
  private retry: { timer: NodeJS.Timeout; wake: () => void } | undefined;
  private readyWaiters: (() => void)[] = [];
  private settingUp: Promise<void> | undefined;

  constructor(private readonly options: NatsLinkOptions) {}

  /** Connected, streams in place, consumers set up. */
  get ready(): boolean {
    return this.isReady && !this.stopped;
  }

  get connected(): boolean {
    return this.nc !== undefined && !this.nc.isClosed();
  }

  start(): void {
    void this.connectLoop();
  }

  /** Resolves once ready (or stopped). */
  whenReady(): Promise<void> {
    if (this.ready || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  get js(): JetStreamClient {
    if (!this.jsClient) throw new Error('the event broker is not connected');
    return this.jsClient;
  }

  get module(): NatsModule {
    if (!this.nats) throw new Error('the event broker is not connected');
    return this.nats;
  }

  /** Publishes one message; the ack says whether the stream already had it (`duplicate`). */
  publish(subject: string, body: string | Uint8Array, msgID: string, headers?: MsgHdrs): Promise<PubAck> {
    return this.js.publish(subject, body, { msgID, timeout: REQUEST_TIMEOUT_MS, ...(headers ? { headers } : {}) });
  }

  /** Creates the durable consumer, or updates it when it exists with another configuration. */
  async ensureConsumer(stream: string, config: Partial<ConsumerConfig> & { durable_name: string }): Promise<void> {
    const jsm = this.jsm();
    try {
      await jsm.consumers.add(stream, config);
    } catch (err) {
      // Create-or-update: the server refuses a create whose configuration differs from the existing one.
      const { durable_name: durable, ...rest } = config;
      try {
        await jsm.consumers.update(stream, durable, rest);
      } catch {
        throw err;
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.isReady = false;
    this.wakeRetry();
    for (const resolve of this.readyWaiters.splice(0)) resolve();
    const nc = this.nc;
    this.nc = undefined;
    await this.settingUp?.catch(() => undefined);
    await nc?.close().catch(() => undefined);
  }

  private jsm(): JetStreamManager {
    if (!this.manager) throw new Error('the event broker is not connected');
    return this.manager;
  }

  private async connectLoop(): Promise<void> {
    let warned = false;
    while (!this.stopped) {
      try {
        const nats = (this.nats = await loadNats());
        const nc = await nats.connect({
          servers: [...this.options.servers],
          name: `${this.options.names.project}-core`,
          // Reconnect for ever: with the client's default (10 attempts) a relay gives up for good after ~20 s.
          maxReconnectAttempts: -1,
          reconnectTimeWait: RETRY_MS,
          timeout: REQUEST_TIMEOUT_MS,
        });
        if (this.stopped) {
          await nc.close();
          return;
        }
        this.nc = nc;
        this.jsClient = nc.jetstream({ timeout: REQUEST_TIMEOUT_MS });
        this.manager = await nc.jetstreamManager({ timeout: REQUEST_TIMEOUT_MS, checkAPI: false });
        this.options.logger().info({ servers: nc.getServer() }, 'event broker connected');
        void this.watch(nc);
        void this.setUp();
        return;
      } catch (err) {
        // Logged once per outage: the loop retries every second.
        if (!warned)
          this.options.logger().warn({ err }, 'event broker unreachable; events wait in the outbox until it answers');
        warned = true;
        await this.sleep(RETRY_MS);
      }
    }
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (this.stopped) return;
      if (status.type === 'disconnect') {
        this.isReady = false;
        this.options.logger().warn('event broker disconnected; events wait in the outbox until it is back');
      } else if (status.type === 'reconnect') {
        this.options.logger().info('event broker reconnected');
        // The server may have come back without its streams (a new store): set them up again.
        void this.setUp();
      }
    }
  }

  /** Streams, then the consumers, then ready; retried until it works or the link stops. */
  private setUp(): Promise<void> {
    return (this.settingUp ??= this.runSetUp().finally(() => (this.settingUp = undefined)));
  }

  private async runSetUp(): Promise<void> {
    while (!this.stopped && this.connected) {
      try {
        await this.ensureStreams();
        await this.options.onConnected();
        if (this.stopped) return;
        this.isReady = true;
        for (const resolve of this.readyWaiters.splice(0)) resolve();
        this.options.onReady();
        return;
      } catch (err) {
        this.options
          .logger()
          .error(
            { err },
            'event broker: could not set up the streams and consumers; retrying (is JetStream enabled on the server: nats-server -js?)',
          );
        await this.sleep(RETRY_MS * 5);
      }
    }
  }

  private async ensureStreams(): Promise<void> {
    const { names, settings } = this.options;
    const { nanos, StorageType } = this.module;
    const maxAge = nanos(settings.streamMaxAgeS * 1000);
    await this.ensureStream({
      name: names.eventsStream,
      subjects: [names.allEvents],
      storage: StorageType.File,
      max_age: maxAge,
      duplicate_window: nanos(settings.duplicateWindowS * 1000),
    });
    await this.ensureStream({
      name: names.dlqStream,
      subjects: [names.allDeadLetters],
      storage: StorageType.File,
      max_age: maxAge,
    });
  }

  private async ensureStream(config: Partial<StreamConfig> & { name: string }): Promise<void> {
    const jsm = this.jsm();
    try {
      await jsm.streams.add(config);
    } catch (err) {
      // The stream exists with other limits (settings changed since it was made): adopt the new ones.
      if ((err as { api_error?: { err_code?: number } }).api_error?.err_code !== STREAM_CONFIG_DIFFERS) throw err;
      await jsm.streams.update(config.name, config);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.retry = undefined;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.retry = { timer, wake };
    });
  }

  private wakeRetry(): void {
    this.retry?.wake();
  }
}
