/**
 * The ETag of one model's records and the `If-Match` check of its writes, compiled once per
 * (database, model) from MikroORM's metadata. Two kinds of model (runtime/src/data/README.md):
 *
 * - **with a version column** (`defineModel(…, { version })`): the tag derives from the version. Every
 *   update increments it first, with a compare-and-set when `If-Match` is given
 *   (`UPDATE … SET v = v + 1 WHERE pk = ? AND v = ?`): the check and the write are one statement.
 * - **without**: the tag derives from the whole stored row (every column, hidden ones included, and the
 *   ids of the many-to-many links it owns). `If-Match` reads that state under a row lock
 *   (`SELECT … FOR UPDATE` on PostgreSQL; on SQLite the unit's transaction already holds the write lock).
 */
import { ReferenceKind, type EntityMetadata, type EntityProperty } from '@mikro-orm/core';
import { PreconditionFailedError } from '../errors.js';
import type { UnitOfWork } from '../uow/unit-of-work.js';
import type { Database } from '../db/database.js';
import type { RowExtras } from '../search/by-id.js';
import type { SelectedColumn } from '../search/include-planner.js';
import { canonicalValue, ETagSigner, ifMatchAccepts, parseIfMatch, setRowETag, type IfMatch } from './etag.js';
import type { Id } from './repository-input.js';

type Rows = Record<string, unknown>[];
type Runner = (sql: string, params: readonly unknown[]) => Promise<Rows>;

/** The prefix of the stored columns' aliases in a row's statement: `$tag0`, `$tag1`… (no output key starts with `$`). */
const STATE_ALIAS = '$tag';

/** One many-to-many relation the model owns: its link ids are part of the row's state. */
interface OwnedLinks {
  readonly name: string;
  readonly sql: string;
}

export class RecordTags {
  /** The version property, when the model has one. */
  readonly versionProperty: string | undefined;
  private readonly table: string;
  private readonly signer: ETagSigner;
  /** Versioned: `select v`; otherwise every stored column, aliased `c0, c1…`. */
  private readonly stateSql: string;
  /** The same stored columns, unqualified, for `alongRow`. */
  private readonly stateColumns: readonly string[];
  private readonly layouts = new WeakMap<readonly SelectedColumn[], readonly string[]>();
  private readonly columns: number;
  private readonly links: readonly OwnedLinks[];
  private readonly lockSuffix: string;
  /** Versioned only: the unconditional increment and the compare-and-set, both returning the new version. */
  private readonly bumpSql: string = '';
  private readonly casSql: string = '';

  constructor(
    private readonly db: Database,
    meta: EntityMetadata,
    versionProperty: string | undefined,
    private readonly notFound: () => Error,
  ) {
    this.table = meta.tableName;
    this.signer = ETagSigner.forSecret(db.cursorSecret);
    this.lockSuffix = db.dialect === 'postgresql' ? ' for update' : '';
    const from = db.quote(meta.tableName);
    const pk = db.quote(meta.properties[meta.primaryKeys[0]!]!.fieldNames[0]!);
    if (versionProperty !== undefined) {
      const column = db.quote(versionColumn(meta, versionProperty));
      this.versionProperty = versionProperty;
      this.stateSql = `select ${column} as v from ${from} where ${pk} = ?`;
      this.stateColumns = [column];
      this.columns = 1;
      this.links = [];
      this.bumpSql = `update ${from} set ${column} = ${column} + 1 where ${pk} = ? returning ${column} as v`;
      this.casSql = `update ${from} set ${column} = ${column} + 1 where ${pk} = ? and ${column} = ? returning ${column} as v`;
      return;
    }
    const columns: string[] = [];
    const links: OwnedLinks[] = [];
    for (const prop of meta.props as EntityProperty[]) {
      if (prop.persist === false || prop.formula !== undefined || prop.kind === ReferenceKind.EMBEDDED) continue;
      const owningToOne =
        prop.kind === ReferenceKind.MANY_TO_ONE || (prop.kind === ReferenceKind.ONE_TO_ONE && prop.owner);
      if (prop.kind === ReferenceKind.SCALAR || owningToOne) {
        for (const field of prop.fieldNames ?? []) columns.push(db.quote(field));
      } else if (
        prop.kind === ReferenceKind.MANY_TO_MANY &&
        prop.owner &&
        prop.joinColumns?.length === 1 &&
        prop.inverseJoinColumns?.length === 1
      ) {
        const pivot = db.quote(prop.pivotTable);
        links.push({
          name: prop.name,
          sql: `select ${db.quote(prop.inverseJoinColumns[0]!)} as v from ${pivot} where ${db.quote(prop.joinColumns[0]!)} = ?`,
        });
      }
    }
    this.versionProperty = undefined;
    this.stateSql = `select ${columns.map((c, i) => `${c} as c${i}`).join(', ')} from ${from} where ${pk} = ?`;
    this.stateColumns = columns;
    this.columns = columns.length;
    this.links = links;
  }

  /**
   * The record's current tag, or null when there is none. Inside a unit of work it reads the unit's
   * transaction (its own writes included); outside, the last committed state.
   */
  current(key: Id): Promise<string | null> {
    return this.read(key, (sql, params) => {
      const rows = this.db.selectSync<Record<string, unknown>>(sql, params);
      return rows ? Promise.resolve(rows) : this.db.select<Record<string, unknown>>(sql, params);
    });
  }

  /**
   * The record's tag read with its row, in the row's statement (`readById`'s extras): the stored
   * columns the row's output does not select are added under aliases no output key can take, and
   * never reach the output. Null when the tag needs statements of its own (a model owning many-to-many
   * links).
   */
  alongRow(key: Id): RowExtras | null {
    return this.links.length > 0 ? null : new RowState(this, key);
  }

  /**
   * Where `alongRow` finds each stored column in a row whose statement selects `selected`: under the
   * output's alias when the statement reads that column already, else under an alias of its own
   * (`$tag3`), which `stateSelect` adds to the statement. Worked out once per compiled statement.
   */
  stateKeys(selected: readonly SelectedColumn[]): readonly string[] {
    let keys = this.layouts.get(selected);
    if (!keys) {
      keys = this.stateColumns.map(
        (column, i) => selected.find((c) => c.column === column)?.alias ?? `${STATE_ALIAS}${i}`,
      );
      this.layouts.set(selected, keys);
    }
    return keys;
  }

  /** The select-list items, on `table`, of the stored columns `selected` lacks; empty when none. */
  stateSelect(table: string, selected: readonly SelectedColumn[]): string {
    const keys = this.stateKeys(selected);
    return this.stateColumns
      .flatMap((column, i) =>
        keys[i]!.startsWith(STATE_ALIAS) ? [`${table}.${column} as ${this.db.quote(keys[i]!)}`] : [],
      )
      .join(', ');
  }

  /** The tag of a row read with `stateSelect`'s columns, from where `stateKeys` says they are. */
  tagOfState(key: Id, raw: Readonly<Record<string, unknown>>, keys: readonly string[]): string {
    if (this.versionProperty !== undefined) return this.versionTag(key, raw[keys[0]!]);
    let message = `s\u0000${this.table}`;
    for (let i = 0; i < this.columns; i++) message += `\u0000${canonicalValue(raw[keys[i]!])}`;
    return this.signer.tag(message);
  }

  /**
   * Runs first in the unit of an update or a delete. `If-Match` (the header's text) is checked against
   * the current record: missing record → the repository's 404, no match → `PreconditionFailedError`,
   * and nothing is written either way. A versioned record is also incremented here by every update (and
   * by a conditional delete, which needs the row locked until it is gone): the compare-and-set is the
   * check. Returns the record's new tag when this already knows it (versioned updates).
   */
  async beforeWrite(
    uow: UnitOfWork,
    key: Id,
    ifMatch: string | undefined,
    write: 'update' | 'delete',
  ): Promise<string | undefined> {
    const condition = ifMatch === undefined ? undefined : parseIfMatch(ifMatch);
    const run: Runner = (sql, params) => uow.query<Record<string, unknown>>(sql, params);
    if (this.versionProperty === undefined) {
      if (!condition) return undefined;
      const tag = await this.read(key, run, this.lockSuffix);
      if (tag === null) throw this.notFound();
      this.check(condition, tag);
      return undefined;
    }
    if (!condition) {
      if (write === 'delete') return undefined;
      const [row] = await run(this.bumpSql, [key]);
      if (!row) throw this.notFound();
      return this.versionTag(key, row.v);
    }
    const [current] = await run(this.stateSql, [key]);
    if (!current) throw this.notFound();
    this.check(condition, this.versionTag(key, current.v));
    const [row] = await run(this.casSql, [key, current.v]);
    // Another write got in between the read and this statement: its version is not the one checked.
    if (!row) throw stale(this.table);
    return this.versionTag(key, row.v);
  }

  private check(condition: IfMatch, tag: string): void {
    if (ifMatchAccepts(condition, tag)) return;
    if (!condition.malformed) throw stale(this.table);
    const message =
      'If-Match must be * or a list of entity tags ("…", as the ETag header gives them); this one cannot match any record.';
    throw new PreconditionFailedError(message, [{ path: 'headers.if-match', reason: 'malformed', message }]);
  }

  private async read(key: Id, run: Runner, suffix = ''): Promise<string | null> {
    const [row] = await run(this.stateSql + suffix, [key]);
    if (!row) return null;
    if (this.versionProperty !== undefined) return this.versionTag(key, row.v);
    let message = `s\u0000${this.table}`;
    for (let i = 0; i < this.columns; i++) message += `\u0000${canonicalValue(row[`c${i}`])}`;
    for (const link of this.links) {
      const ids = (await run(link.sql, [key])).map((r) => canonicalValue(r.v)).sort();
      message += `\u0000L${link.name}`;
      for (const id of ids) message += `\u0000${id}`;
    }
    return this.signer.tag(message);
  }

  private versionTag(key: Id, version: unknown): string {
    // A driver may hand integers back as bigint: the tag depends on the number only.
    return this.signer.tag(`v\u0000${this.table}\u0000${canonicalValue(key)}\u0000${canonicalValue(Number(version))}`);
  }
}

function stale(table: string): PreconditionFailedError {
  const message = `The ${table} record changed since this ETag was read: read it again (GET) and retry with its new ETag.`;
  return new PreconditionFailedError(message, [{ path: 'headers.if-match', reason: 'stale', message }]);
}

/** The version property's column, checked: a non-null integer that is not the primary key. */
function versionColumn(meta: EntityMetadata, name: string): string {
  const prop = meta.properties[name] as EntityProperty | undefined;
  const type = String(prop?.type ?? '').toLowerCase();
  const problem = !prop
    ? 'is not a property of the model'
    : prop.kind !== ReferenceKind.SCALAR ||
        !['integer', 'int', 'number', 'smallint', 'mediumint', 'bigint'].includes(type)
      ? 'must be an integer column'
      : prop.primary
        ? 'cannot be the primary key'
        : prop.nullable
          ? 'cannot be nullable'
          : undefined;
  if (problem) throw new Error(`${meta.className}: the version property "${name}" ${problem}`);
  return prop!.fieldNames[0]!;
}

/** A record's stored state read with its row (`RecordTags.alongRow`). */
class RowState implements RowExtras {
  readonly key = 'etag';

  constructor(
    private readonly tags: RecordTags,
    private readonly id: Id,
  ) {}

  select(table: string, selected: readonly SelectedColumn[]): string {
    return this.tags.stateSelect(table, selected);
  }

  attach(
    raw: Readonly<Record<string, unknown>>,
    out: Record<string, unknown>,
    selected: readonly SelectedColumn[],
  ): void {
    setRowETag(out, this.tags.tagOfState(this.id, raw, this.tags.stateKeys(selected)));
  }
}
