import { TransactionContext, type EntityManager, type Transaction } from '@mikro-orm/core';
import { runWithStoreTransaction } from '../container/request-store.js';
import { dbManager, type Database } from '../db/database.js';
import { keepTransactionContextInCoreStore } from '../db/transaction-context.js';
import { Dispatcher } from '../events/dispatcher.js';
import type { DomainEvent, EntityEvent } from '../events/events.js';
import { entityEventDispatcher } from './entity-events.js';
import { bindSink, defaultDispatcherFor, outboxFor, unbindSink, type OutboxWriter } from './registry.js';
import { maySkipTransaction } from './single-statement.js';
import { rootTransaction, UnitTransaction } from './transaction.js';

export interface UnitOfWorkOptions {
  /** Database to run on; defaults to `dbManager.db`. */
  db?: Database;
  /**
   * Where the unit's domain events go after commit. Defaults to the dispatcher registered for `db` with
   * `registerDbEventDispatcher`, else nowhere. Ignored by a nested `run`, which joins the outer unit.
   */
  dispatcher?: Dispatcher;
}

/** How `UnitOfWork.query` runs a statement (internal: Core's own writes set these). */
export interface StatementOptions {
  /** The statement `allowLastStatementAlone` announced: nothing follows it in the unit. */
  last?: boolean;
  /** The write checks the record's version in the unit: it keeps BEGIN and COMMIT. */
  checksVersion?: boolean;
  /** A row-level filter is checked on the written row after the statement: it keeps BEGIN and COMMIT. */
  checksRowFilter?: boolean;
}

type UnitState = 'open' | 'committed' | 'rolled back';

/** Units by their EntityManager, their transaction object and their `TransactionContext` (see `UnitOfWork.current`). */
const units = new WeakMap<object, UnitOfWork>();

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
 * **Lifecycle.** `run` runs `fn` in the unit, flushes `uow.em` if it holds changes, and commits. Only
 * then are events delivered: first the entity events of the transaction (if `registerDbEventDispatcher`
 * is in place for this database), in write order, then the domain events queued with `raise`, in the
 * order they were raised. Entity events go first because they report the data that committed, and
 * domain events usually describe what that data means. Handlers run after `run` has left the unit: they
 * see committed data and `UnitOfWork.current()` is no longer this unit. If `fn` throws, or the flush or
 * commit fails, the transaction rolls back, every queued event is dropped, and the error is rethrown.
 *
 * **Nesting.** A `run` inside an open unit on the same database joins it: same transaction, same
 * `em`, its events are queued on the outer unit and go out after the outer commit. There is no
 * savepoint, so a nested `run` that throws marks the whole unit as failed: even if the outer code
 * catches the error, the outer unit rolls back at its end and rethrows that error. Half of a nested
 * unit is never committed and its events are never sent.
 *
 * **Cost.** The transaction is begun lazily, on the first statement, on a connection of MikroORM's pool,
 * and Core sends BEGIN and COMMIT itself (prepared once per SQLite connection). `uow.em` is a plain
 * `fork()`, made on first use, whose transaction context is the unit's transaction (see
 * `transaction.ts`), so nothing builds a knex transaction object unless `em.transactional()` asks for
 * a savepoint. A unit that only runs Core's compiled statements costs a BEGIN, its statements and a
 * COMMIT; the unit of a repository's single-row create costs its `INSERT … RETURNING` alone (see
 * `BaseRepository.create`); a unit that never touches the database costs no SQL. `fn` runs with the
 * unit as MikroORM's active `TransactionContext` (so `orm.em` and `Database.select` inside it use the
 * transaction), which also tells `UnitOfWork.current()` the active unit; that context is a field of
 * Core's one AsyncLocalStorage store (db/transaction-context.ts), not a store of its own. Rough measurement
 * on SQLite in memory, CPU time per unit: `em.fork()` + `em.begin()`/`em.commit()` 250 µs; BEGIN,
 * one INSERT and COMMIT through cached statements 30–50 µs.
 *
 * MikroORM's transaction events (`afterTransactionCommit`…) do not fire for a unit's transaction,
 * which Core runs itself; use `registerDbEventDispatcher` or domain events. `uow.em.commit()` and
 * `uow.em.rollback()` throw: the unit ends its transaction when `fn` returns or throws.
 */
export class UnitOfWork {
  readonly db: Database;
  private readonly transaction: UnitTransaction;
  private readonly dispatcher: Dispatcher;
  private readonly domainEvents: DomainEvent[] = [];
  private readonly entityEvents: { dispatcher: Dispatcher; events: EntityEvent[] }[] = [];
  private state: UnitState = 'open';
  /** Set when a nested `run` threw: the unit may no longer commit. */
  private failure: { error: unknown } | undefined;
  private forked: EntityManager | undefined;
  /** Set by `allowLastStatementAlone`, until a statement uses it. */
  private lastStatementAlone = false;
  /** Receives the entity events of the ORM's flushes in this unit (see `registerDbEventDispatcher`). */
  private readonly sink = (dispatcher: Dispatcher, events: EntityEvent[]): void => {
    this.entityEvents.push({ dispatcher, events });
  };

  private constructor(db: Database, dispatcher: Dispatcher) {
    this.db = db;
    this.dispatcher = dispatcher;
    this.transaction = new UnitTransaction(db);
  }

  /**
   * The transactional EntityManager. Everything done through it commits or rolls back together. It is
   * forked on first use (a unit that only runs Core's compiled statements never needs one).
   */
  get em(): EntityManager {
    if (!this.forked) {
      // `disableContextResolution`: fork the ORM's root EntityManager itself. Resolving the context would
      // fork whatever EntityManager the async context holds, which may belong to another database that
      // shares the ORM's context name.
      const em = this.db.orm.em.fork({ disableContextResolution: true });
      const transaction = this.transaction.knex;
      em.setTransactionContext(transaction as unknown as Transaction);
      units.set(em, this);
      // The bridge finds the unit of a flush through the root of the flushing EntityManager's transaction.
      units.set(transaction, this);
      bindSink(transaction, this.sink);
      this.forked = em;
    }
    return this.forked;
  }

  /** The unit of work active in this async context, if any. */
  static current(): UnitOfWork | undefined {
    const context = TransactionContext.currentTransactionContext();
    if (!context) return undefined;
    const own = units.get(context);
    if (own) return own;
    const em = context.em;
    const unit = units.get(em);
    if (unit) return unit;
    // A fork made inside the unit (e.g. by `uow.em.transactional()`) runs in a savepoint of its transaction.
    const trx = em.getTransactionContext<object>();
    return trx ? units.get(rootTransaction(trx)) : undefined;
  }

  /**
   * Runs `fn` in a unit of work: joins the active one on the same database, otherwise opens, commits
   * and publishes a new one. Resolves with `fn`'s result once the events have been delivered. `opened`
   * tells `fn` which: true for a new unit, false when it joined an outer one.
   */
  static run<T>(fn: (uow: UnitOfWork, opened: boolean) => Promise<T> | T, options: UnitOfWorkOptions = {}): Promise<T> {
    try {
      return Promise.resolve(UnitOfWork.runDirect(fn, options));
    } catch (error) {
      // E.g. no database yet: a rejection, as from an async function.
      return Promise.reject(error);
    }
  }

  /**
   * @internal `run`, without a promise where nothing has to wait: on SQLite, a unit whose `fn` answers
   * at once, whose connection the pool has free, and whose events have no handler to wait for, runs
   * BEGIN, its statements and COMMIT in one go and answers `fn`'s result itself. Errors throw, or
   * reject the promise. Core's own create path uses it (with AsyncLocalStorage every promise also runs
   * Node's async hooks); everything else calls `run`.
   */
  static runDirect<T>(
    fn: (uow: UnitOfWork, opened: boolean) => Promise<T> | T,
    options: UnitOfWorkOptions = {},
  ): T | Promise<T> {
    const db = options.db ?? dbManager.db;
    const outer = UnitOfWork.current();
    if (outer && outer.db === db && outer.state === 'open') return outer.join(fn);
    return new UnitOfWork(db, options.dispatcher ?? defaultDispatcherFor(db) ?? NO_DISPATCHER).execute(fn);
  }

  /**
   * Queues a domain event, delivered after the commit (dropped on rollback). Throws once the unit has
   * finished: an event raised after the fact would silently go nowhere. With an event broker
   * (`EVENTS_URL`) the event is written to the outbox in this transaction, and an event the broker
   * cannot take (over 1 MiB as JSON, a name that is no subject) throws `EventRefusedError` here.
   */
  raise(event: DomainEvent): void {
    this.assertOpen(`raise("${event.name}")`);
    // With an event broker the event is checked now, where the code that raised it can still see why.
    const outbox = outboxFor(this.db);
    this.domainEvents.push(outbox ? outbox.prepare(event) : event);
  }

  /**
   * Runs one SQL statement with `?` placeholders on the unit's transaction and returns its rows. It is
   * how Core writes a row without the ORM (see `InsertPlan`); statements are prepared once per SQLite
   * connection. Driver errors are MikroORM's exceptions, as from a flush.
   *
   * `options` (internal): `last` marks the statement that `allowLastStatementAlone` announced, which
   * runs without BEGIN and COMMIT when `maySkipTransaction` allows it (single-statement.ts).
   */
  query<R = Record<string, unknown>>(
    sql: string,
    params: readonly unknown[] = [],
    options: StatementOptions = {},
  ): Promise<R[]> {
    try {
      return Promise.resolve(this.queryDirect<R>(sql, params, options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** @internal `query`, answering the rows themselves where the statement ran at once (SQLite); errors throw. */
  queryDirect<R = Record<string, unknown>>(
    sql: string,
    params: readonly unknown[] = [],
    options: StatementOptions = {},
  ): R[] | Promise<R[]> {
    this.assertOpen('query()');
    if (options.last && this.lastStatementAlone) {
      this.lastStatementAlone = false;
      const alone = maySkipTransaction({
        declared: true,
        first: this.transaction.isUnused && !this.failure && !(this.forked && hasPendingChanges(this.forked)),
        writesOutbox: outboxFor(this.db) !== undefined,
        checksVersion: options.checksVersion === true,
        checksRowFilter: options.checksRowFilter === true,
      });
      if (alone) return this.transaction.queryAlone<R>(sql, params);
    }
    return this.transaction.queryDirect<R>(sql, params);
  }

  /**
   * @internal For Core's own create, called by the code that opened the unit (`run`'s `opened`): a
   * `BaseService` whose `createInTransaction` is false, or `BaseRepository.create` in a unit of its
   * own. It declares that nothing will follow the next statement sent with
   * `query(sql, params, { last: true })`; whether that statement then runs on its own, without BEGIN
   * and COMMIT, is `maySkipTransaction`'s decision (single-statement.ts). If it does, the unit can send
   * no other statement.
   */
  allowLastStatementAlone(): void {
    this.lastStatementAlone = true;
  }

  /**
   * Queues an entity event for a row written without the ORM, delivered with the ORM's entity events
   * (in write order) after the commit, and only if `registerDbEventDispatcher` is in place for the
   * database. Core's compiled insert calls it; the ORM's writes are reported by the bridge.
   */
  recordEntityEvent(event: EntityEvent): void {
    this.assertOpen('recordEntityEvent()');
    const dispatcher = entityEventDispatcher(this.db);
    if (dispatcher) this.entityEvents.push({ dispatcher, events: [event] });
  }

  private assertOpen(what: string): void {
    if (this.state === 'open') return;
    throw new Error(
      `UnitOfWork.${what} was called after the unit ${this.state}: do it inside UnitOfWork.run ` +
        '(e.g. in a postCreate hook), or open a new unit for it',
    );
  }

  /** A nested `run`: `fn` inside this unit; if it fails, the whole unit will roll back. */
  private join<T>(fn: (uow: UnitOfWork, opened: boolean) => Promise<T> | T): T | Promise<T> {
    let result: Promise<T> | T;
    try {
      result = fn(this, false);
    } catch (error) {
      this.failure ??= { error };
      throw error;
    }
    if (!isThenable(result)) return result;
    return Promise.resolve(result).catch((error: unknown) => {
      this.failure ??= { error };
      throw error;
    });
  }

  /**
   * Runs `fn`, then flushes, writes the outbox, commits and delivers the events; on any error it rolls
   * back and rethrows. Each step that answers at once is followed at once: on SQLite a unit of Core's
   * own statements with no handler to wait for completes without a promise.
   */
  private execute<T>(fn: (uow: UnitOfWork, opened: boolean) => Promise<T> | T): T | Promise<T> {
    let result: Promise<T> | T;
    try {
      result = this.enter(fn);
    } catch (error) {
      return this.abort(error);
    }
    if (isThenable(result)) {
      return Promise.resolve(result).then(
        (value) => this.complete(value),
        (error: unknown) => this.abort(error),
      );
    }
    return this.complete(result);
  }

  /** After `fn`: flush, outbox, COMMIT, then the events. */
  private complete<T>(result: T): T | Promise<T> {
    let commit: void | Promise<void>;
    try {
      if (this.failure) throw this.failure.error;
      const em = this.forked;
      if ((em && hasPendingChanges(em)) || outboxFor(this.db)) return this.completeAsync(result);
      commit = this.transaction.end(true);
    } catch (error) {
      return this.abort(error);
    }
    if (commit) {
      return commit.then(
        () => this.committed(result, undefined),
        (error: unknown) => this.abort(error),
      );
    }
    return this.committed(result, undefined);
  }

  /** `complete` for a unit with changes to flush or events for the outbox. */
  private async completeAsync<T>(result: T): Promise<T> {
    let outbox: OutboxWriter | undefined;
    try {
      const em = this.forked;
      if (em && hasPendingChanges(em)) await em.flush();
      outbox = outboxFor(this.db);
      if (outbox && !(await this.writeOutbox(outbox))) outbox = undefined;
      await this.transaction.end(true);
    } catch (error) {
      return this.abort(error);
    }
    return this.committed(result, outbox);
  }

  /** The unit has committed: the outbox is told, and the events are delivered. */
  private committed<T>(result: T, outbox: OutboxWriter | undefined): T | Promise<T> {
    this.state = 'committed';
    if (this.transaction.hasKnex) unbindSink(this.transaction.knex);
    outbox?.committed();
    if (this.entityEvents.length === 0 && this.domainEvents.length === 0) return result;
    const delivered = this.publish();
    return delivered ? delivered.then(() => result) : result;
  }

  /** Rolls back (logging a failed rollback) and rethrows `error`: at once, or as a rejection. */
  private abort(error: unknown): never | Promise<never> {
    this.state = 'rolled back';
    this.domainEvents.length = 0;
    this.entityEvents.length = 0;
    const unbind = (): void => {
      if (this.transaction.hasKnex) unbindSink(this.transaction.knex);
    };
    // The original error is what the caller needs; a failed rollback (e.g. a lost connection) ends the
    // transaction on the server anyway.
    const logged = (rollbackError: unknown): void => {
      this.db.logger.error({ err: rollbackError }, 'unit of work: rollback failed');
    };
    let rollback: Promise<void> | undefined;
    try {
      rollback = this.transaction.end(false) ?? undefined;
    } catch (rollbackError) {
      logged(rollbackError);
    }
    if (rollback) {
      return rollback.then(
        () => {
          unbind();
          throw error;
        },
        (rollbackError: unknown) => {
          logged(rollbackError);
          unbind();
          throw error;
        },
      );
    }
    unbind();
    throw error;
  }

  /**
   * Writes the unit's events to the outbox, last in its transaction: the entity events (write order),
   * then the domain events (raise order). Returns whether there were any.
   */
  private async writeOutbox(outbox: OutboxWriter): Promise<boolean> {
    if (this.entityEvents.length === 0 && this.domainEvents.length === 0) return false;
    // Handlers in this process then see the same id as the broker's consumers.
    for (const batch of this.entityEvents)
      batch.events = batch.events.map((event) => outbox.prepare(event) as EntityEvent);
    const events = [...this.entityEvents.flatMap((batch) => batch.events), ...this.domainEvents];
    await outbox.write((sql, params) => this.transaction.query(sql, params), events);
    return true;
  }

  /**
   * Runs `fn` in MikroORM's `TransactionContext` with this unit's EntityManager, so `orm.em` and
   * `Database.select` inside it use the transaction. The context's `em` is a getter: the fork happens
   * when something reads it, not for every unit.
   */
  private enter<T>(fn: (uow: UnitOfWork, opened: boolean) => Promise<T> | T): Promise<T> | T {
    // Without the store (a MikroORM that moved it), the unit enters MikroORM's own, forking up front.
    if (!keepTransactionContextInCoreStore()) return TransactionContext.create(this.em, () => fn(this, true));
    const context = new LazyTransactionContext(this);
    units.set(context, this);
    return runWithStoreTransaction(context, fn, this, true);
  }

  /**
   * Delivers the events of a committed unit; a promise only when some handler is to be waited for. The
   * dispatcher never throws: a failing handler is logged.
   */
  private publish(): Promise<void> | undefined {
    const batches = this.entityEvents.filter((batch) => batch.dispatcher.handles(batch.events));
    const domain = this.domainEvents.length > 0 && this.dispatcher.handles(this.domainEvents);
    if (batches.length === 0 && !domain) return undefined;
    return (async () => {
      for (const batch of batches) await batch.dispatcher.dispatchCommitted(batch.events);
      if (domain) await this.dispatcher.dispatchCommitted(this.domainEvents);
    })();
  }
}

/** A thenable (what `await` would wait for), as opposed to a plain value. */
function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}

/**
 * Whether `em` may hold changes to flush: entities persisted, removed or managed (a managed entity
 * may have been changed). An untouched fork has none, and skipping its flush saves the flush events.
 */
function hasPendingChanges(em: EntityManager): boolean {
  const work = em.getUnitOfWork(false);
  if (work.getPersistStack().size > 0 || work.getRemoveStack().size > 0 || work.getOrphanRemoveStack().size > 0)
    return true;
  for (const _entity of work.getIdentityMap()) return true;
  return false;
}

/** A `TransactionContext` whose `em` is the unit's, read (and so forked) only when someone asks. */
class LazyTransactionContext {
  constructor(private readonly unit: UnitOfWork) {}

  get em(): EntityManager {
    return this.unit.em;
  }

  get id(): number {
    return (this.unit.em as unknown as { _id: number })._id;
  }
}
Object.setPrototypeOf(LazyTransactionContext.prototype, TransactionContext.prototype);
