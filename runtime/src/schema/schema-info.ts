import type { TSchema } from 'typebox';
import { withCalendarYears } from './calendar-years.js';
import type { SchemaDefinition } from './types.js';

/** A relation as the runtime uses it: the target is resolved on first use (it may be cyclic). */
export interface RelationInfo {
  readonly name: string;
  readonly many: boolean;
  readonly foreignKey: string | undefined;
  target(): SchemaInfo;
}

/**
 * A schema class read once and checked: declaration mistakes fail on first use with a message that
 * names the class, instead of surfacing later as a wrong mask. Schemas are treated as immutable
 * after that first use (everything below is cached on it).
 */
export interface SchemaInfo {
  /** Distinct per class, for cache keys (two classes may share a name). */
  readonly id: number;
  readonly title: string;
  readonly namespace: string;
  readonly fieldNames: readonly string[];
  readonly properties: Readonly<Record<string, TSchema>>;
  readonly required: ReadonlySet<string>;
  readonly relations: ReadonlyMap<string, RelationInfo>;
  /** Relation name → its foreign-key field, from `relations[*].foreignKey` and `foreignKeys`. */
  readonly fkOfRelation: ReadonlyMap<string, string>;
  /** Foreign-key field → relation name (the inverse of `fkOfRelation`). */
  readonly relationOfFk: ReadonlyMap<string, string>;
}

const infos = new WeakMap<SchemaDefinition, SchemaInfo>();
let nextId = 1;

export function describeSchema(schema: SchemaDefinition): SchemaInfo {
  const cached = infos.get(schema);
  if (cached) return cached;
  const info = readSchema(schema);
  infos.set(schema, info);
  return info;
}

function readSchema(schema: SchemaDefinition): SchemaInfo {
  const title = schema.name || 'anonymous schema';
  if (typeof schema.__model__ !== 'string' || schema.__model__ === '') {
    throw new Error(
      `${title} has no static __model__: set it to the permission namespace (the table name), e.g. \`static override readonly __model__ = 'tasks'\`.`,
    );
  }
  const fields = schema.fields as unknown;
  if (!isRecord(fields) || fields['type'] !== 'object' || !isRecord(fields['properties'])) {
    throw new Error(
      `${title}.fields must be a TypeBox object schema (\`Type.Object({ … })\`); received ${kindOf(fields)}.`,
    );
  }
  const properties = Object.fromEntries(
    Object.entries(fields['properties'] as Record<string, TSchema>).map(([name, property]) => [
      name,
      withCalendarYears(property),
    ]),
  );
  const fieldNames = Object.keys(properties);
  const required = new Set(Array.isArray(fields['required']) ? (fields['required'] as string[]) : []);

  const relations = new Map<string, RelationInfo>();
  const fkOfRelation = new Map<string, string>();
  for (const [name, spec] of Object.entries(schema.relations ?? {})) {
    if (Object.hasOwn(properties, name)) {
      throw new Error(`${title}: relation "${name}" has the same name as a field; rename one of them.`);
    }
    if (!isRecord(spec) || typeof spec.schema !== 'function') {
      throw new Error(
        `${title}.relations.${name} must be \`{ schema: () => OtherSchema, many: boolean, foreignKey? }\`; received ${kindOf(spec)}.`,
      );
    }
    if (spec.foreignKey !== undefined) {
      requireField(title, properties, spec.foreignKey, `relations.${name}.foreignKey`);
      fkOfRelation.set(name, spec.foreignKey);
    }
    relations.set(name, makeRelation(title, name, spec.schema, spec.many === true, spec.foreignKey));
  }
  for (const [fk, relation] of Object.entries(schema.foreignKeys ?? {})) {
    requireField(title, properties, fk, `foreignKeys.${fk}`);
    const declared = fkOfRelation.get(relation);
    if (declared !== undefined && declared !== fk) {
      throw new Error(
        `${title}: relation "${relation}" has foreign key "${declared}" in relations and "${fk}" in foreignKeys; keep one.`,
      );
    }
    fkOfRelation.set(relation, fk);
  }
  const relationOfFk = new Map<string, string>();
  for (const [relation, fk] of fkOfRelation) relationOfFk.set(fk, relation);

  return {
    id: nextId++,
    title,
    namespace: schema.__model__,
    fieldNames,
    properties,
    required,
    relations,
    fkOfRelation,
    relationOfFk,
  };
}

function makeRelation(
  owner: string,
  name: string,
  thunk: () => SchemaDefinition,
  many: boolean,
  foreignKey: string | undefined,
): RelationInfo {
  let target: SchemaInfo | undefined;
  return {
    name,
    many,
    foreignKey,
    target() {
      if (target) return target;
      const schema = thunk();
      if (typeof schema !== 'function' || !('fields' in schema)) {
        throw new Error(
          `${owner}.relations.${name}.schema() must return a ContextSchema class; received ${kindOf(schema)}.`,
        );
      }
      target = describeSchema(schema);
      return target;
    },
  };
}

/** Every schema reachable from `root` through relations, `root` included (cycle-safe). */
export function reachableSchemas(root: SchemaInfo): readonly SchemaInfo[] {
  const seen = new Map<number, SchemaInfo>([[root.id, root]]);
  const queue = [root];
  for (let i = 0; i < queue.length; i++) {
    for (const relation of queue[i]!.relations.values()) {
      const target = relation.target();
      if (!seen.has(target.id)) {
        seen.set(target.id, target);
        queue.push(target);
      }
    }
  }
  return [...seen.values()];
}

function requireField(title: string, properties: Record<string, TSchema>, field: string, where: string): void {
  if (!Object.hasOwn(properties, field)) {
    throw new Error(
      `${title}.${where} names "${field}", which is not one of its fields (${Object.keys(properties).join(', ') || 'none'}).`,
    );
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value's kind for messages — never the value itself (it may be restricted data). */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
