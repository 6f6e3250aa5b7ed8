/**
 * How a repository turns wire-shaped input (`{ title, project_id, label_ids }`) into MikroORM entity
 * data, built once per model from its metadata. Everything here runs before any SQL: unknown keys,
 * nulls for non-nullable fields, missing required fields and malformed ids are `ValidationError`s that
 * name the field.
 */
import { plainNumberText } from '../util/numbers.js';
import {
  BigIntType,
  DecimalType,
  DoubleType,
  FloatType,
  JsonType,
  ReferenceKind,
  type EntityMetadata,
  type EntityProperty,
} from '@mikro-orm/core';
import { ValidationError, type ErrorDetail } from '../errors.js';
import { canonicalUuid, kindOfProperty } from '../model/codecs.js';
import { dateProblem, instantProblem } from '../model/calendar.js';
import type { Dialect } from '../db/database.js';
import {
  decimalProblem,
  decimalSpecOf,
  integerProblem,
  integerRangeOf,
  isDecimalText,
  jsonProblem,
  textProblem,
  type DecimalSpec,
  type IntegerRange,
  type ValueProblem,
} from '../model/value-checks.js';
import { wireKeyOf } from '../model/wire-names.js';

export type Id = string | number;

/** How a primary key is checked and normalised before it reaches SQL. */
export interface KeySpec {
  readonly column: string;
  readonly kind: 'uuid' | 'integer' | 'string';
  /** For an integer key: the column's range. */
  readonly range?: IntegerRange;
}

type FieldKind = 'scalar' | 'to-one' | 'to-many';

interface FieldSpec {
  /** The wire key: the property name, `<relation>_id` or `<singular>_ids`. */
  readonly key: string;
  readonly prop: string;
  readonly kind: FieldKind;
  readonly nullable: boolean;
  readonly primary: boolean;
  /** Must be present on create. */
  readonly required: boolean;
  /** What a full replace (PUT) sets when the key is absent; undefined = the key is required. */
  readonly reset: { value: unknown } | 'skip' | undefined;
  /** What a scalar value must be, and how it is passed on. */
  readonly rule: ScalarRule;
  /** For relations: the target table and key. */
  readonly target?: { readonly table: string; readonly key: KeySpec };
}

/** One relation's ids to check for existence (one query per relation). */
export interface RelatedCheck {
  readonly key: string;
  /** The relation's property name. */
  readonly prop: string;
  readonly table: string;
  readonly column: string;
  readonly ids: Id[];
}

/**
 * How a scalar value is checked before it reaches SQL (see value-checks.ts): text and JSON for
 * characters a database cannot store, integers for their column's range, decimals for the column's
 * digits. A value of another type than the rule's is passed on unchanged, as before these checks:
 * the request schemas check types, and the database refuses what they let through.
 */
type ScalarRule =
  | { readonly kind: 'uuid' | 'date' | 'datetime' | 'text' | 'json' | 'float' | 'other' }
  | { readonly kind: 'integer'; readonly range: IntegerRange; readonly mode: 'number' | 'string' | 'bigint' }
  | { readonly kind: 'decimal'; readonly spec: DecimalSpec; readonly mode: 'string' | 'number' };

export type WriteMode = 'create' | 'patch' | 'replace';

export interface PreparedWrite {
  /** Entity data by property name, for `em.create` / `em.assign`. */
  readonly values: Record<string, unknown>;
  readonly related: RelatedCheck[];
}

const INTEGER_TYPES = new Set([
  'integer',
  'int',
  'smallint',
  'tinyint',
  'mediumint',
  'bigint',
  'int2',
  'int4',
  'int8',
  'serial',
]);

export class WritePlan {
  readonly table: string;
  readonly key: KeySpec;
  /** The primary key's property name. */
  readonly keyProperty: string;
  private readonly fields = new Map<string, FieldSpec>();
  /** Property name and wire key → wire key, for `keep` lists. */
  private readonly aliases = new Map<string, string>();

  /**
   * @param relationKeys overrides of the many-to-many input key, by relation name (the manifest's
   *   `ids_field`), e.g. `{ labels: 'tag_ids' }`.
   * @param dialect the database written to: on SQLite a decimal keeps at most 15 significant digits.
   */
  constructor(
    meta: EntityMetadata,
    relationKeys: Readonly<Record<string, string>> = {},
    dialect: Dialect = 'postgresql',
  ) {
    this.table = meta.tableName;
    const pk = meta.primaryKeys.length === 1 ? meta.properties[meta.primaryKeys[0]!] : undefined;
    if (!pk) throw new Error(`${meta.className}: Core repositories need a single-column primary key`);
    this.key = keySpec(pk);
    this.keyProperty = pk.name;
    for (const prop of Object.values(meta.properties) as EntityProperty[]) {
      const spec = fieldSpec(prop, relationKeys, dialect);
      if (!spec) continue;
      this.fields.set(spec.key, spec);
      this.aliases.set(spec.key, spec.key);
      this.aliases.set(spec.prop, spec.key);
    }
  }

  /**
   * The many-to-many properties among `values`. An update loads them first: MikroORM treats an
   * unloaded collection that is set to `[]` as already empty and would keep the stored links.
   */
  collectionProps(values: Record<string, unknown>): string[] {
    return [...this.fields.values()].filter((f) => f.kind === 'to-many' && f.prop in values).map((f) => f.prop);
  }

  /** Whether `key` is a wire key the input may set (a column, `<relation>_id` or `<singular>_ids`). */
  isWritable(key: string): boolean {
    return this.fields.has(key);
  }

  /** The many-to-many properties among `values`, with their wire keys. */
  collections(values: Record<string, unknown>): { prop: string; key: string }[] {
    return [...this.fields.values()]
      .filter((f) => f.kind === 'to-many' && f.prop in values)
      .map((f) => ({ prop: f.prop, key: f.key }));
  }

  /** Checks and normalises a primary key (uuids lower-cased, integer strings parsed). */
  parseId(raw: unknown, path = 'id'): Id {
    return parseKey(raw, this.key, path, this.table);
  }

  /**
   * Maps input to entity data. `create` requires every field without a default; `patch` touches only
   * the keys present; `replace` also resets every writable field absent from `input` to its default
   * (null for nullable fields, no links for many-to-many), except the fields named in `keep` — bare
   * names or `<table>.<field>` restriction entries — which keep their stored values. With `fields`,
   * a replace resets only those fields; every other one keeps its stored value too.
   */
  prepare(input: object, mode: WriteMode, keep: Iterable<string> = [], fields?: Iterable<string>): PreparedWrite {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      throw new ValidationError(`The ${this.table} input must be an object; received ${describe(input)}`);
    }
    const kept = this.wireKeys(keep);
    const covered = fields === undefined ? undefined : this.wireKeys(fields);
    const values: Record<string, unknown> = {};
    const related: RelatedCheck[] = [];
    const problems: ErrorDetail[] = [];
    for (const [key, value] of Object.entries(input)) {
      if (value === undefined || kept.has(key)) continue;
      const field = this.fields.get(key);
      if (!field) {
        const wire = this.aliases.get(key);
        const hint = wire ? `; set that relation with ${wire}` : '';
        problems.push({
          path: key,
          reason: 'unknown_field',
          message: `${key} is not a writable field of ${this.table}${hint}`,
        });
        continue;
      }
      if (field.primary && mode !== 'create') continue; // the key comes from the path; it never changes
      try {
        values[field.prop] = this.convert(field, value, related);
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        problems.push(...err.details);
      }
    }
    for (const field of this.fields.values()) {
      if (keyPresent(input, field.key) || kept.has(field.key)) continue;
      if (mode === 'create' && field.required) {
        problems.push({
          path: field.key,
          reason: 'required',
          message: `${field.key} is required to create a ${this.table} record`,
        });
      } else if (
        mode === 'replace' &&
        field.reset !== 'skip' &&
        !field.primary &&
        (covered === undefined || covered.has(field.key))
      ) {
        if (field.reset) values[field.prop] = field.reset.value;
        else {
          problems.push({
            path: field.key,
            reason: 'required',
            message: `${field.key} has no default, so a full replace (PUT) must send it; use PATCH to change some fields only`,
          });
        }
      }
    }
    if (problems.length > 0) {
      const names = [...new Set(problems.map((p) => p.path))].join(', ');
      throw new ValidationError(`Invalid ${this.table} input: ${names}`, problems);
    }
    return { values, related };
  }

  private convert(field: FieldSpec, value: unknown, related: RelatedCheck[]): unknown {
    if (value === null) {
      if (field.nullable) return field.kind === 'to-many' ? [] : null;
      throw invalid(field.key, 'not_nullable', `${field.key} cannot be null`);
    }
    switch (field.kind) {
      case 'to-one': {
        const target = field.target!;
        const id = parseKey(value, target.key, field.key, target.table);
        related.push({ key: field.key, prop: field.prop, table: target.table, column: target.key.column, ids: [id] });
        return id;
      }
      case 'to-many': {
        const target = field.target!;
        if (!Array.isArray(value)) {
          throw invalid(
            field.key,
            'type',
            `${field.key} must be an array of ${target.table} ids; received ${describe(value)}`,
          );
        }
        const ids = [...new Set(value.map((v, i) => parseKey(v, target.key, `${field.key}.${i}`, target.table)))];
        if (ids.length > 0)
          related.push({ key: field.key, prop: field.prop, table: target.table, column: target.key.column, ids });
        return ids;
      }
      default:
        return convertScalar(field, value);
    }
  }

  /** The wire keys of `names` (bare property names, wire keys or `<table>.<field>` entries). */
  private wireKeys(names: Iterable<string>): Set<string> {
    const keys = new Set<string>();
    const prefix = `${this.table}.`;
    for (const entry of names) {
      const name = entry.startsWith(prefix) ? entry.slice(prefix.length) : entry;
      const key = this.aliases.get(name);
      if (key) keys.add(key);
    }
    return keys;
  }
}

function fieldSpec(
  prop: EntityProperty,
  relationKeys: Readonly<Record<string, string>>,
  dialect: Dialect,
): FieldSpec | undefined {
  if (prop.persist === false || prop.formula || prop.embedded) return undefined;
  const generated = Boolean(prop.onCreate || prop.onUpdate || prop.version || prop.autoincrement || prop.generated);
  const hasDefault = prop.default !== undefined || prop.defaultRaw !== undefined;
  const nullable = Boolean(prop.nullable);
  if (prop.kind === ReferenceKind.SCALAR) {
    return {
      key: prop.name,
      prop: prop.name,
      kind: 'scalar',
      nullable,
      primary: Boolean(prop.primary),
      required: !prop.primary && !generated && !nullable && !hasDefault,
      // A database-only default (`defaultRaw`, e.g. now()) cannot be computed here: the value stays.
      reset: generated
        ? 'skip'
        : prop.default !== undefined
          ? { value: prop.default }
          : nullable
            ? { value: null }
            : prop.defaultRaw
              ? 'skip'
              : undefined,
      rule: scalarRule(prop, dialect),
    };
  }
  const targetMeta = prop.targetMeta;
  if (!targetMeta || !prop.owner) return undefined; // inverse sides are written from their owner
  const targetPk = targetMeta.primaryKeys.length === 1 ? targetMeta.properties[targetMeta.primaryKeys[0]!] : undefined;
  if (!targetPk) return undefined;
  const target = { table: targetMeta.tableName, key: keySpec(targetPk as EntityProperty) };
  if (prop.kind === ReferenceKind.MANY_TO_ONE || prop.kind === ReferenceKind.ONE_TO_ONE) {
    return {
      key: wireKeyOf(prop),
      prop: prop.name,
      kind: 'to-one',
      nullable,
      primary: Boolean(prop.primary),
      required: !nullable && !prop.primary,
      reset: nullable ? { value: null } : undefined,
      rule: OTHER,
      target,
    };
  }
  if (prop.kind === ReferenceKind.MANY_TO_MANY) {
    return {
      key: wireKeyOf(prop, relationKeys),
      prop: prop.name,
      kind: 'to-many',
      nullable: true, // null clears the links, like []
      primary: false,
      required: false,
      reset: { value: [] },
      rule: OTHER,
      target,
    };
  }
  return undefined;
}

function keySpec(prop: EntityProperty): KeySpec {
  const type = (prop.type ?? '').toLowerCase();
  const kind =
    type === 'uuid' ? 'uuid' : prop.runtimeType === 'number' || INTEGER_TYPES.has(type) ? 'integer' : 'string';
  const range = kind === 'integer' ? integerRangeOf(prop) : undefined;
  return { column: prop.fieldNames[0]!, kind, ...(range ? { range } : {}) };
}

function parseKey(raw: unknown, key: KeySpec, path: string, table: string): Id {
  switch (key.kind) {
    case 'uuid': {
      const id = typeof raw === 'string' ? canonicalUuid(raw) : undefined;
      if (id !== undefined) return id;
      throw invalid(path, 'invalid_id', `${path} must be a ${table} id (a UUID); received ${describe(raw)}`);
    }
    case 'integer': {
      const n = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
      if (typeof n === 'number' && Number.isSafeInteger(n)) {
        // An id outside the column's range names no record; PostgreSQL would fail on it instead.
        const problem = key.range && integerProblem(BigInt(n), key.range, path);
        if (problem) throw invalid(path, 'invalid_id', `${path} must be a ${table} id: ${problem.message}`);
        return n;
      }
      throw invalid(path, 'invalid_id', `${path} must be a ${table} id (an integer); received ${describe(raw)}`);
    }
    default: {
      const problem = typeof raw === 'string' ? textProblem(raw, path) : undefined;
      if (problem) throw invalid(path, 'invalid_id', `${path} must be a ${table} id: ${problem.message}`);
      if ((typeof raw === 'string' && raw !== '') || typeof raw === 'number') return String(raw);
      throw invalid(
        path,
        'invalid_id',
        `${path} must be a ${table} id (a non-empty string); received ${describe(raw)}`,
      );
    }
  }
}

const OTHER: ScalarRule = { kind: 'other' };

/** The rule of a scalar property, from its MikroORM type. */
function scalarRule(prop: EntityProperty, dialect: Dialect): ScalarRule {
  if (prop.type?.toLowerCase() === 'uuid') return { kind: 'uuid' };
  if (prop.runtimeType === 'Date') return { kind: 'datetime' };
  const t = prop.customType;
  if (t instanceof JsonType) return { kind: 'json' };
  const decimal = decimalSpecOf(prop, dialect);
  if (decimal)
    return {
      kind: 'decimal',
      spec: decimal,
      mode: t instanceof DecimalType && t.mode === 'number' ? 'number' : 'string',
    };
  const range = integerRangeOf(prop);
  if (range) {
    const mode = t instanceof BigIntType ? (t.mode ?? 'bigint') : 'number';
    return { kind: 'integer', range, mode };
  }
  if (t instanceof FloatType || t instanceof DoubleType) return { kind: 'float' };
  const kind = kindOfProperty(prop);
  if (kind === 'date') return { kind: 'date' };
  if (kind === 'string') return { kind: 'text' };
  if (kind === 'json') return { kind: 'json' };
  if (kind === 'number') return { kind: 'float' };
  return OTHER;
}

function convertScalar(field: FieldSpec, value: unknown): unknown {
  const path = field.key;
  const rule = field.rule;
  const refuse = (problem: ValueProblem | undefined): void => {
    if (problem) throw invalid(path, problem.reason, problem.message);
  };
  switch (rule.kind) {
    case 'uuid': {
      const uuid = typeof value === 'string' ? canonicalUuid(value) : undefined;
      if (uuid === undefined) throw invalid(path, 'type', `${path} must be a UUID; received ${describe(value)}`);
      return uuid;
    }
    case 'datetime': {
      const date =
        value instanceof Date
          ? value
          : typeof value === 'string' || typeof value === 'number'
            ? new Date(value)
            : undefined;
      if (!date || Number.isNaN(date.getTime())) {
        throw invalid(path, 'type', `${path} must be an ISO 8601 date-time; received ${describe(value)}`);
      }
      refuse(instantProblem(date, path));
      return date;
    }
    case 'date':
      // A calendar day the database stores as written; a Date is stored by the driver as its day.
      if (typeof value === 'string') refuse(dateProblem(value, path));
      else if (value instanceof Date && !Number.isNaN(value.getTime())) refuse(instantProblem(value, path));
      return value;
    case 'text':
      if (typeof value === 'string') refuse(textProblem(value, path));
      return value;
    case 'json': {
      const found = jsonProblem(value, path);
      if (found) throw invalid(found.path, found.problem.reason, found.problem.message);
      return value;
    }
    case 'float':
      if (typeof value === 'number' && !Number.isFinite(value))
        throw invalid(path, 'type', `${path} must be a finite number`);
      return value;
    case 'integer':
      return convertInteger(path, value, rule.range, rule.mode);
    case 'decimal':
      return convertDecimal(path, value, rule.spec, rule.mode);
    default:
      if (typeof value === 'string') refuse(textProblem(value, path));
      return value;
  }
}

/** An integer (a number, a string of digits or a bigint) in its column's range, in the property's JS form. */
function convertInteger(
  path: string,
  value: unknown,
  range: IntegerRange,
  mode: 'number' | 'string' | 'bigint',
): unknown {
  let n: bigint;
  if (typeof value === 'bigint') n = value;
  else if (typeof value === 'string' && /^-?\d{1,40}$/.test(value)) n = BigInt(value);
  else if (typeof value === 'number' && Number.isInteger(value)) {
    // Past 2^53 a JSON number has already lost digits; it cannot be stored as sent.
    if (!Number.isSafeInteger(value)) {
      throw invalid(
        path,
        'out_of_range',
        `${path} is beyond 2^53, where a JSON number loses digits; send it as a string of digits`,
      );
    }
    n = BigInt(value);
  } else if (typeof value === 'number' || typeof value === 'string') {
    throw invalid(path, 'type', `${path} must be an integer; received ${describe(value)}`);
  } else {
    return value;
  }
  const problem = integerProblem(n, range, path);
  if (problem) throw invalid(path, problem.reason, problem.message);
  if (mode === 'bigint') return n;
  if (mode === 'string') return n.toString();
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw invalid(path, 'out_of_range', `${path} is beyond 2^53, which this field keeps as a JavaScript number`);
  }
  return Number(n);
}

/** A decimal (text such as "12.50", or a number) that fits its column exactly, as text (or number for a `number` mode). */
function convertDecimal(path: string, value: unknown, spec: DecimalSpec, mode: 'string' | 'number'): unknown {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = plainNumberText(value);
  else if (typeof value === 'number') throw invalid(path, 'type', `${path} must be a finite decimal`);
  else return value;
  if (!isDecimalText(text))
    throw invalid(path, 'type', `${path} must be a decimal such as "12.50"; received ${describe(value)}`);
  const problem = decimalProblem(text, spec, path);
  if (problem) throw invalid(path, problem.reason, problem.message);
  return mode === 'number' ? Number(text) : text;
}

function invalid(path: string, reason: string, message: string): ValidationError {
  return new ValidationError(message, [{ path, reason, message }]);
}

function keyPresent(input: object, key: string): boolean {
  return (input as Record<string, unknown>)[key] !== undefined;
}

/** A short, safe description of a received value for error messages (strings are cut at 40 chars). */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
