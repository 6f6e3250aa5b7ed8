/**
 * Core's own single-row `INSERT … RETURNING` for one model, compiled once per (database, model) from
 * MikroORM's metadata, the way the read path compiles its SELECTs.
 *
 * Why: a create through MikroORM builds an entity, computes its change set, builds the INSERT text
 * (which knex has better-sqlite3 prepare afresh every time) and then Core read the row back with a
 * SELECT. For a plain row (no links to write, no ORM hooks) all of that is replaced by one prepared
 * statement on the unit of work's connection whose RETURNING clause yields the row exactly as `get`
 * reads it, and the entity event is built from the values written. Everything else — many-to-many
 * links, entity lifecycle hooks, MikroORM subscribers other than Core's event bridge, types whose
 * database form Core does not know — still goes through the ORM (`accepts` says which path).
 *
 * What it reproduces from MikroORM's insert, checked against it by test/runtime/insert-plan.test.ts:
 * the columns written are those of the properties given plus the `onCreate` ones (absent properties
 * are left to the column's database default, as MikroORM leaves them); values are converted as
 * MikroORM binds them (SQLite: booleans as 0/1 and datetimes as epoch milliseconds; PostgreSQL:
 * datetimes as ISO strings); constraint violations are MikroORM's exceptions, so the repository maps
 * them to the same 409s; the entity event carries the same name, key and fields (as wire names).
 */
import {
  BooleanType,
  CharacterType,
  DateTimeType,
  DateType,
  DoubleType,
  EnumType,
  EventType,
  FloatType,
  IntegerType,
  MediumIntType,
  ReferenceKind,
  SmallIntType,
  StringType,
  TextType,
  TinyIntType,
  UuidType,
  type EntityMetadata,
  type EntityProperty,
  type EventSubscriber,
} from '@mikro-orm/core';
import { kindOfProperty, type ValueKind } from '../model/codecs.js';
import { modelInfo, type ColumnInfo, type ModelInfo } from '../model/model-info.js';
import { isColumnRestricted } from '../model/paths.js';
import { entityEvent, isEntityEventBridge } from '../uow/entity-events.js';
import type { StatementOptions, UnitOfWork } from '../uow/unit-of-work.js';
import type { Database } from '../db/database.js';
import { wireKeyOf } from '../model/wire-names.js';

/** One column the compiled insert can write. */
interface InsertColumn {
  readonly index: number;
  /** Property name: the key of the prepared values. */
  readonly prop: string;
  readonly quoted: string;
  /** Wire name, for the entity event's `changedFields`. */
  readonly wire: string;
  /** What a value must look like to be bound as is (anything else goes through the ORM). */
  readonly accepts: (value: unknown) => boolean;
  /** MikroORM's `onCreate`, when it takes no argument (one that reads the entity needs the ORM). */
  readonly onCreate?: () => unknown;
}

/** An inserted row as output, and its primary key (the output hides it when it is restricted). */
export interface WrittenRow {
  readonly row: Record<string, unknown>;
  readonly key: unknown;
}

/** How a column of the RETURNING row becomes output: the read path's key and decoder. */
interface OutputColumn {
  readonly key: string;
  readonly decode: ColumnInfo['decode'];
}

/** Types whose database form is the plain value (or a Date MikroORM binds as below). */
const PLAIN_TYPES = [
  BooleanType,
  CharacterType,
  DateTimeType,
  DateType,
  DoubleType,
  EnumType,
  FloatType,
  IntegerType,
  MediumIntType,
  SmallIntType,
  StringType,
  TextType,
  TinyIntType,
  UuidType,
];

const isString = (v: unknown) => typeof v === 'string';
const isNumber = (v: unknown) => typeof v === 'number';
const isKey = (v: unknown) => typeof v === 'string' || typeof v === 'number';
const ACCEPTS: Partial<Record<ValueKind, (value: unknown) => boolean>> = {
  string: isString,
  uuid: isString,
  number: isNumber,
  boolean: (v) => typeof v === 'boolean',
  datetime: (v) => v instanceof Date,
  // A calendar date is bound as the text the caller gave; a Date object would need MikroORM's formatting.
  date: isString,
};

/** Entity events that the compiled insert would skip if someone listened to them. */
const ORM_EVENTS: readonly (keyof EventSubscriber)[] = [
  EventType.onInit,
  EventType.beforeCreate,
  EventType.afterCreate,
  EventType.beforeFlush,
  EventType.onFlush,
  EventType.afterFlush,
  EventType.beforeUpsert,
  EventType.afterUpsert,
] as (keyof EventSubscriber)[];

/** Distinct column sets compiled per model (each is one prepared statement per connection). */
const MAX_STATEMENTS = 64;

export class InsertPlan {
  /** Why this model always goes through the ORM; undefined when the compiled insert may be used. */
  readonly unsupported: string | undefined;
  private readonly columns: readonly InsertColumn[] = [];
  private readonly byProp = new Map<string, InsertColumn>();
  /** Many-to-many properties: accepted when no link is given. */
  private readonly collections = new Set<string>();
  private readonly info: ModelInfo;
  private readonly head: string;
  private readonly returning: string;
  private readonly statements = new Map<string, string>();
  private readonly outputs = new WeakMap<ReadonlySet<string>, readonly OutputColumn[]>();

  constructor(
    private readonly db: Database,
    private readonly meta: EntityMetadata,
  ) {
    this.info = modelInfo(db, meta.className);
    this.head = `insert into ${this.info.quotedTable}`;
    this.returning = ` returning ${this.info.columns.map((c) => `${c.quoted} as ${db.quote(c.key)}`).join(', ')}`;
    const columns: InsertColumn[] = [];
    this.unsupported = this.compile(columns);
    this.columns = columns;
    for (const column of columns) this.byProp.set(column.prop, column);
  }

  /**
   * Whether `values` (a create's prepared values, by property name) can be written by the compiled
   * insert: the model qualifies, no many-to-many link is given, every value is of its column's plain
   * type, and nobody but Core listens to the ORM's entity or flush events.
   */
  accepts(values: Readonly<Record<string, unknown>>): boolean {
    if (this.unsupported) return false;
    for (const prop in values) {
      const value = values[prop];
      if (value === undefined || value === null) continue;
      const column = this.byProp.get(prop);
      if (column) {
        if (!column.accepts(value)) return false;
      } else if (!this.collections.has(prop) || !Array.isArray(value) || value.length > 0) {
        return false;
      }
    }
    for (const subscriber of this.db.orm.em.getEventManager().getSubscribers()) {
      if (isEntityEventBridge(subscriber)) continue;
      for (const event of ORM_EVENTS) if (typeof subscriber[event] === 'function') return false;
    }
    return true;
  }

  /**
   * Inserts the row in `uow`'s transaction, queues its `<table>.created` entity event and returns the
   * row as `get` returns it for a caller with `restricted` fields hidden, with its primary key (the
   * output hides it when it is restricted): at once where the statement ran at once (SQLite), else a
   * promise. Constraint violations are MikroORM's exceptions, thrown or rejected. `options` go to
   * `UnitOfWork.query` (`last`: nothing follows this insert).
   */
  insertRow(
    uow: UnitOfWork,
    values: Readonly<Record<string, unknown>>,
    restricted: ReadonlySet<string>,
    options: StatementOptions = {},
  ): WrittenRow | Promise<WrittenRow> {
    const written: InsertColumn[] = [];
    const params: unknown[] = [];
    let key = '';
    for (const column of this.columns) {
      let value = values[column.prop];
      if (value === undefined) {
        if (!column.onCreate) continue; // the column's database default (or null), as MikroORM leaves it
        value = column.onCreate();
      }
      written.push(column);
      params.push(this.toDriverValue(value));
      key += `${column.index},`;
    }
    const rows = uow.queryDirect(this.statement(key, written), params, options);
    return rows instanceof Promise
      ? rows.then((settled) => this.written(uow, settled[0]!, written, restricted))
      : this.written(uow, rows[0]!, written, restricted);
  }

  /** The inserted row as output, after its entity event is queued. */
  private written(
    uow: UnitOfWork,
    raw: Record<string, unknown>,
    written: readonly InsertColumn[],
    restricted: ReadonlySet<string>,
  ): WrittenRow {
    const pk = this.info.pk;
    const primaryKey = pk.decode ? pk.decode(raw[pk.key]) : raw[pk.key];
    uow.recordEntityEvent(
      entityEvent(
        this.meta,
        'created',
        primaryKey,
        written.map((c) => c.wire),
      ),
    );
    return { row: this.output(raw, restricted), key: primaryKey };
  }

  /** Finds the columns the compiled insert writes; returns why the model cannot use it, if so. */
  private compile(columns: InsertColumn[]): string | undefined {
    const meta = this.meta;
    if (meta.discriminatorColumn || meta.embeddable || meta.virtual || meta.schema) {
      return 'inheritance, embeddables, virtual entities and schema-qualified tables go through the ORM';
    }
    if (Object.values(meta.hooks ?? {}).some((hooks) => (hooks as unknown[] | undefined)?.length)) {
      return 'the entity has lifecycle hooks';
    }
    for (const prop of meta.props as EntityProperty[]) {
      if (prop.persist === false || prop.formula || prop.generated) continue; // not written by an insert
      if (prop.kind === ReferenceKind.ONE_TO_MANY || (prop.kind === ReferenceKind.ONE_TO_ONE && !prop.owner)) continue;
      if (prop.kind === ReferenceKind.MANY_TO_MANY) {
        if (prop.owner) this.collections.add(prop.name);
        continue;
      }
      if (prop.version || prop.array || prop.kind === ReferenceKind.EMBEDDED)
        return `${prop.name}: versioned, array and embedded properties go through the ORM`;
      if (prop.fieldNames?.length !== 1) return `${prop.name}: spans ${prop.fieldNames?.length ?? 0} columns`;
      if (prop.onCreate && prop.onCreate.length > 0) return `${prop.name}: its onCreate reads the entity`;
      const onCreate = prop.onCreate as (() => unknown) | undefined;
      let accepts: (value: unknown) => boolean;
      if (prop.kind === ReferenceKind.SCALAR) {
        if (prop.customType && !PLAIN_TYPES.some((type) => prop.customType instanceof type)) {
          return `${prop.name}: type ${prop.customType.constructor.name} converts its values`;
        }
        const byKind = ACCEPTS[kindOfProperty(prop)];
        if (!byKind) return `${prop.name}: values of type ${String(prop.type)} go through the ORM`;
        accepts = byKind;
      } else if (prop.primary) {
        return `${prop.name}: a relation as primary key`;
      } else {
        accepts = isKey; // a to-one key, parsed by the write plan
      }
      columns.push({
        index: columns.length,
        prop: prop.name,
        quoted: this.db.quote(prop.fieldNames[0]!),
        wire: wireKeyOf(prop),
        accepts,
        ...(onCreate ? { onCreate } : {}),
      });
    }
    return undefined;
  }

  /** The statement for one set of written columns, compiled on first use. */
  private statement(key: string, written: readonly InsertColumn[]): string {
    let sql = this.statements.get(key);
    if (sql === undefined) {
      sql =
        written.length === 0
          ? `${this.head} default values${this.returning}`
          : `${this.head} (${written.map((c) => c.quoted).join(', ')}) values (${written.map(() => '?').join(', ')})${this.returning}`;
      if (this.statements.size >= MAX_STATEMENTS) this.statements.delete(this.statements.keys().next().value as string);
      this.statements.set(key, sql);
    }
    return sql;
  }

  /** A value as MikroORM binds it: SQLite wants 0/1 and epoch ms, PostgreSQL gets datetimes as ISO text. */
  private toDriverValue(value: unknown): unknown {
    if (this.db.dialect === 'sqlite') return this.db.toDriverValue(value);
    return value instanceof Date ? value.toISOString() : value;
  }

  /** The output row, as the read path builds it: same keys, order, decoders and hidden fields. */
  private output(raw: Record<string, unknown>, restricted: ReadonlySet<string>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const c of this.outputColumns(restricted)) {
      const v = raw[c.key];
      out[c.key] = v === null || v === undefined ? null : c.decode ? c.decode(v) : v;
    }
    return out;
  }

  private outputColumns(restricted: ReadonlySet<string>): readonly OutputColumn[] {
    let columns = this.outputs.get(restricted);
    if (!columns) {
      const info = this.info;
      columns = info.columns
        .filter((c) => !isColumnRestricted(restricted, [], info.namespace, c))
        .map((c) => ({ key: c.key, decode: c.decode }));
      this.outputs.set(restricted, columns);
    }
    return columns;
  }
}
