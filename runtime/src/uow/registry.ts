/**
 * The links between the entity-event bridge and the unit of work, kept in a module of their own so
 * neither imports the other:
 *
 * - per database, the dispatcher given to `registerDbEventDispatcher`: it receives the entity events,
 *   and it is also the unit of work's default dispatcher for domain events;
 * - per transaction object (what an EntityManager holds as its transaction context), the open unit of
 *   work that owns it. The bridge hands the entity events of a flush in that transaction to the unit,
 *   which delivers them after its commit, outside its transaction (see `UnitOfWork.run`).
 *
 * Both maps are weak: a closed database or a finished unit leaves nothing behind.
 */
import type { Database } from '../db/database.js';
import type { Dispatcher } from '../events/dispatcher.js';
import type { DomainEvent, EntityEvent } from '../events/events.js';

/** Receives the entity events of a flush inside a unit's transaction, to deliver them after its commit. */
export type EntityEventSink = (dispatcher: Dispatcher, events: EntityEvent[]) => void;

const defaultDispatchers = new WeakMap<Database, Dispatcher>();
const sinks = new WeakMap<object, EntityEventSink>();

export function setDefaultDispatcher(db: Database, dispatcher: Dispatcher | undefined): void {
  if (dispatcher) defaultDispatchers.set(db, dispatcher);
  else defaultDispatchers.delete(db);
}

/** The dispatcher registered for `db` with `registerDbEventDispatcher`: entity events go there. */
export function defaultDispatcherFor(db: Database): Dispatcher | undefined {
  return defaultDispatchers.get(db);
}

export function bindSink(transaction: object, sink: EntityEventSink): void {
  sinks.set(transaction, sink);
}

export function unbindSink(transaction: object): void {
  sinks.delete(transaction);
}

/** The sink of the unit of work that owns `transaction` (a root transaction object), if any. */
export function sinkFor(transaction: object): EntityEventSink | undefined {
  return sinks.get(transaction);
}

/**
 * The outbox of a database with an event broker attached (`EVENTS_URL`): a unit of work on that
 * database writes its events there, in its own transaction, instead of only dispatching them.
 */
export interface OutboxWriter {
  /** The event as the broker will carry it (with its `id`); throws if the broker cannot take it. */
  prepare(event: DomainEvent): DomainEvent;
  /** Inserts the rows of prepared events through `query`, the unit's transaction. */
  write(
    query: (sql: string, params: readonly unknown[]) => Promise<unknown>,
    events: readonly DomainEvent[],
  ): Promise<void>;
  /** The unit that wrote rows has committed: they may be published now. */
  committed(): void;
}

const outboxes = new WeakMap<Database, OutboxWriter>();

export function setOutbox(db: Database, outbox: OutboxWriter | undefined): void {
  if (outbox) outboxes.set(db, outbox);
  else outboxes.delete(db);
}

export function outboxFor(db: Database): OutboxWriter | undefined {
  return outboxes.get(db);
}
