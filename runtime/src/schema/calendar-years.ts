import type { TSchema } from 'typebox';
import { DATE_TIME_YEARS_PATTERN, DATE_YEARS_PATTERN } from '../model/calendar.js';

const PATTERNS: Readonly<Record<string, string>> = { date: DATE_YEARS_PATTERN, 'date-time': DATE_TIME_YEARS_PATTERN };

/**
 * `schema` with every `date` and `date-time` string in it bounded to the years both databases store
 * (0001–9999, see data/calendar.ts) by a `pattern` beside its format: in a union (`date | null`) and
 * in array items too. The formats alone accept year 0000, which PostgreSQL cannot store. The same
 * schema validates bodies, answers `?schema=true` and fills the OpenAPI document, so what is published
 * is what is checked. A string that declares a pattern of its own keeps it (the write path still
 * refuses a year outside the range). Unchanged schemas are returned as they are; a changed one is a
 * copy that keeps TypeBox's own markers (`~optional`), so it validates and defaults as the original.
 */
export function withCalendarYears(schema: TSchema): TSchema {
  return bound(schema) as TSchema;
}

function bound(node: unknown): unknown {
  if (!isRecord(node)) return node;
  const changes: Record<string, unknown> = {};
  const pattern = typeof node['format'] === 'string' ? PATTERNS[node['format']] : undefined;
  if (pattern !== undefined && node['pattern'] === undefined && allowsString(node['type']))
    changes['pattern'] = pattern;
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = node[keyword];
    if (!Array.isArray(branches)) continue;
    const next = branches.map(bound);
    if (next.some((b, i) => b !== branches[i])) changes[keyword] = next;
  }
  if (isRecord(node['items'])) {
    const items = bound(node['items']);
    if (items !== node['items']) changes['items'] = items;
  }
  if (Object.keys(changes).length === 0) return node;
  const copy = Object.create(Object.getPrototypeOf(node) as object, Object.getOwnPropertyDescriptors(node)) as Record<
    string,
    unknown
  >;
  for (const [keyword, value] of Object.entries(changes)) {
    Object.defineProperty(copy, keyword, { value, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function allowsString(type: unknown): boolean {
  return type === 'string' || (Array.isArray(type) && type.includes('string'));
}
