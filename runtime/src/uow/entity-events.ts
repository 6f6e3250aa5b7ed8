import {
  ChangeSetType,
  helper,
  type ChangeSet,
  type EntityMetadata,
  type EventSubscriber,
  type FlushEventArgs,
  type TransactionEventArgs,
  type UnitOfWork as OrmUnitOfWork,
} from '@mikro-orm/core';
import type { Database } from '../db/database.js';
import { wireNameOf } from '../model/wire-names.js';
import type { Dispatcher } from '../events/dispatcher.js';
import type { EntityChange, EntityEvent } from '../events/events.js';
import { setDefaultDispatcher, sinkFor } from './registry.js';
import { rootTransaction } from './transaction.js';

/** One entity written by a flush, waiting for its transaction to end. */
interface PendingChange {
  readonly change: EntityChange;
  readonly entity: object;
  readonly meta: EntityMetadata;
  readonly fields: Set<string>;
  /** Known at flush time except for database-generated keys, which are read at commit. */
  primaryKey: unknown;
}

const CHANGE_OF: Partial<Record<ChangeSetType, EntityChange>> = {
  [ChangeSetType.CREATE]: 'created',
  [ChangeSetType.UPDATE]: 'updated',
  [ChangeSetType.UPDATE_EARLY]: 'updated',
  [ChangeSetType.DELETE]: 'deleted',
  [ChangeSetType.DELETE_EARLY]: 'deleted',
};

/**
 * Turns MikroORM flushes into `EntityEvent`s, delivered only once the transaction that wrote them has
 * committed.
 *
 * `afterFlush` alone cannot tell that: it also fires inside a transaction that later rolls back. So
 * the changes of each flush are recorded in `onFlush` (where the change sets are final) and then:
 *
 * - inside a Core unit of work (the flush runs in the unit's transaction, or in a savepoint of it made
 *   by `em.transactional()`), handed to the unit once the flush has succeeded (`afterFlush`). The unit
 *   keeps them in write order next to the events of its own inserts, delivers them after its commit
 *   and drops them on rollback;
 * - otherwise kept under the transaction they belong to and released by `afterTransactionCommit` or
 *   dropped by `afterTransactionRollback`. The key is the root transaction when the flush runs inside
 *   one (`em.begin()`, `em.transactional()`; a savepoint is resolved to its root, because MikroORM
 *   fires commit/rollback events for the root transaction only), else the ORM's unit of work: a plain
 *   `em.flush()` opens its own transaction after `onFlush`, and its commit/rollback events carry that
 *   unit of work.
 *
 * Limitation: a savepoint that rolls back inside a transaction that then commits fires no MikroORM
 * event, so the changes flushed inside it are still reported. Core's own nesting never uses
 * savepoints (a nested `UnitOfWork.run` joins the outer unit).
 */
class EntityEventBridge implements EventSubscriber {
  dispatcher: Dispatcher | undefined;
  private readonly pending = new WeakMap<object, PendingChange[]>();
  /** Changes of a flush inside a unit of work, by the ORM unit of work flushing, until `afterFlush`. */
  private readonly flushing = new WeakMap<OrmUnitOfWork, PendingChange[]>();

  constructor(private readonly db: Database) {}

  onFlush({ em, uow }: FlushEventArgs): void {
    if (!this.dispatcher) return;
    const changes = collectChanges(uow);
    const trx = em.getTransactionContext<object>();
    const root = trx ? rootTransaction(trx) : undefined;
    if (root && sinkFor(root)) {
      // Replaces what an earlier, failed flush of the same EntityManager left behind.
      if (changes.length > 0) this.flushing.set(uow, changes);
      else this.flushing.delete(uow);
      return;
    }
    if (changes.length === 0) return;
    const key = root ?? uow;
    const list = this.pending.get(key);
    if (list) list.push(...changes);
    else this.pending.set(key, changes);
  }

  afterFlush({ em, uow }: FlushEventArgs): void {
    const changes = this.flushing.get(uow);
    if (!changes) return;
    this.flushing.delete(uow);
    const trx = em.getTransactionContext<object>();
    const sink = trx ? sinkFor(rootTransaction(trx)) : undefined;
    if (sink && this.dispatcher) sink(this.dispatcher, changes.map(toEntityEvent));
  }

  async afterTransactionCommit({ em, transaction, uow }: TransactionEventArgs): Promise<void> {
    const changes = [...this.take(transaction), ...this.take(uow)];
    const dispatcher = this.dispatcher;
    if (changes.length === 0 || !dispatcher) return;
    const events = changes.map(toEntityEvent);
    // A plain flush, or the caller's own em.begin()/em.transactional(). The handlers run before the
    // commit call returns; detach the finished transaction from the EntityManager first (MikroORM
    // does so right after this hook) so a handler that queries does not use the completed transaction.
    if (transaction && em.getTransactionContext() === transaction) em.resetTransactionContext();
    try {
      await dispatcher.dispatchAll(events);
    } catch (err) {
      // With an event broker the events go to the outbox first, in a transaction of their own; if that
      // fails, the flush has committed all the same and must not look failed.
      this.db.logger.error(
        { err, events: events.map((e) => e.name) },
        'entity events of a committed flush could not be recorded in the outbox',
      );
    }
  }

  afterTransactionRollback({ transaction, uow }: TransactionEventArgs): void {
    this.take(transaction);
    this.take(uow);
  }

  private take(key: object | undefined): PendingChange[] {
    if (!key) return [];
    const list = this.pending.get(key);
    if (!list) return [];
    this.pending.delete(key);
    return list;
  }
}

const bridges = new WeakMap<Database, EntityEventBridge>();

/**
 * Sends `db`'s entity events to `dispatcher`, replacing the dispatcher registered before. Returns the
 * one it replaced and a function that unregisters `dispatcher` (false if another one replaced it since).
 * Apps call `registerDbEventDispatcher`, which also wires the event broker.
 */
export function bridgeEntityEvents(
  dispatcher: Dispatcher,
  db: Database,
): { previous: Dispatcher | undefined; unregister: () => boolean } {
  let bridge = bridges.get(db);
  if (!bridge) {
    bridge = new EntityEventBridge(db);
    // Registered on the root EntityManager's event manager, which every `fork()` shares.
    db.orm.em.getEventManager().registerSubscriber(bridge);
    bridges.set(db, bridge);
  }
  const previous = bridge.dispatcher;
  bridge.dispatcher = dispatcher;
  setDefaultDispatcher(db, dispatcher);
  const registered = bridge;
  return {
    previous,
    unregister: () => {
      if (registered.dispatcher !== dispatcher) return false;
      registered.dispatcher = undefined;
      setDefaultDispatcher(db, undefined);
      return true;
    },
  };
}

/** The dispatcher receiving `db`'s entity events, if `registerDbEventDispatcher` is in place. */
export function entityEventDispatcher(db: Database): Dispatcher | undefined {
  return bridges.get(db)?.dispatcher;
}

/** Whether `subscriber` is Core's own bridge (the fast insert path must not skip anyone else's). */
export function isEntityEventBridge(subscriber: EventSubscriber): boolean {
  return subscriber instanceof EntityEventBridge;
}

/** The change sets of one flush (pivot tables left out), with many-to-many link changes merged in. */
function collectChanges(uow: OrmUnitOfWork): PendingChange[] {
  const byEntity = new Map<object, PendingChange>();
  const changes: PendingChange[] = [];
  for (const cs of uow.getChangeSets() as ChangeSet<object>[]) {
    const change = CHANGE_OF[cs.type];
    if (!change || cs.meta.pivotTable) continue;
    const pending: PendingChange = {
      change,
      entity: cs.entity,
      meta: cs.meta as EntityMetadata,
      fields: new Set(change === 'deleted' ? [] : Object.keys(cs.payload)),
      primaryKey: cs.getPrimaryKey(),
    };
    byEntity.set(cs.entity, pending);
    changes.push(pending);
  }
  for (const collection of uow.getCollectionUpdates()) {
    const owner = collection.owner as object;
    const prop = collection.property.name;
    const existing = byEntity.get(owner);
    if (existing) {
      if (existing.change !== 'deleted') existing.fields.add(prop);
      continue;
    }
    const wrapped = helper(owner);
    const pending: PendingChange = {
      change: 'updated',
      entity: owner,
      meta: wrapped.__meta as EntityMetadata,
      fields: new Set([prop]),
      primaryKey: wrapped.getPrimaryKey(),
    };
    byEntity.set(owner, pending);
    changes.push(pending);
  }
  return changes;
}

function toEntityEvent(pending: PendingChange): EntityEvent {
  const meta = pending.meta;
  const primaryKey = pending.primaryKey ?? helper(pending.entity).getPrimaryKey();
  return entityEvent(
    meta,
    pending.change,
    primaryKey,
    [...pending.fields].map((name) => wireNameOf(meta, name)),
  );
}

/** An entity event of `meta`'s table; `changedFields` are wire names (`project_id`, `label_ids`). */
export function entityEvent(
  meta: EntityMetadata,
  change: EntityChange,
  primaryKey: unknown,
  changedFields: readonly string[],
): EntityEvent {
  const table = meta.tableName;
  return {
    name: `${table}.${change}`,
    payload: { change, entity: meta.className, table, primaryKey, changedFields },
  };
}
