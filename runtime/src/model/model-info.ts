import { ReferenceKind, type EntityMetadata, type EntityProperty } from '@mikro-orm/core';
import type { Database } from '../db/database.js';
import type { IntegerRange } from './value-checks.js';
import { decoderFor, kindOfProperty, rangeOfColumn, type Decoder, type ValueKind } from './codecs.js';

/** One readable column of a model: a scalar property, or the foreign key of an owning to-one relation. */
export interface ColumnInfo {
  /** Output key and filter/sort name: the property name, or `<relation>_id` for a foreign key. */
  readonly key: string;
  readonly column: string;
  /** `db.quote(column)`, computed once. */
  readonly quoted: string;
  readonly kind: ValueKind;
  readonly nullable: boolean;
  readonly decode: Decoder | undefined;
  readonly enumValues?: readonly (string | number)[];
  /** For an integer column: its range (filter values outside it are refused). */
  readonly range?: IntegerRange;
  /** For a foreign key: the relation it belongs to (a restricted relation also hides its key). */
  readonly relation?: string;
  readonly primary: boolean;
}

/**
 * How a relation reaches its target:
 * - `local`: this table holds the foreign key (many-to-one, owning one-to-one);
 * - `remote`: the target holds a foreign key to this table (one-to-many, inverse one-to-one);
 * - `pivot`: a join table links the two (many-to-many, either side).
 */
export type RelationJoin =
  | { readonly type: 'local'; readonly sourceColumn: string; readonly targetColumn: string }
  | { readonly type: 'remote'; readonly sourceColumn: string; readonly targetColumn: string }
  | {
      readonly type: 'pivot';
      readonly table: string;
      readonly sourceFk: string;
      readonly targetFk: string;
      readonly sourceColumn: string;
      readonly targetColumn: string;
    };

export interface RelationInfo {
  readonly name: string;
  readonly kind: 'm:1' | '1:1' | '1:m' | 'm:n';
  readonly toMany: boolean;
  readonly join: RelationJoin;
  /** The target model, resolved on first use (models refer to each other in cycles). */
  target(): ModelInfo;
}

/** Everything the read path needs to know about one model, compiled once per database. */
export interface ModelInfo {
  readonly className: string;
  /** Permission and restriction namespace: the table name. */
  readonly namespace: string;
  readonly table: string;
  readonly quotedTable: string;
  readonly pk: ColumnInfo;
  /** Output columns in declaration order (primary key included). */
  readonly columns: readonly ColumnInfo[];
  /** Columns by output key. */
  readonly fields: ReadonlyMap<string, ColumnInfo>;
  readonly relations: ReadonlyMap<string, RelationInfo>;
}

const cache = new WeakMap<Database, Map<string, ModelInfo>>();

/** The compiled description of `className` on `db`; cached for the database's lifetime. */
export function modelInfo(db: Database, className: string): ModelInfo {
  let perDb = cache.get(db);
  if (!perDb) cache.set(db, (perDb = new Map()));
  let info = perDb.get(className);
  if (!info) {
    info = buildModelInfo(db, className);
    perDb.set(className, info);
  }
  return info;
}

function findMeta(db: Database, className: string): EntityMetadata {
  const meta = db.orm.getMetadata().find(className);
  if (!meta) {
    throw new Error(
      `Model ${className} is not known to the database: pass its schema to dbManager.initApp (or define it with defineModel before initApp)`,
    );
  }
  return meta;
}

function single(names: readonly string[] | undefined, what: string): string {
  if (names?.length !== 1) {
    throw new Error(`${what} spans ${names?.length ?? 0} columns; Core's read path supports single-column keys only`);
  }
  return names[0]!;
}

/** A property the read path leaves alone: not stored, computed, or hidden from output (`output: false`). */
function skipped(prop: EntityProperty): boolean {
  return (
    prop.persist === false || prop.formula !== undefined || prop.hidden === true || prop.kind === ReferenceKind.EMBEDDED
  );
}

function buildModelInfo(db: Database, className: string): ModelInfo {
  const meta = findMeta(db, className);
  const where = className;
  const pkName = single(meta.primaryKeys, `The primary key of ${where}`);
  const columns: ColumnInfo[] = [];
  const relations = new Map<string, RelationInfo>();

  for (const prop of meta.props) {
    if (skipped(prop)) continue;
    const label = `${where}.${prop.name}`;
    if (prop.kind === ReferenceKind.SCALAR) {
      const kind = kindOfProperty(prop);
      columns.push({
        key: prop.name,
        column: single(prop.fieldNames, label),
        quoted: db.quote(single(prop.fieldNames, label)),
        kind,
        nullable: prop.nullable === true,
        decode: decoderFor(kind, db.dialect, prop.scale),
        ...(prop.enum && prop.items ? { enumValues: prop.items as (string | number)[] } : {}),
        ...rangeOfColumn(kind, prop),
        primary: prop.name === pkName,
      });
      continue;
    }
    const relation = buildRelation(db, meta, prop, label);
    if (!relation) continue;
    relations.set(prop.name, relation);
    if (relation.join.type === 'local') {
      // An owning to-one relation shows its key as `<relation>_id`, typed like the target's key.
      const kind = foreignKeyKind(db, prop);
      columns.push({
        key: `${prop.name}_id`,
        column: relation.join.sourceColumn,
        quoted: db.quote(relation.join.sourceColumn),
        kind,
        nullable: prop.nullable === true,
        decode: decoderFor(kind, db.dialect),
        relation: prop.name,
        primary: false,
      });
    }
  }

  const pk = columns.find((c) => c.primary);
  if (!pk) throw new Error(`The primary key ${where}.${pkName} is not a readable scalar column`);
  return {
    className: meta.className,
    namespace: meta.tableName,
    table: meta.tableName,
    quotedTable: db.quote(meta.tableName),
    pk,
    columns,
    fields: new Map(columns.map((c) => [c.key, c])),
    relations,
  };
}

/** The kind of a foreign key: the kind of the target's primary key (read from metadata, not ModelInfo, to avoid cycles). */
function foreignKeyKind(db: Database, prop: EntityProperty): ValueKind {
  const target = findMeta(db, prop.type);
  const pkProp = target.properties[single(target.primaryKeys, `The primary key of ${target.className}`)];
  return pkProp ? kindOfProperty(pkProp as EntityProperty) : 'other';
}

function buildRelation(
  db: Database,
  meta: EntityMetadata,
  prop: EntityProperty,
  label: string,
): RelationInfo | undefined {
  const targetClass = prop.type;
  const target = () => modelInfo(db, targetClass);
  const sourcePk = () =>
    single(
      meta.primaryKeys.map((k) => meta.properties[k]?.fieldNames?.[0] ?? k),
      `The primary key of ${meta.className}`,
    );
  const targetMeta = findMeta(db, targetClass);
  const targetPk = single(
    targetMeta.primaryKeys.map((k) => targetMeta.properties[k]?.fieldNames?.[0] ?? k),
    `The primary key of ${targetClass}`,
  );
  let kind: RelationInfo['kind'];
  let join: RelationJoin;
  switch (prop.kind) {
    case ReferenceKind.MANY_TO_ONE:
    case ReferenceKind.ONE_TO_ONE:
      kind = prop.kind === ReferenceKind.MANY_TO_ONE ? 'm:1' : '1:1';
      if (prop.kind === ReferenceKind.MANY_TO_ONE || prop.owner) {
        join = {
          type: 'local',
          sourceColumn: single(prop.fieldNames, label),
          targetColumn: single(prop.referencedColumnNames ?? [targetPk], label),
        };
      } else {
        const back = targetMeta.properties[prop.mappedBy as never] as EntityProperty | undefined;
        if (!back) throw new Error(`${label} is mapped by ${targetClass}.${prop.mappedBy}, which does not exist`);
        join = {
          type: 'remote',
          sourceColumn: sourcePk(),
          targetColumn: single(back.fieldNames, `${targetClass}.${back.name}`),
        };
      }
      break;
    case ReferenceKind.ONE_TO_MANY: {
      kind = '1:m';
      const back = targetMeta.properties[prop.mappedBy as never] as EntityProperty | undefined;
      if (!back) throw new Error(`${label} is mapped by ${targetClass}.${prop.mappedBy}, which does not exist`);
      join = {
        type: 'remote',
        sourceColumn: sourcePk(),
        targetColumn: single(back.fieldNames, `${targetClass}.${back.name}`),
      };
      break;
    }
    case ReferenceKind.MANY_TO_MANY:
      kind = 'm:n';
      join = {
        type: 'pivot',
        table: prop.pivotTable,
        sourceFk: single(prop.joinColumns, label),
        targetFk: single(prop.inverseJoinColumns, label),
        sourceColumn: sourcePk(),
        targetColumn: targetPk,
      };
      break;
    default:
      return undefined;
  }
  return { name: prop.name, kind, toMany: kind === '1:m' || kind === 'm:n', join, target };
}
