import build from 'fast-json-stringify';
import { toSerializerSchema, type ValueKind } from './json-schema.js';
import type { OutputNode, OutputPlan } from './output-plan.js';
import { isRecord } from './schema-info.js';
import type { Serializer } from './types.js';

type FjsSchema = Parameters<typeof build>[0];
type Json = { [keyword: string]: unknown };

/**
 * Compiles one fast-json-stringify function for a plan. Every node is a definition whose properties
 * are exactly the visible fields and relations, none of them required: a masked field is simply not
 * in the schema (fast-json-stringify skips undeclared keys), and a value missing from the data is
 * skipped rather than failing. Nodes are `["object", "null"]` so a to-one relation may be null.
 */
export function compileSerializer(plan: OutputPlan): Serializer {
  const definitions: Record<string, Json> = {};
  for (const node of plan.nodes) definitions[node.id] = nodeSchema(node);
  const writeOne = build({ $ref: ref(plan.root), definitions } as unknown as FjsSchema) as (value: unknown) => string;
  const title = plan.root.info.title;

  const write = (value: unknown): string => {
    try {
      return writeOne(value);
    } catch (error) {
      // fast-json-stringify names only the definition; say what the data must look like.
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        `${title} serializer: ${reason} Fields must match their declared types, and relation values must be an object (to-one), ` +
          'an array (to-many), null or absent — leave unloaded relations out rather than passing their key.',
        { cause: error },
      );
    }
  };
  return (value) => {
    if (!Array.isArray(value)) return write(value);
    let json = '[';
    for (let i = 0; i < value.length; i++) json += (i === 0 ? '' : ',') + write(value[i]);
    return `${json}]`;
  };
}

function nodeSchema(node: OutputNode): Json {
  const properties: Json = {};
  for (const field of node.fields) properties[field.name] = toSerializerSchema(field.fragment);
  for (const relation of node.relations) {
    properties[relation.name] = relation.many
      ? { type: 'array', items: { $ref: ref(relation.node) } }
      : { $ref: ref(relation.node) };
  }
  // `nullable`, not `type: ['object', 'null']`: fast-json-stringify copies a multi-type schema per type,
  // which defeats its recursion guard, so a cycle of to-one relations (users ↔ profiles) would overflow.
  return { type: 'object', nullable: true, properties };
}

function ref(node: OutputNode): string {
  return `#/definitions/${node.id}`;
}

/**
 * The object form of the serializer, walking the same plan: a new plain object per row holding only
 * the visible keys, with `Date` fields already written as the serializer writes them. Lenient where
 * the serializer throws: a relation value that is not an object (or array, for to-many) is left out.
 */
export function maskWithPlan(plan: OutputPlan, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((row) => maskNode(plan.root, row) ?? null);
  return maskNode(plan.root, value) ?? null;
}

function maskNode(node: OutputNode, value: unknown): Record<string, unknown> | null | undefined {
  if (value === null) return null;
  const source = toPlain(value);
  if (!isRecord(source)) return undefined;
  const out: Record<string, unknown> = {};
  for (const field of node.fields) {
    const v = source[field.name];
    if (v !== undefined) out[field.name] = writeValue(v, field.kind);
  }
  for (const relation of node.relations) {
    const v = source[relation.name];
    if (v === undefined) continue;
    if (relation.many) {
      if (!Array.isArray(v)) continue;
      const rows: unknown[] = [];
      for (const item of v) {
        const masked = maskNode(relation.node, item);
        if (masked !== undefined) rows.push(masked);
      }
      out[relation.name] = rows;
    } else {
      const masked = maskNode(relation.node, v);
      if (masked !== undefined) out[relation.name] = masked;
    }
  }
  return out;
}

/** Entities and other wrappers expose their data through `toJSON`, as fast-json-stringify assumes too. */
function toPlain(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return (toJSON as () => unknown).call(value);
  }
  return value;
}

const two = (n: number): string => (n < 10 ? '0' : '') + n;

/** Dates as fast-json-stringify writes them: date-time in UTC, date and time in local time. */
function writeValue(value: unknown, kind: ValueKind): unknown {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) return value;
  switch (kind) {
    case 'date':
      return `${String(value.getFullYear()).padStart(4, '0')}-${two(value.getMonth() + 1)}-${two(value.getDate())}`;
    case 'time':
      return `${two(value.getHours())}:${two(value.getMinutes())}:${two(value.getSeconds())}`;
    default:
      return value.toISOString();
  }
}
