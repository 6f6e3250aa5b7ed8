/**
 * How a repository turns wire-shaped input (`{ title, project_id, label_ids }`) into MikroORM entity
 * data, built once per model from its metadata. Everything here runs before any SQL: unknown keys,
 * nulls for non-nullable fields, missing required fields and malformed ids are `ValidationError`s that
 * name the field.
 */
import { ReferenceKind, type EntityMetadata, type EntityProperty } from '@mikro-orm/core';
import { ValidationError, type ErrorDetail } from '../errors.js';
import { wireKeyOf } from './wire-names.js';

export type Id = string | number;

/** How a primary key is checked and normalised before it reaches SQL. */
export interface KeySpec {
  readonly column: string;
  readonly kind: 'uuid' | 'integer' | 'string';
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
  readonly valueKind: 'uuid' | 'datetime' | 'other';
  /** For relations: the target table and key. */
  readonly target?: { readonly table: string; readonly key: KeySpec };
}

/** One relation's ids to check for existence (one query per relation). */
export interface RelatedCheck {
  readonly key: string;
  readonly table: string;
  readonly column: string;
  readonly ids: Id[];
}

export type WriteMode = 'create' | 'patch' | 'replace';

export interface PreparedWrite {
  /** Entity data by property name, for `em.create` / `em.assign`. */
  readonly values: Record<string, unknown>;
  readonly related: RelatedCheck[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INTEGER_TYPES = new Set(['integer', 'int', 'smallint', 'tinyint', 'mediumint', 'bigint', 'int2', 'int4', 'int8', 'serial']);

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
   */
  constructor(meta: EntityMetadata, relationKeys: Readonly<Record<string, string>> = {}) {
    this.table = meta.tableName;
    const pk = meta.primaryKeys.length === 1 ? meta.properties[meta.primaryKeys[0]!] : undefined;
    if (!pk) throw new Error(`${meta.className}: Core repositories need a single-column primary key`);
    this.key = keySpec(pk);
    this.keyProperty = pk.name;
    for (const prop of Object.values(meta.properties) as EntityProperty[]) {
      const spec = fieldSpec(prop, relationKeys);
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

  /** Checks and normalises a primary key (uuids lower-cased, integer strings parsed). */
  parseId(raw: unknown, path = 'id'): Id {
    return parseKey(raw, this.key, path, this.table);
  }

  /**
   * Maps input to entity data. `create` requires every field without a default; `patch` touches only
   * the keys present; `replace` also resets every writable field absent from `input` to its default
   * (null for nullable fields, no links for many-to-many), except the fields named in `keep` — bare
   * names or `<table>.<field>` restriction entries — which keep their stored values.
   */
  prepare(input: object, mode: WriteMode, keep: Iterable<string> = []): PreparedWrite {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      throw new ValidationError(`The ${this.table} input must be an object; received ${describe(input)}`);
    }
    const kept = this.keptKeys(keep);
    const values: Record<string, unknown> = {};
    const related: RelatedCheck[] = [];
    const problems: ErrorDetail[] = [];
    for (const [key, value] of Object.entries(input)) {
      if (value === undefined || kept.has(key)) continue;
      const field = this.fields.get(key);
      if (!field) {
        const wire = this.aliases.get(key);
        const hint = wire ? `; set that relation with ${wire}` : '';
        problems.push({ path: key, reason: 'unknown_field', message: `${key} is not a writable field of ${this.table}${hint}` });
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
        problems.push({ path: field.key, reason: 'required', message: `${field.key} is required to create a ${this.table} record` });
      } else if (mode === 'replace' && field.reset !== 'skip' && !field.primary) {
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
        related.push({ key: field.key, table: target.table, column: target.key.column, ids: [id] });
        return id;
      }
      case 'to-many': {
        const target = field.target!;
        if (!Array.isArray(value)) {
          throw invalid(field.key, 'type', `${field.key} must be an array of ${target.table} ids; received ${describe(value)}`);
        }
        const ids = [...new Set(value.map((v, i) => parseKey(v, target.key, `${field.key}.${i}`, target.table)))];
        if (ids.length > 0) related.push({ key: field.key, table: target.table, column: target.key.column, ids });
        return ids;
      }
      default:
        return convertScalar(field, value);
    }
  }

  private keptKeys(keep: Iterable<string>): Set<string> {
    const kept = new Set<string>();
    const prefix = `${this.table}.`;
    for (const entry of keep) {
      const name = entry.startsWith(prefix) ? entry.slice(prefix.length) : entry;
      const key = this.aliases.get(name);
      if (key) kept.add(key);
    }
    return kept;
  }
}

function fieldSpec(prop: EntityProperty, relationKeys: Readonly<Record<string, string>>): FieldSpec | undefined {
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
      reset: generated ? 'skip' : prop.default !== undefined ? { value: prop.default } : nullable ? { value: null } : prop.defaultRaw ? 'skip' : undefined,
      valueKind: prop.type?.toLowerCase() === 'uuid' ? 'uuid' : prop.runtimeType === 'Date' ? 'datetime' : 'other',
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
      valueKind: 'other',
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
      valueKind: 'other',
      target,
    };
  }
  return undefined;
}

function keySpec(prop: EntityProperty): KeySpec {
  const type = (prop.type ?? '').toLowerCase();
  const kind = type === 'uuid' ? 'uuid' : prop.runtimeType === 'number' || INTEGER_TYPES.has(type) ? 'integer' : 'string';
  return { column: prop.fieldNames[0]!, kind };
}

function parseKey(raw: unknown, key: KeySpec, path: string, table: string): Id {
  switch (key.kind) {
    case 'uuid':
      if (typeof raw === 'string' && UUID.test(raw)) return raw.toLowerCase();
      throw invalid(path, 'invalid_id', `${path} must be a ${table} id (a UUID); received ${describe(raw)}`);
    case 'integer': {
      const n = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
      if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
      throw invalid(path, 'invalid_id', `${path} must be a ${table} id (an integer); received ${describe(raw)}`);
    }
    default:
      if ((typeof raw === 'string' && raw !== '') || typeof raw === 'number') return String(raw);
      throw invalid(path, 'invalid_id', `${path} must be a ${table} id (a non-empty string); received ${describe(raw)}`);
  }
}

function convertScalar(field: FieldSpec, value: unknown): unknown {
  if (field.valueKind === 'uuid' && !(typeof value === 'string' && UUID.test(value))) {
    throw invalid(field.key, 'type', `${field.key} must be a UUID; received ${describe(value)}`);
  }
  if (field.valueKind === 'uuid') return (value as string).toLowerCase();
  if (field.valueKind === 'datetime') {
    const date = value instanceof Date ? value : typeof value === 'string' || typeof value === 'number' ? new Date(value) : undefined;
    if (!date || Number.isNaN(date.getTime())) {
      throw invalid(field.key, 'type', `${field.key} must be an ISO 8601 date-time; received ${describe(value)}`);
    }
    return date;
  }
  return value;
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
