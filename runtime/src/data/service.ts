import type { ListParams, ReadOptions } from '../search/model-reader.js';
import type { SearchRequest } from '../search/search-request.js';
import { UnitOfWork } from '../uow/unit-of-work.js';
import type { Base, ModelClass } from '../model/base.js';
import { BaseRepository, type DeleteOptions, type Id, type UpdateOptions } from './repository.js';
import { notFoundError } from './repository-errors.js';
import type { Page, Row } from '../model/types.js';

export interface ServiceOptions<M extends Base, C extends object, U extends object> {
  model: ModelClass<M>;
  repository: BaseRepository<M, C, U>;
}

/**
 * Business layer of one model. Reads pass through to the repository; each write is one unit of work
 * (or joins the active one) that runs the hooks around the repository call:
 *
 * | step | create | update | delete |
 * |---|---|---|---|
 * | 1 | `preCreate(input)` → input | `preUpdate(id, input)` → input | `preDelete(id)` |
 * | 2 | insert | update | delete |
 * | 3 | `postCreate(row, uow)` | `postUpdate(row, uow)` | `postDelete(id, uow)` |
 * | 4 | commit, then events | commit, then events | commit, then events |
 *
 * A `pre*` hook may return a changed or new input (returning nothing keeps the input as it is). A
 * `post*` hook runs after the write and before the commit: the row exists in the transaction but no
 * other connection sees it yet. It is the place to `uow.raise(...)` domain events, which are delivered
 * only after the commit. Any hook that throws rolls the whole unit back: nothing is written and no
 * event is sent.
 *
 * Missing records: `get` throws `NotFoundError` here (the repository returns null, so other callers can
 * tell "absent" from "failed" without a try/catch); `update` and `delete` of a missing id throw
 * `NotFoundError` from the repository.
 *
 * Concurrency: `update` and `delete` with `{ ifMatch }` (an `If-Match` header) write only if the
 * record's ETag still matches, else `PreconditionFailedError` (412); the repository checks it at the
 * start of step 2, in the unit's transaction.
 *
 * Transactions: a create runs in a transaction (`createInTransaction`, true by default), so the table
 * above holds for every hook. A service whose create is one row and nothing after it declares
 * `createInTransaction = false`, and its INSERT may then go alone, without BEGIN and COMMIT:
 *
 * ```ts
 * export class TaskService extends BaseService<Task, TaskCreateInput, TaskUpdateInput> {
 *   protected override readonly createInTransaction = false;
 * }
 * ```
 */
export class BaseService<M extends Base, C extends object = Record<string, unknown>, U extends object = Partial<C>> {
  readonly model: ModelClass<M>;
  readonly repository: BaseRepository<M, C, U>;
  /**
   * Whether `create` runs in a transaction even when its INSERT is all its unit sends. True (the
   * default): `postCreate` runs before the commit, sees the row uncommitted, and undoes it by throwing.
   *
   * False declares that a create is one row and that nothing follows it: then, in a unit the create
   * opened, the INSERT goes alone, without BEGIN and COMMIT (a single statement is atomic by itself;
   * on PostgreSQL that saves two round trips). `postCreate` still runs, after the row has committed:
   * it may raise events (delivered as usual), but a throw no longer undoes the row, and a read or a
   * write there fails. The transaction is kept anyway, whatever this says, when something must run
   * in it with the INSERT: a related-record check or a write before it, an event broker's outbox row,
   * a version check, a row filter checked after the write (`maySkipTransaction` in
   * runtime/src/uow/single-statement.ts), and when the create joins a unit opened by its caller.
   * The declaration covers the repository's `create` too: it must write that one row only.
   */
  protected readonly createInTransaction: boolean = true;

  constructor(options: ServiceOptions<M, C, U>);
  constructor(model: ModelClass<M>, repository: BaseRepository<M, C, U>);
  constructor(modelOrOptions: ModelClass<M> | ServiceOptions<M, C, U>, repository?: BaseRepository<M, C, U>) {
    const options = typeof modelOrOptions === 'function' ? { model: modelOrOptions, repository } : modelOrOptions;
    if (!options.repository) {
      throw new TypeError(
        `${new.target.name}: pass the repository, as new ${new.target.name}({ model, repository }) or (model, repository)`,
      );
    }
    this.model = options.model;
    this.repository = options.repository;
  }

  /** The record with this id; `NotFoundError` when there is none. */
  get(id: Id, options: ReadOptions = {}): Promise<Row<M>> {
    try {
      return Promise.resolve(this.getDirect(id, options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * @internal `get`, without a promise when the read is synchronous (SQLite); errors throw. The
   * router's GET by id calls it while `get` is this class's own: with AsyncLocalStorage every promise
   * also runs Node's async hooks, and a read by id made none.
   */
  getDirect(id: Id, options: ReadOptions = {}): Row<M> | Promise<Row<M>> {
    const repository = this.repository;
    const read =
      repository.get === BaseRepository.prototype.get ? repository.getDirect(id, options) : repository.get(id, options);
    return read instanceof Promise ? read.then((row) => this.found(row)) : this.found(read);
  }

  private found(row: Row<M> | null): Row<M> {
    if (!row) throw notFoundError(this.model.tableName);
    return row;
  }

  getByIds(ids: readonly Id[], options: ReadOptions = {}): Promise<Row<M>[]> {
    return this.repository.getByIds(ids, options);
  }

  getList(params: ListParams = {}): Promise<Page<Row<M>>> {
    return this.repository.getList(params);
  }

  search(request: SearchRequest): Promise<Page<Row<M>>> {
    return this.repository.search(request);
  }

  // A hook is awaited only when it returns a promise: most hooks are synchronous, and every promise on
  // the write path also pays for each active AsyncLocalStorage store.

  create(input: C): Promise<Row<M>> {
    try {
      return Promise.resolve(this.createDirect(input));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * @internal `create`, answering the row itself where nothing had to wait: hooks that answer at once
   * and a write that ran at once (SQLite; see `UnitOfWork.runDirect`). Errors throw. The router's
   * create calls it while `create` is this class's own.
   */
  createDirect(input: C): Row<M> | Promise<Row<M>> {
    return UnitOfWork.runDirect(
      (uow, opened) => {
        const pre = this.preCreate(input);
        return isPromise(pre)
          ? Promise.resolve(pre).then((data) => this.insertAndFollow(uow, opened, data ?? input))
          : this.insertAndFollow(uow, opened, pre ?? input);
      },
      { db: this.repository.db },
    );
  }

  /** `create` after `preCreate`: the insert, then `postCreate`. */
  private insertAndFollow(uow: UnitOfWork, opened: boolean, data: C): Row<M> | Promise<Row<M>> {
    // The service's declaration, read here only: in a unit of its own, nothing follows the insert.
    if (opened && !this.createInTransaction) uow.allowLastStatementAlone();
    const repository = this.repository;
    const row =
      repository.create === BaseRepository.prototype.create ? repository.createDirect(data) : repository.create(data);
    if (isPromise(row)) return Promise.resolve(row).then((written) => this.followCreate(written, uow));
    return this.followCreate(row, uow);
  }

  private followCreate(row: Row<M>, uow: UnitOfWork): Row<M> | Promise<Row<M>> {
    const post = this.postCreate(row, uow);
    return isPromise(post) ? Promise.resolve(post).then(() => row) : row;
  }

  update(id: Id, input: U, options: UpdateOptions = {}): Promise<Row<M>> {
    return this.inUnit(async (uow) => {
      const pre = this.preUpdate(id, input);
      const data = (isPromise(pre) ? await pre : pre) ?? input;
      const row = await this.repository.update(id, data, options);
      const post = this.postUpdate(row, uow);
      if (isPromise(post)) await post;
      return row;
    });
  }

  delete(id: Id, options: DeleteOptions = {}): Promise<void> {
    return this.inUnit(async (uow) => {
      const pre = this.preDelete(id);
      if (isPromise(pre)) await pre;
      await this.repository.delete(id, options);
      const post = this.postDelete(id, uow);
      if (isPromise(post)) await post;
    });
  }

  /** Runs before the insert; return a changed input, or nothing to keep it. */
  protected preCreate(_input: C): C | void | Promise<C | void> {}

  /** Runs after the insert, before the commit. */
  protected postCreate(_entity: Row<M>, _uow: UnitOfWork): void | Promise<void> {}

  /** Runs before the update; return a changed input, or nothing to keep it. */
  protected preUpdate(_id: Id, _input: U): U | void | Promise<U | void> {}

  /** Runs after the update, before the commit. */
  protected postUpdate(_entity: Row<M>, _uow: UnitOfWork): void | Promise<void> {}

  /** Runs before the delete. */
  protected preDelete(_id: Id): void | Promise<void> {}

  /** Runs after the delete, before the commit. */
  protected postDelete(_id: Id, _uow: UnitOfWork): void | Promise<void> {}

  /** The record's current ETag, or null when there is none (see `BaseRepository.etag`). */
  etag(id: Id, options: ReadOptions = {}): Promise<string | null> {
    return this.repository.etag(id, options);
  }

  private inUnit<T>(fn: (uow: UnitOfWork, opened: boolean) => Promise<T>): Promise<T> {
    return UnitOfWork.run(fn, { db: this.repository.db });
  }
}

/** A thenable (what `await` would wait for), as opposed to a plain value. */
function isPromise<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}
