import { SettingsError } from './settings.js';

/**
 * Events across instances: with `url` set, events go through a transactional outbox to NATS
 * JetStream (see `EventBroker`); unset, they are dispatched in-process after each commit and the
 * rest is unused. Durations are in seconds, fractions allowed.
 */
export interface EventsSettings {
  /** `EVENTS_URL`: `nats://host:4222`, or several servers of one cluster separated by commas. */
  readonly url: string | undefined;
  /** `EVENTS_MAX_ATTEMPTS`: deliveries of one event to one handler before it is dead-lettered; default 5. */
  readonly maxAttempts: number;
  /** `EVENTS_RETRY_DELAY_S`: wait before the first redelivery after a handler threw, doubled each time; default 1. */
  readonly retryDelayS: number;
  /** `EVENTS_ACK_WAIT_S`: a delivery not acknowledged by then (a process that died mid-handler) is redelivered; default 30. */
  readonly ackWaitS: number;
  /** `EVENTS_RELAY_INTERVAL_S`: how often the relay looks for events other processes left unpublished; default 1. */
  readonly relayIntervalS: number;
  /** `EVENTS_OUTBOX_RETENTION_S`: published rows are deleted from `core_outbox` after this; default 86400 (a day). */
  readonly outboxRetentionS: number;
  /** `EVENTS_STREAM_MAX_AGE_S`: the broker keeps events (and dead letters) this long, 0 for ever; default 604800 (a week). */
  readonly streamMaxAgeS: number;
  /** `EVENTS_DUPLICATE_WINDOW_S`: a re-published event within this window is stored once; default 120. */
  readonly duplicateWindowS: number;
}

/** The `EVENTS_*` settings, from the same source as the others (environment first, then `.env`). */
export function readEventsSettings(read: (name: string) => string | undefined): EventsSettings {
  const streamMaxAgeS = seconds('EVENTS_STREAM_MAX_AGE_S', read('EVENTS_STREAM_MAX_AGE_S'), 604_800, 0);
  const duplicateWindowS = seconds('EVENTS_DUPLICATE_WINDOW_S', read('EVENTS_DUPLICATE_WINDOW_S'), 120, 1);
  if (streamMaxAgeS > 0 && duplicateWindowS > streamMaxAgeS) {
    throw new SettingsError(
      `EVENTS_DUPLICATE_WINDOW_S (${duplicateWindowS}) must not exceed EVENTS_STREAM_MAX_AGE_S (${streamMaxAgeS}): the broker cannot remember an event longer than it keeps it.`,
    );
  }
  return Object.freeze({
    url: parseEventsUrl(read('EVENTS_URL')),
    maxAttempts: attempts(read('EVENTS_MAX_ATTEMPTS')),
    retryDelayS: seconds('EVENTS_RETRY_DELAY_S', read('EVENTS_RETRY_DELAY_S'), 1, 0),
    ackWaitS: seconds('EVENTS_ACK_WAIT_S', read('EVENTS_ACK_WAIT_S'), 30, 1),
    relayIntervalS: seconds('EVENTS_RELAY_INTERVAL_S', read('EVENTS_RELAY_INTERVAL_S'), 1, 0.05),
    outboxRetentionS: seconds('EVENTS_OUTBOX_RETENTION_S', read('EVENTS_OUTBOX_RETENTION_S'), 86_400, 0),
    streamMaxAgeS,
    duplicateWindowS,
  });
}

function parseEventsUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const servers = raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  for (const server of servers) {
    let url: URL | undefined;
    try {
      url = new URL(server);
    } catch {
      url = undefined;
    }
    // Not echoed: a NATS URL may hold a user name and password.
    if (!url || !['nats:', 'tls:'].includes(url.protocol) || url.hostname === '') {
      throw new SettingsError(
        'EVENTS_URL must be nats://host:port (or tls://), several separated by commas, e.g. nats://127.0.0.1:4222.',
      );
    }
  }
  if (servers.length === 0) return undefined;
  return servers.join(',');
}

function attempts(raw: string | undefined): number {
  if (raw === undefined) return 5;
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= 1000)) {
    throw new SettingsError(
      `EVENTS_MAX_ATTEMPTS must be a whole number from 1 to 1000 (default 5); received ${JSON.stringify(raw)}.`,
    );
  }
  return value;
}

function seconds(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const value = /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min)) {
    throw new SettingsError(
      `${name} must be a number of seconds of at least ${min} (default ${fallback}); received ${JSON.stringify(raw)}.`,
    );
  }
  return value;
}
