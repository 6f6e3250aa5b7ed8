import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactionContext, type EntityManager } from '@mikro-orm/core';
import { dbManager, type Database } from '../data/database.js';
import { Dispatcher } from '../events/dispatcher.js';
import type { DomainEvent, EntityEvent } from '../events/events.js';
import { bindSink, defaultDispatcherFor, unbindSink } from './registry.js';

export interface UnitOfWorkOptions {
  /** Database to run on; defaults to `dbManager.db`. */
  db?: Database;
  /**
   * Where the unit's domain events go after commit. Defaults to the dispatcher registered for `db` with
   * `registerDbEventDispatcher`, else nowhere. Ignored by a nested `run`, which joins the outer unit.
   */
  dispatcher?: Dispatcher;
}

type UnitState = 'open' | 'committed' | 'rolled back';

const storage = new AsyncLocalStorage<UnitOfWork>();

/** Used when no dispatcher is given or registered: it has no subscribers, so dispatching is a no-op. */
const NO_DISPATCHER = new Dispatcher();

/**
 * One database transaction plus the domain events raised while it was open.
 *
 * ```ts
 * const task = await UnitOfWork.run(async (uow) => {
 *   const task = uow.em.create(Task, { title: 'Write docs' });
 *   await uow.em.flush();
 *   uow.raise(domainEvent('tasks.assigned', { id: task.id }));
 *   return task;
 * });
 * ```
 *
 * **Lifecycle.** `run` forks an EntityManager (`uow.em`), begins a transaction, runs `fn`, flushes and
 * commits. Only then are events delivered: first the entity events of the transaction (if
 * `registerDbEventDispatcher` is in place for this database), in flush order, then the domain events
 * queued with `raise`, in the order they were raised. Entity events go first because they report the
 * data that committed, and domain events usually describe what that data means. Handlers run after
 * `run` has left the unit: they see committed data and `UnitOfWork.current()` is no longer this unit.
 * If `fn` throws, or the flush or commit fails, the transaction rolls back, every queued event is
 * dropped, and the error is rethrown.
 *
 * **Nesting.** A `run` inside an open unit on the same database joins it: same transaction, same
 * `em`, its events are queued on the outer unit and go out after the outer commit. There is no
 * savepoint, so a nested `run` that throws marks the whole unit as failed: even if the outer code
 * catches the error, the outer unit rolls back at its end and rethrows that error. Half of a nested
 * unit is never committed and its events are never sent.
 *
 * **Cost.** A unit is one `em.fork()` plus `em.begin()`/`em.commit()` on it, and two AsyncLocalStorage
 * scopes for `fn` (MikroORM's `TransactionContext`, so `orm.em` and `Database.select` inside `fn` use the
 * transaction, and this class's own). `em.transactional()` was not used: it also clones the event
 * manager, registers a subscriber per call and merges the fork back into its parent, none of which a
 * unit needs, since its EntityManager is dropped after the commit. Rough measurement on SQLite in
 * memory (2,000 single-row inserts, shared 2-core machine, so noisy): `em.transactional()` 450–700 µs
 * per insert, fork + begin/commit 360–490 µs. Most of the rest is knex's transaction object and the
 * BEGIN/COMMIT round trips (80–110 µs for an empty one), which any transactional write pays.
 */
export class UnitOfWork {
  /** The transactional EntityManager. Everything done through it commits or rolls back together. */
  readonly em: EntityManager;
  readonly db: Database;
  private readonly dispatcher: Dispatcher;
  private readonly domainEvents: DomainEvent[] = [];
  private readonly entityEvents: { dispatcher: Dispatcher; events: EntityEvent[] }[] = [];
  private state: UnitState = 'open';
  /** Set when a nested `run` threw: the unit may no longer commit. */
  private failure: { error: unknown } | undefined;

  private constructor(em: EntityManager, db: Database, dispatcher: Dispatcher) {
    this.em = em;
    this.db = db;
    this.dispatcher = dispatcher;
  }

  /** The unit of work active in this async context, if any. */
  static current(): UnitOfWork | undefined {
    return storage.getStore();
  }

  /**
   * Runs `fn` in a unit of work: joins the active one on the same database, otherwise opens, commits
   * and publishes a new one. Resolves with `fn`'s result once the events have been delivered.
   */
  static async run<T>(fn: (uow: UnitOfWork) => Promise<T> | T, options: UnitOfWorkOptions = {}): Promise<T> {
    const db = options.db ?? dbManager.db;
    const outer = storage.getStore();
    if (outer && outer.db === db && outer.state === 'open') return outer.join(fn);
    // `disableContextResolution`: fork the ORM's root EntityManager itself. Resolving the context would
    // fork whatever EntityManager the async context holds, which may belong to another database that
    // shares the ORM's context name.
    const em = db.orm.em.fork({ disableContextResolution: true });
    const unit = new UnitOfWork(em, db, options.dispatcher ?? defaultDispatcherFor(db) ?? NO_DISPATCHER);
    const result = await unit.execute(fn);
    await unit.publish();
    return result;
  }

  /**
   * Queues a domain event, delivered after the commit (dropped on rollback). Throws once the unit has
   * finished: an event raised after the fact would silently go nowhere.
   */
  raise(event: DomainEvent): void {
    if (this.state !== 'open') {
      throw new Error(
        `UnitOfWork.raise("${event.name}") was called after the unit ${this.state}: raise events inside ` +
          'UnitOfWork.run (e.g. in a postCreate hook), or open a new unit for them',
      );
    }
    this.domainEvents.push(event);
  }

  private async join<T>(fn: (uow: UnitOfWork) => Promise<T> | T): Promise<T> {
    try {
      return await fn(this);
    } catch (error) {
      this.failure ??= { error };
      throw error;
    }
  }

  private async execute<T>(fn: (uow: UnitOfWork) => Promise<T> | T): Promise<T> {
    const em = this.em;
    await em.begin();
    bindSink(em, (dispatcher, events) => this.entityEvents.push({ dispatcher, events }));
    try {
      const result = await TransactionContext.create(em, () => storage.run(this, () => fn(this)));
      if (this.failure) throw this.failure.error;
      await em.commit();
      this.state = 'committed';
      return result;
    } catch (error) {
      this.state = 'rolled back';
      this.domainEvents.length = 0;
      this.entityEvents.length = 0;
      if (em.isInTransaction()) {
        try {
          await em.rollback();
        } catch (rollbackError) {
          // The original error is what the caller needs; a failed rollback (e.g. a lost connection)
          // ends the transaction on the server anyway.
          this.db.logger.error({ err: rollbackError }, 'unit of work: rollback failed');
        }
      }
      throw error;
    } finally {
      unbindSink(em);
    }
  }

  /** Delivers the events of a committed unit. The dispatcher never throws: a failing handler is logged. */
  private async publish(): Promise<void> {
    for (const batch of this.entityEvents) await batch.dispatcher.dispatchAll(batch.events);
    if (this.domainEvents.length > 0) await this.dispatcher.dispatchAll(this.domainEvents);
  }
}
