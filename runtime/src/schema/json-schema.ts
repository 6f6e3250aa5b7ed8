import type { TSchema } from 'typebox';
import type { JsonSchemaFragment } from './types.js';
import { isRecord } from './schema-info.js';

type Json = { [keyword: string]: unknown };

/**
 * A TypeBox property schema as plain JSON Schema for introspection: TypeBox markers (`~kind`,
 * `~optional`, non-enumerable) dropped, and unions written the way API readers expect:
 *   anyOf [string, null]          → { type: ["string", "null"], … }   (as ?schema=true answers it)
 *   anyOf [const "a", const "b"]  → { type: "string", enum: ["a", "b"] }
 * Anything else is kept as written, recursively normalized.
 */
export function toJsonSchema(schema: TSchema): JsonSchemaFragment {
  return normalize(plain(schema));
}

function normalize(node: Json): Json {
  const out: Json = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === 'properties' && isRecord(value)) {
      out[keyword] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isRecord(v) ? normalize(v) : v]));
    } else if ((keyword === 'items' || keyword === 'additionalProperties' || keyword === 'not') && isRecord(value)) {
      out[keyword] = normalize(value);
    } else if ((keyword === 'anyOf' || keyword === 'oneOf' || keyword === 'allOf') && Array.isArray(value)) {
      out[keyword] = value.map((v: unknown) => (isRecord(v) ? normalize(v) : v));
    } else {
      out[keyword] = value;
    }
  }
  return Array.isArray(out['anyOf']) ? collapseUnion(out) : out;
}

/** Rewrites a nullable / literal union into `type` (+ `enum`); returns `node` unchanged otherwise. */
function collapseUnion(node: Json): Json {
  const { anyOf, ...outer } = node;
  const branches = (anyOf as unknown[]).filter(isRecord);
  if (branches.length !== (anyOf as unknown[]).length) return node;
  const isNull = (b: Json): boolean => b['type'] === 'null' && Object.keys(b).length === 1;
  const nullable = branches.some(isNull);
  const rest = branches.filter((b) => !isNull(b));
  if (rest.length === 0) return node;

  const literals =
    rest.every((b) => 'const' in b && typeof b['type'] === 'string') && new Set(rest.map((b) => b['type'])).size === 1;
  if (literals) {
    const type = rest[0]!['type'] as string;
    const values = rest.map((b) => b['const']);
    return { type: nullable ? [type, 'null'] : type, enum: nullable ? [...values, null] : values, ...outer };
  }
  if (rest.length !== 1 || !nullable) return node;
  const { type, ...inner } = rest[0]!;
  if (typeof type === 'string') return { type: [type, 'null'], ...inner, ...outer };
  if (Array.isArray(type)) return { type: type.includes('null') ? type : [...type, 'null'], ...inner, ...outer };
  if (Array.isArray(inner['enum'])) return { ...inner, enum: [...inner['enum'], null], ...outer };
  return node;
}

/** A deep copy of the enumerable JSON content (drops TypeBox's non-enumerable `~` markers). */
function plain(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

const SERIALIZED_FORMATS = new Set(['date-time', 'date', 'time']);
const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/**
 * The fast-json-stringify schema for one field: only what changes how a value is written. Scalars
 * (and nullable scalars) keep `type`, and a date `format` so `Date` values become ISO strings;
 * everything else — objects, arrays, unions, enums — becomes `{}` (written with JSON.stringify), so a
 * compiled serializer never runs Ajv for `anyOf` and never throws on a union it cannot match.
 * `default`, `required` and validation keywords are dropped: a serializer fills nothing in.
 */
export function toSerializerSchema(fragment: JsonSchemaFragment): Json {
  const type = fragment['type'];
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type : [];
  if (types.length === 0 || !types.every((t) => typeof t === 'string' && SCALARS.has(t))) return {};
  const format = fragment['format'];
  const out: Json = { type };
  if (typeof format === 'string' && SERIALIZED_FORMATS.has(format) && types.includes('string')) out['format'] = format;
  return out;
}

/** How a field's value is written by `mask` (mirrors the serializer's date handling). */
export type ValueKind = 'date-time' | 'date' | 'time' | 'value';

export function valueKindOf(fragment: JsonSchemaFragment): ValueKind {
  const format = toSerializerSchema(fragment)['format'];
  return format === 'date-time' || format === 'date' || format === 'time' ? format : 'value';
}
