/**
 * The two links between the entity-event bridge and the unit of work, kept in a module of their own so
 * neither imports the other:
 *
 * - per database, the dispatcher given to `registerDbEventDispatcher`, which is also the unit of work's
 *   default dispatcher;
 * - per EntityManager, the open unit of work that owns it. When that EntityManager's transaction commits,
 *   the bridge hands the entity events to the unit instead of dispatching them itself, so the unit can
 *   deliver them after its commit returns and outside its transaction (see `UnitOfWork.run`).
 *
 * Both maps are weak: a closed database or a finished unit leaves nothing behind.
 */
import type { EntityManager } from '@mikro-orm/core';
import type { Database } from '../data/database.js';
import type { Dispatcher } from '../events/dispatcher.js';
import type { EntityEvent } from '../events/events.js';

/** Receives the entity events of a committed transaction, to deliver them later. */
export type EntityEventSink = (dispatcher: Dispatcher, events: EntityEvent[]) => void;

const defaultDispatchers = new WeakMap<Database, Dispatcher>();
const sinks = new WeakMap<EntityManager, EntityEventSink>();

export function setDefaultDispatcher(db: Database, dispatcher: Dispatcher | undefined): void {
  if (dispatcher) defaultDispatchers.set(db, dispatcher);
  else defaultDispatchers.delete(db);
}

export function defaultDispatcherFor(db: Database): Dispatcher | undefined {
  return defaultDispatchers.get(db);
}

export function bindSink(em: EntityManager, sink: EntityEventSink): void {
  sinks.set(em, sink);
}

export function unbindSink(em: EntityManager): void {
  sinks.delete(em);
}

export function sinkFor(em: EntityManager): EntityEventSink | undefined {
  return sinks.get(em);
}
