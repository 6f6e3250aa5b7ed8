import type { EntityMetadata } from '@mikro-orm/core';
import { getContext, type CoreContext } from '../context/context.js';
import { ForbiddenError, type NotFoundError, ValidationError, type ErrorDetail } from '../errors.js';
import { modelInfo, type ModelInfo } from '../model/model-info.js';
import type { FilterNode, SearchRequest } from '../search/search-request.js';
import { ModelReader, type ListParams, type ModelReaderOptions, type ReadOptions } from '../search/model-reader.js';
import {
  resolveRowScope,
  type ResolvedScope,
  type RowAction,
  scopedRows,
  setRowScopeHook,
} from '../search/row-scope.js';
import { UnitOfWork } from '../uow/unit-of-work.js';
import { versionPropertyOf, type Base, type ModelClass } from '../model/base.js';
import { dbManager, type Database } from '../db/database.js';
import { setRowETag } from './etag.js';
import { InsertPlan, type WrittenRow } from './insert-plan.js';
import { RecordTags } from './record-tags.js';
import { notFoundError, toConflictError } from './repository-errors.js';
import { WritePlan, type Id, type RelatedCheck } from './repository-input.js';
import type { Page, Row } from '../model/types.js';
import { useRelationKeys } from '../model/wire-names.js';

export type { Id } from './repository-input.js';

export interface RepositoryOptions<M extends Base> {
  model: ModelClass<M>;
  /** Defaults to `dbManager.db`, looked up on first use (so a repository may be built before `initApp`). */
  db?: Database;
  /**
   * Page-size and search limits of the read side. Read when the repository first reads, once per
   * object: pass a new object to change them, not the same one changed.
   */
  reader?: ModelReaderOptions;
}

export interface UpdateOptions {
  /**
   * Full replace (PUT): every writable field absent from the input returns to its default (the model's
   * default, null when nullable, no links for a many-to-many), except the `keep` fields. Default:
   * patch (PATCH), where only the keys present change.
   */
  replace?: boolean;
  /**
   * Fields that keep their stored value whatever the input says: bare names (`assignee_email`,
   * `project_id`) or restriction entries (`tasks.assignee_email`). The router passes the caller's
   * restricted fields, so a replace never resets what the caller may not see.
   */
  keep?: Iterable<string>;
  /**
   * With `replace`: the fields the replace covers, as bare names; an absent one returns to its
   * default, any other keeps its stored value. The router passes its update schema's fields, so a
   * field that schema does not declare (one set on create only) survives a PUT. Default: every
   * writable field.
   */
  fields?: Iterable<string>;
  /**
   * The `If-Match` header's text: the update runs only if the record's current ETag is one of the
   * tags listed (or `*`); otherwise `PreconditionFailedError` (412) and nothing is written. Checked in
   * the update's transaction, race-free (see runtime/src/data/README.md).
   */
  ifMatch?: string;
  /** Also compute the record's new ETag, for `etagOf(row)` on the returned row (what a PUT or PATCH answers). */
  etag?: boolean;
}

export interface DeleteOptions {
  /** As `UpdateOptions.ifMatch`: the delete runs only if the record's current ETag matches. */
  ifMatch?: string;
}

/**
 * Persistence layer of one model. Reads go through a `ModelReader` (plain rows, no entities); writes
 * run inside the current `UnitOfWork`, or a unit of their own when none is active, and answer with the
 * row exactly as `get` returns it. A create of a plain row is one compiled `INSERT … RETURNING`
 * (`InsertPlan`); other creates, updates and deletes go through MikroORM and read the row back in the
 * same transaction.
 *
 * Input uses wire names: columns by name, a to-one relation as `<relation>_id`, a many-to-many as
 * `<singular>_ids` (override with `relationKeys`). Related ids are checked with one query per
 * relation; a missing one is a `ValidationError` naming the field.
 *
 * Errors: malformed ids and invalid input → `ValidationError` (422) before any SQL; `update`/`delete` of
 * a missing id → `NotFoundError` (404); unique, foreign-key and not-null violations → `ConflictError`
 * (409) naming the table and columns, never the value. `get` returns null for a missing id (the
 * service turns that into a `NotFoundError`).
 *
 * Row scope (`buildBaseQuery`, by default the row filters of `src/policies.json`): reads see only the
 * caller's rows, and a row outside the scope is exactly a missing one (null, 404), `If-Match` or not.
 * `update` and `delete` take the row under a lock within the scope before anything else; a create,
 * replace or patch whose row would fall outside it is a `ForbiddenError` (403) and is rolled back;
 * a related id the caller cannot see is refused as an unknown one. See docs/security.md.
 */
export class BaseRepository<M extends Base, C extends object = Record<string, unknown>, U extends object = Partial<C>> {
  readonly model: ModelClass<M>;
  /**
   * Many-to-many input keys that differ from `<singular>_ids`, by relation name (the manifest's
   * `ids_field`). Override as a class field: `protected override readonly relationKeys = { labels: 'tag_ids' }`.
   * Read once per object, as `reader` is.
   */
  protected readonly relationKeys: Readonly<Record<string, string>> = NO_RELATION_KEYS;
  private readonly explicitDb: Database | undefined;
  private readonly readerOptions: ModelReaderOptions | undefined;
  private cached: RepositoryState<M> | undefined;

  constructor(options: RepositoryOptions<M>);
  constructor(model: ModelClass<M>, db?: Database);
  constructor(modelOrOptions: ModelClass<M> | RepositoryOptions<M>, db?: Database) {
    const options: RepositoryOptions<M> =
      typeof modelOrOptions === 'function' ? { model: modelOrOptions, db } : modelOrOptions;
    if (typeof options.model !== 'function') {
      throw new TypeError(
        `${new.target.name}: pass the model class, as new ${new.target.name}({ model, db }) or (model, db)`,
      );
    }
    this.model = options.model;
    this.explicitDb = options.db;
    this.readerOptions = options.reader;
    // An override scopes the model wherever its rows are read (other resources' includes and relation
    // paths too), so it is registered for the model, not kept to this repository.
    if (this.buildBaseQuery !== BaseRepository.prototype.buildBaseQuery) {
      setRowScopeHook(this.model.name, this.constructor, (ctx, action) => this.buildBaseQuery(ctx, action));
    }
  }

  /**
   * The rows of this model that `ctx` may `action` (`view`, `listview`, `create`, `update`, `delete`):
   * a filter in the search syntax, whose values may be `{ "$claim": "<path>" }` (read from the caller's
   * token), or null for every row. Every read and write of the model starts from it: list, search,
   * get, update, delete, the includes and relation paths of other resources, related-id writes.
   *
   * The default is the row filters of the caller's roles. Override it to scope rows in code, e.g. by
   * tenant, building on the default or replacing it:
   *
   * ```ts
   * override buildBaseQuery(ctx: CoreContext, action: RowAction): readonly FilterNode[] | null {
   *   return [...(super.buildBaseQuery(ctx, action) ?? []), { field: 'tenant_id', op: 'eq', value: { $claim: 'tenant_id' } }];
   * }
   * ```
   *
   * It must depend on its arguments only (its answer is kept per context). `SYSTEM_CONTEXT` is never
   * scoped. The override takes effect for the whole process once the repository has been built; to be
   * in force before the first request, also `registerRowScope(Model, …)` at start-up (docs/security.md).
   */
  buildBaseQuery(ctx: CoreContext, action: RowAction): readonly FilterNode[] | null {
    return (
      (ctx.rowFilters?.filterFor(this.model.tableName, action) as readonly FilterNode[] | null | undefined) ?? null
    );
  }

  get db(): Database {
    return this.state().db;
  }

  /** The read side, created once per repository. */
  get reader(): ModelReader<M> {
    return this.state().reader;
  }

  /**
   * The record with this id, or null. With `options.etag` its ETag comes with it (`etagOf(row)`): read
   * in the row's own statement, so tag and row are of the same snapshot, unless the model owns
   * many-to-many links, whose ids take statements of their own.
   */
  get(id: Id, options: ReadOptions = {}): Promise<Row<M> | null> {
    try {
      // A synchronous read resolves this one promise and makes no other.
      return Promise.resolve(this.getDirect(id, options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * @internal `get`, without a promise when the read is synchronous (SQLite); a bad id throws. What
   * `BaseService.getDirect` calls while `get` is this class's own.
   */
  getDirect(id: Id, options: ReadOptions = {}): Row<M> | null | Promise<Row<M> | null> {
    const { tags, reader, plan } = this.state();
    if (!options.etag) return reader.getWith(id, options);
    if (options.include !== undefined) return this.getTaggedWithIncludes(id, options);
    const extras = tags.alongRow(plan.parseId(id));
    return extras ? reader.getWith(id, options, extras) : this.getTagFirst(id, options);
  }

  /** `get` with the ETag and includes: the includes are checked before the tag is read. */
  private async getTaggedWithIncludes(id: Id, options: ReadOptions): Promise<Row<M> | null> {
    const { tags, reader } = this.state();
    const extras = tags.alongRow(await this.checkedKey(id, options));
    return extras ? reader.getWith(id, options, extras) : this.getTagFirst(id, options);
  }

  /** `get` with an ETag that cannot come with the row (a model owning many-to-many links). */
  private async getTagFirst(id: Id, options: ReadOptions): Promise<Row<M> | null> {
    // Read before the row: a tag older than its row can only cause a needless 412, never a lost update.
    const tag = await this.etag(id, options);
    const row = await this.state().reader.get(id, options);
    if (row && tag !== null) setRowETag(row, tag);
    return row;
  }

  async getByIds(ids: readonly Id[], options: ReadOptions = {}): Promise<Row<M>[]> {
    return this.reader.getByIds(ids, options);
  }

  // getList and search hand on the reader's promise rather than wrap it in an async function's: a page
  // read synchronously then costs one promise. Either way a failure is a rejection, never a throw.
  getList(params: ListParams = {}): Promise<Page<Row<M>>> {
    try {
      return this.reader.getList(params);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  search(request: SearchRequest): Promise<Page<Row<M>>> {
    try {
      return this.reader.search(request);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Inserts one record and returns it as `get` would. A plain row (no many-to-many links, a model
   * without ORM hooks; see `InsertPlan.accepts`) is written by one compiled, prepared
   * `INSERT … RETURNING` in the unit of work, which also reports its entity event; anything else goes
   * through MikroORM and is read back.
   *
   * When that insert is all the unit does (a unit of its own, or a service's that declares
   * `createInTransaction = false`), it may run without BEGIN and COMMIT, as `maySkipTransaction`
   * decides: a single statement is atomic by itself (see runtime/src/uow/README.md).
   */
  create(data: C): Promise<Row<M>> {
    try {
      return Promise.resolve(this.createDirect(data));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * @internal `create`, answering the row itself where nothing had to wait (SQLite, a plain row, the
   * writer connection free; see `UnitOfWork.runDirect`); errors throw. `BaseService` calls it while
   * `create` is this class's own: with AsyncLocalStorage every promise also runs Node's async hooks.
   */
  createDirect(data: C): Row<M> | Promise<Row<M>> {
    const { plan, insert, tags, info } = this.state();
    const ctx = getContext();
    const scope = resolveRowScope(this.db, info, 'create', ctx);
    const input = scope ? this.withClaims(data, scope) : data;
    const { values, related } = plan.prepare(input, 'create', withVersion(undefined, tags));
    return UnitOfWork.runDirect(
      (uow, opened) => {
        if (related.length > 0 || scope || !this.insertsCompiled(insert, values))
          return this.createChecked(uow, opened, values, related, scope, ctx);
        const written = this.insertCompiled(uow, opened, values, ctx, null);
        return written instanceof Promise ? written.then((settled) => settled.row as Row<M>) : (written.row as Row<M>);
      },
      { db: this.db },
    );
  }

  /** Whether a create of `values` is the compiled insert: a subclass that overrides `flush` sees every create through it. */
  private insertsCompiled(insert: InsertPlan, values: Record<string, unknown>): boolean {
    return this.flush === BaseRepository.prototype.flush && insert.accepts(values);
  }

  /**
   * The compiled `INSERT … RETURNING` of a create, at once where the statement ran at once; a
   * constraint violation is the 409 error. In a unit of its own nothing follows the insert, unless a
   * row filter is checked after it (that keeps the transaction).
   */
  private insertCompiled(
    uow: UnitOfWork,
    opened: boolean,
    values: Record<string, unknown>,
    ctx: CoreContext,
    scope: ResolvedScope | null,
  ): WrittenRow | Promise<WrittenRow> {
    const { insert, plan } = this.state();
    const conflict = (err: unknown): never => {
      throw toConflictError(err, plan.table);
    };
    if (opened) uow.allowLastStatementAlone();
    let written: WrittenRow | Promise<WrittenRow>;
    try {
      written = insert.insertRow(uow, values, ctx.restrictedFields, {
        last: true,
        checksRowFilter: scope !== null,
      });
    } catch (err) {
      return conflict(err);
    }
    return written instanceof Promise ? written.catch(conflict) : written;
  }

  /** A create whose related records or row filter are checked, or that goes through the ORM. */
  private async createChecked(
    uow: UnitOfWork,
    opened: boolean,
    values: Record<string, unknown>,
    related: RelatedCheck[],
    scope: ResolvedScope | null,
    ctx: CoreContext,
  ): Promise<Row<M>> {
    const { plan, insert } = this.state();
    if (related.length > 0) await this.checkRelated(related, ctx);
    if (this.insertsCompiled(insert, values)) {
      const written = await this.insertCompiled(uow, opened, values, ctx, scope);
      if (scope) await this.assertWithin(uow, scope, written.key as Id, 'create');
      return written.row as Row<M>;
    }
    const entity = uow.em.create(this.model, values as never, { persist: true });
    await this.flush(uow);
    const key = (entity as unknown as Record<string, Id>)[plan.keyProperty]!;
    if (scope) await this.assertWithin(uow, scope, key, 'create');
    return this.readBack(key);
  }

  /**
   * Changes one record (patch by default, full replace with `{ replace: true }`) and returns it as `get`
   * would. With `ifMatch`, only if the record still has one of those ETags; with `etag`, the returned
   * row carries its new ETag (`etagOf(row)`). A model with a version column has it incremented.
   */
  async update(id: Id, data: U, options: UpdateOptions = {}): Promise<Row<M>> {
    const { plan, tags, info } = this.state();
    const key = plan.parseId(id);
    const ctx = getContext();
    const scope = resolveRowScope(this.db, info, 'update', ctx);
    // Fields bound to a claim keep their stored value, as restricted ones do.
    const keep = scope && scope.bound.size > 0 ? [...(options.keep ?? []), ...scope.bound.keys()] : options.keep;
    const { values, related } = plan.prepare(
      data,
      options.replace ? 'replace' : 'patch',
      withVersion(keep, tags),
      options.fields,
    );
    return UnitOfWork.run(
      async (uow) => {
        if (scope && !(await this.within(uow, scope, key, true))) {
          // Outside the scope is missing: the same checks, in the same order, end in the same 404.
          if (tags.versionProperty === undefined && options.ifMatch === undefined) {
            await this.checkRelated(related, ctx);
          }
          throw this.notFound();
        }
        // First: a stale If-Match writes nothing, and the row stays locked for the rest of the unit.
        let tag = await tags.beforeWrite(uow, key, options.ifMatch, 'update');
        await this.checkRelated(related, ctx);
        await this.keepHiddenLinks(uow, key, values, ctx);
        const populate = plan.collectionProps(values);
        const entity = await uow.em.findOne(
          this.model,
          key as never,
          populate.length > 0 ? { populate: populate as never } : {},
        );
        if (!entity) throw this.notFound();
        uow.em.assign(entity, values as never, { mergeObjectProperties: false });
        await this.flush(uow);
        if (scope) await this.assertWithin(uow, scope, key, 'update');
        // Read before the row: a tag older than its row can only cause a needless 412, never a lost update.
        if (options.etag) tag ??= (await tags.current(key)) ?? undefined;
        const row = await this.readBack(key);
        if (options.etag && tag !== undefined) setRowETag(row, tag);
        return row;
      },
      { db: this.db },
    );
  }

  /** Deletes one record; with `ifMatch`, only if the record still has one of those ETags. */
  async delete(id: Id, options: DeleteOptions = {}): Promise<void> {
    const { plan, tags, info } = this.state();
    const key = plan.parseId(id);
    const scope = resolveRowScope(this.db, info, 'delete', getContext());
    return UnitOfWork.run(
      async (uow) => {
        if (scope && !(await this.within(uow, scope, key, true))) throw this.notFound();
        await tags.beforeWrite(uow, key, options.ifMatch, 'delete');
        const entity = await uow.em.findOne(this.model, key as never);
        if (!entity) throw this.notFound();
        uow.em.remove(entity);
        await this.flush(uow, 'delete');
      },
      { db: this.db },
    );
  }

  /**
   * The record's current ETag (what `GET` sends and `If-Match` is compared with), or null when there is
   * none. One read of the stored state: the version column, or else every column plus the ids of the
   * many-to-many links the record owns. `options.include` is checked as `get` checks it.
   */
  async etag(id: Id, options: ReadOptions = {}): Promise<string | null> {
    const { tags, info } = this.state();
    const key = await this.checkedKey(id, options);
    const scope = resolveRowScope(this.db, info, 'view', getContext());
    // A row outside the caller's scope has no tag for them, as a missing one.
    if (scope && (await this.visibleIds(info, scope, [key])).size === 0) return null;
    return tags.current(key);
  }

  /**
   * A view's includes checked, then its id parsed, before any SQL: unknown → 422, restricted → 403
   * (an empty read does the include checks and sends nothing), then an id its key cannot hold → 422.
   */
  private async checkedKey(id: Id, options: ReadOptions): Promise<Id> {
    const { plan, reader } = this.state();
    if (options.include !== undefined) await reader.getByIds([], options);
    return plan.parseId(id);
  }

  /** Flushes the unit, turning constraint violations into `ConflictError`s. */
  protected async flush(uow: UnitOfWork, operation: 'write' | 'delete' = 'write'): Promise<void> {
    try {
      await uow.em.flush();
    } catch (err) {
      throw toConflictError(err, this.state().plan.table, operation);
    }
  }

  /** The row just written, as `get` reads it, whatever the caller's row scope (checked in the write). */
  private async readBack(id: Id): Promise<Row<M>> {
    const row = await this.reader.readWritten(id);
    // Only possible if a hook or trigger removed the row in the same transaction.
    if (!row) throw this.notFound();
    return row;
  }

  /**
   * One `select <pk> … where <pk> in (…)` per relation; every missing id becomes a detail of one
   * ValidationError. A related row outside the caller's row scope (for `view`) is missing for them.
   */
  private async checkRelated(checks: readonly RelatedCheck[], ctx: CoreContext): Promise<void> {
    const problems: ErrorDetail[] = [];
    for (const check of checks) {
      const target = this.state().info.relations.get(check.prop)?.target();
      const scope = target ? resolveRowScope(this.db, target, 'view', ctx) : null;
      let found: Set<string>;
      if (scope && target) {
        found = await this.visibleIds(target, scope, check.ids);
      } else {
        const column = this.db.quote(check.column);
        const sql = `select ${column} as id from ${this.db.quote(check.table)} where ${column} in (${check.ids.map(() => '?').join(', ')})`;
        const rows = await this.db.select<{ id: Id }>(sql, check.ids);
        found = new Set(rows.map((r) => String(r.id).toLowerCase()));
      }
      const missing = check.ids.filter((id) => !found.has(String(id).toLowerCase()));
      if (missing.length > 0) {
        problems.push({
          path: check.key,
          reason: 'not_found',
          message: `${check.key}: no ${check.table} record with id ${missing.join(', ')}`,
        });
      }
    }
    if (problems.length > 0) {
      throw new ValidationError(`Related records not found: ${problems.map((p) => p.path).join(', ')}`, problems);
    }
  }

  private notFound(): NotFoundError {
    return notFoundError(this.model.tableName);
  }

  /** `data` with the fields its scope binds to a claim set from the token; 403 when such a claim is unusable. */
  private withClaims(data: C, scope: ResolvedScope): C {
    if (scope.bound.size === 0) return data;
    const plan = this.state().plan;
    const out: Record<string, unknown> = { ...(data as Record<string, unknown>) };
    for (const [field, claim] of scope.bound) {
      if (!plan.isWritable(field)) continue;
      if (claim === null) throw outsideScope(this.model.tableName, 'create');
      out[field] = claim.value;
    }
    return out as C;
  }

  /**
   * Whether row `key` is within `scope`, read in the unit's transaction. `lock`: the row is also locked
   * for the rest of the unit (`for update` on PostgreSQL; on SQLite the unit's `BEGIN IMMEDIATE`
   * already holds the write lock), so nothing can move it out of the scope before the write.
   */
  private async within(uow: UnitOfWork, scope: ResolvedScope, key: Id, lock: boolean): Promise<boolean> {
    const { info } = this.state();
    const rows = scopedRows(this.db, info, scope);
    const suffix = lock && this.db.dialect === 'postgresql' ? ' for update of t0' : '';
    const sql = `select t0.${info.pk.quoted} as id from ${rows.from} where t0.${info.pk.quoted} = ? and ${rows.where}${suffix}`;
    return (await uow.query(sql, this.driverValues([key, ...rows.params]))).length > 0;
  }

  /** Values as the driver binds them: `uow.query` passes them on as they are (SQLite takes no booleans). */
  private driverValues(params: readonly unknown[]): unknown[] {
    return params.map((value) => this.db.toDriverValue(value));
  }

  /** After a write: its row must be within the caller's scope, or the unit rolls back with a 403. */
  private async assertWithin(uow: UnitOfWork, scope: ResolvedScope, key: Id, action: RowAction): Promise<void> {
    if (!(await this.within(uow, scope, key, false))) throw outsideScope(this.model.tableName, action);
  }

  /** Which of `ids` name rows of `info` within `scope` (lower-cased text, as ids are compared). */
  private async visibleIds(info: ModelInfo, scope: ResolvedScope, ids: readonly Id[]): Promise<Set<string>> {
    const rows = scopedRows(this.db, info, scope);
    const pk = `t0.${info.pk.quoted}`;
    const sql = `select ${pk} as id from ${rows.from} where ${pk} in (${ids.map(() => '?').join(', ')}) and ${rows.where}`;
    const found = await this.db.select<{ id: Id }>(sql, [...ids, ...rows.params]);
    return new Set(found.map((r) => String(r.id).toLowerCase()));
  }

  /**
   * A write of a many-to-many relation sets the links the caller can see: the links to rows hidden
   * from them stay (a PUT of `<singular>_ids` must not drop what it could not list).
   */
  private async keepHiddenLinks(
    uow: UnitOfWork,
    key: Id,
    values: Record<string, unknown>,
    ctx: CoreContext,
  ): Promise<void> {
    const { plan, info } = this.state();
    for (const prop of plan.collectionProps(values)) {
      const rel = info.relations.get(prop);
      if (rel?.join.type !== 'pivot') continue;
      const target = rel.target();
      const scope = resolveRowScope(this.db, target, 'view', ctx);
      if (!scope) continue;
      const rows = scopedRows(this.db, target, scope);
      const link = `lk.${this.db.quote(rel.join.targetFk)}`;
      const sql =
        `select ${link} as id from ${this.db.quote(rel.join.table)} lk where lk.${this.db.quote(rel.join.sourceFk)} = ? ` +
        `and not exists (select 1 from ${rows.from} where t0.${target.pk.quoted} = ${link} and ${rows.where})`;
      const hidden = await uow.query<{ id: Id }>(sql, this.driverValues([key, ...rows.params]));
      if (hidden.length === 0) continue;
      const given = (values[prop] as Id[] | null | undefined) ?? [];
      values[prop] = [...new Set([...given, ...hidden.map((r) => normalizeKey(r.id, target))])];
    }
  }

  private state(): RepositoryState<M> {
    const db = this.explicitDb ?? dbManager.db;
    // Rebuilt if the app re-initialised the database (tests, reloads).
    if (this.cached?.db !== db) this.cached = stateOf(db, this.model, this.readerOptions, this.relationKeys);
    return this.cached;
  }
}

const NO_RELATION_KEYS: Readonly<Record<string, string>> = Object.freeze({});
const NO_READER_OPTIONS: ModelReaderOptions = Object.freeze({});

interface RepositoryState<M extends Base = Base> {
  readonly db: Database;
  readonly info: ModelInfo;
  readonly reader: ModelReader<M>;
  readonly plan: WritePlan;
  readonly insert: InsertPlan;
  readonly tags: RecordTags;
}
const states = new WeakMap<Database, Map<string, RepositoryState>>();
/** The same states by the identity of the model and of the two options objects (their values read once). */
const statesByIdentity = new WeakMap<object, WeakMap<object, WeakMap<object, RepositoryState>>>();

/**
 * `sharedState`, found without building its key: repositories are usually request-scoped, and built
 * around the same options objects each time (the generated ones share the resource's config), so the
 * JSON of those objects and the string key made of it are worked out once, not per request.
 */
function stateOf<M extends Base>(
  db: Database,
  model: ModelClass<M>,
  readerOptions: ModelReaderOptions | undefined,
  relationKeys: Readonly<Record<string, string>>,
): RepositoryState<M> {
  let byKeys = statesByIdentity.get(model);
  if (!byKeys) statesByIdentity.set(model, (byKeys = new WeakMap()));
  let byReader = byKeys.get(relationKeys);
  if (!byReader) byKeys.set(relationKeys, (byReader = new WeakMap()));
  const reader = readerOptions ?? NO_READER_OPTIONS;
  let state = byReader.get(reader);
  if (state?.db !== db) byReader.set(reader, (state = sharedState(db, model, readerOptions, relationKeys)));
  return state as unknown as RepositoryState<M>;
}

/**
 * The read side and write plans of one (database, model, options), built once and shared: repositories
 * are usually request-scoped, and rebuilding these per request cost 10–15 µs each time.
 */
function sharedState<M extends Base>(
  db: Database,
  model: ModelClass<M>,
  readerOptions: ModelReaderOptions | undefined,
  relationKeys: Readonly<Record<string, string>>,
): RepositoryState<M> {
  let byKey = states.get(db);
  if (!byKey) states.set(db, (byKey = new Map()));
  const key = `${model.name}\u0000${JSON.stringify(readerOptions ?? null)}\u0000${JSON.stringify(relationKeys)}`;
  let state = byKey.get(key);
  if (!state) {
    const meta = db.orm.getMetadata().get(model.name) as EntityMetadata;
    // Entity events name many-to-many changes with this repository's keys, as its API does.
    useRelationKeys(meta, relationKeys);
    state = {
      db,
      info: modelInfo(db, model.name),
      reader: new ModelReader<M>(db, model, readerOptions) as unknown as ModelReader<Base>,
      plan: new WritePlan(meta, relationKeys, db.dialect),
      insert: new InsertPlan(db, meta),
      tags: new RecordTags(db, meta, versionPropertyOf(model), () => notFoundError(model.tableName)),
    };
    byKey.set(key, state);
  }
  return state as unknown as RepositoryState<M>;
}

/** 403: the row a write leaves would be outside the rows the caller may write; nothing was written. */
function outsideScope(table: string, action: RowAction): ForbiddenError {
  const message = `The ${table} record would be outside the rows you may ${action === 'create' ? 'create' : 'change'}; nothing was written.`;
  return new ForbiddenError(message, [{ path: 'body', reason: 'row_filter', message }]);
}

/** A key read back from the database, as the write plan normalises input keys (uuids lower-cased). */
function normalizeKey(value: Id, target: ModelInfo): Id {
  if (target.pk.kind === 'uuid') return String(value).toLowerCase();
  if (target.pk.kind === 'number') return Number(value);
  return value;
}

/** `keep` plus the version column: it is never written from input (a replace would reset it to 1). */
function withVersion(keep: Iterable<string> | undefined, tags: RecordTags): Iterable<string> | undefined {
  if (tags.versionProperty === undefined) return keep;
  return keep === undefined ? [tags.versionProperty] : [...keep, tags.versionProperty];
}
