import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '../events/events.js';
import { isBrokerEventName } from './names.js';

/** The broker's payload limit: the body and headers of one message. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** Kept for the headers (`Nats-Msg-Id`, and the dead-letter headers added later). */
const HEADER_ALLOWANCE = 2048;
export const MAX_EVENT_BYTES = MAX_MESSAGE_BYTES - HEADER_ALLOWANCE;

/** An event the broker cannot take, refused where it is raised. */
export class EventRefusedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventRefusedError';
  }
}

/** One row of `core_outbox`, before it is written. */
export interface OutboxRecord {
  readonly id: string;
  readonly name: string;
  readonly occurredAt: Date;
  /** The message body, JSON `{ id, name, occurred_at, payload }`, published as it is. */
  readonly body: string;
}

/**
 * The event as the broker will carry it: the same event with an `id` and `occurredAt` (an `id` the
 * app set itself is kept, so a re-raised event dedupes), and its row. Throws `EventRefusedError` for
 * a name that is not a subject token path, a payload that is not JSON, or a message over 1 MiB.
 */
export function toOutboxRecord(event: DomainEvent): { event: DomainEvent; record: OutboxRecord } {
  const name = event.name;
  if (typeof name !== 'string' || !isBrokerEventName(name)) {
    throw new EventRefusedError(
      `Event name ${JSON.stringify(name)} cannot be a broker subject: use dotted words of letters, digits, "_" and "-" (e.g. tasks.completed).`,
    );
  }
  const id = event.id ?? randomUUID();
  if (typeof id !== 'string' || id.length === 0 || id.length > 100) {
    throw new EventRefusedError(
      `Event "${name}": an id must be a string of 1 to 100 characters (a UUID is given when there is none).`,
    );
  }
  const occurredAt = new Date();
  const stamped: DomainEvent = { ...event, id, occurredAt: occurredAt.toISOString() };
  let body: string;
  try {
    body = JSON.stringify({ id, name, occurred_at: stamped.occurredAt, payload: event.payload ?? null }, jsonValue);
  } catch (err) {
    throw new EventRefusedError(`Event "${name}": its payload cannot be written as JSON (${(err as Error).message}).`, {
      cause: err,
    });
  }
  const bytes = Buffer.byteLength(body);
  if (bytes > MAX_EVENT_BYTES) {
    throw new EventRefusedError(
      `Event "${name}" is ${bytes} bytes as JSON, over the broker's limit of ${MAX_EVENT_BYTES} (1 MiB less room for headers): ` +
        'put a reference in the event (an id, a storage key) instead of the data itself.',
    );
  }
  return { event: stamped, record: { id, name, occurredAt, body } };
}

/** BigInt (e.g. a bigint primary key) as its decimal string: JSON has no integer type that holds it. */
function jsonValue(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/** A message body back to the event handlers see; throws on a body that is not one of ours. */
export function fromMessageBody(data: Uint8Array): DomainEvent & { id: string; occurredAt: string } {
  const parsed = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as Record<
    string,
    unknown
  >;
  const { id, name, occurred_at: occurredAt, payload } = parsed ?? {};
  if (typeof id !== 'string' || typeof name !== 'string' || typeof occurredAt !== 'string') {
    throw new Error('not an event message: expected JSON { id, name, occurred_at, payload }');
  }
  return { id, name, occurredAt, payload };
}
