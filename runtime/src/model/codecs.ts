import {
  BigIntType,
  BooleanType,
  DateTimeType,
  DateType,
  DecimalType,
  DoubleType,
  FloatType,
  IntegerType,
  JsonType,
  MediumIntType,
  SmallIntType,
  TinyIntType,
  UuidType,
  type EntityProperty,
} from '@mikro-orm/core';
import { ValidationError } from '../errors.js';
import { isCalendarDate, utcDate } from './calendar.js';
import type { Dialect } from '../db/database.js';
import {
  decimalText,
  INTEGER_RANGES,
  integerProblem,
  integerRangeOf,
  textProblem,
  type IntegerRange,
  type ValueProblem,
} from './value-checks.js';
import { describeValue, invalid } from './issues.js';

/**
 * What a column holds, as far as reading and comparing go. `other` columns (blobs, times, arrays…)
 * are returned as the driver gives them and cannot be filtered or sorted on.
 */
export type ValueKind =
  | 'string'
  | 'uuid'
  | 'number'
  | 'bigint'
  | 'decimal'
  | 'boolean'
  | 'date'
  | 'datetime'
  | 'json'
  | 'other';

/** Turns a non-null driver value into the output value. */
export type Decoder = (raw: unknown) => unknown;

const BY_TYPE_NAME: Record<string, ValueKind> = {
  uuid: 'uuid',
  string: 'string',
  text: 'string',
  character: 'string',
  varchar: 'string',
  char: 'string',
  enum: 'string',
  integer: 'number',
  int: 'number',
  smallint: 'number',
  tinyint: 'number',
  mediumint: 'number',
  number: 'number',
  float: 'number',
  double: 'number',
  real: 'number',
  bigint: 'bigint',
  decimal: 'decimal',
  numeric: 'decimal',
  boolean: 'boolean',
  bool: 'boolean',
  datetime: 'datetime',
  timestamp: 'datetime',
  timestamptz: 'datetime',
  json: 'json',
  jsonb: 'json',
};

/** The kind of a scalar property, from its MikroORM type (class instance first, then the type name). */
export function kindOfProperty(prop: EntityProperty): ValueKind {
  const t = prop.customType;
  if (t instanceof DateType) return 'date';
  if (t instanceof DateTimeType) return 'datetime';
  if (t instanceof BigIntType) return 'bigint';
  if (t instanceof DecimalType) return 'decimal';
  if (t instanceof JsonType) return 'json';
  if (t instanceof UuidType) return 'uuid';
  if (t instanceof BooleanType) return 'boolean';
  if (
    t instanceof IntegerType ||
    t instanceof SmallIntType ||
    t instanceof TinyIntType ||
    t instanceof MediumIntType ||
    t instanceof FloatType ||
    t instanceof DoubleType
  )
    return 'number';
  if (prop.enum)
    return (prop.items ?? []).every((i) => typeof i === 'number') && prop.items?.length ? 'number' : 'string';
  // `Date` (capitalised) is MikroORM's datetime; a plain date always comes with DateType above.
  if (prop.type === 'Date') return 'datetime';
  const byName = BY_TYPE_NAME[String(prop.type).toLowerCase()];
  if (byName) return byName;
  switch (prop.runtimeType) {
    case 'Date':
      return 'datetime';
    case 'boolean':
      return 'boolean';
    case 'number':
      return 'number';
    case 'string':
      return 'string';
    case 'bigint':
      return 'bigint';
    default:
      return 'other';
  }
}

const asBoolean: Decoder = (v) => v === true || v === 1 || v === '1' || v === 't' || v === 'true';
const asString: Decoder = (v) => String(v);
const asJsonFromText: Decoder = (v) => (typeof v === 'string' ? JSON.parse(v) : v);
const asDate: Decoder = (v) => (v instanceof Date ? v.toISOString().slice(0, 10) : v);
const asDateTime: Decoder = (v) => {
  if (v instanceof Date) return v;
  if (typeof v === 'number') return new Date(v);
  return parseDbTimestamp(String(v));
};

/**
 * The decoder of a kind on a dialect; `undefined` means the driver value is already the output.
 * Measured: SQLite gives datetimes as epoch-ms integers, booleans as 0/1, json as text, decimals as
 * numbers; PostgreSQL (with MikroORM's type parsers) gives timestamptz as text, bigint/numeric as text.
 * bigint and decimal are returned as strings on both, so no precision is lost and both agree; a
 * decimal is written with its column's `scale` digits after the point (SQLite's 3.5 is "3.50", as
 * PostgreSQL writes it).
 */
export function decoderFor(kind: ValueKind, dialect: Dialect, scale?: number): Decoder | undefined {
  switch (kind) {
    case 'boolean':
      return asBoolean;
    case 'datetime':
      return asDateTime;
    case 'bigint':
      return asString;
    case 'decimal':
      return scale === undefined ? asString : (v) => decimalText(v, scale);
    case 'json':
      return dialect === 'sqlite' ? asJsonFromText : undefined;
    case 'date':
      return asDate;
    default:
      return undefined;
  }
}

const DB_TIMESTAMP = /^(\d{4,})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** `2026-11-26 00:47:37.72+00` (PostgreSQL text), ISO strings, or epoch-ms digits → Date. No offset means UTC. */
export function parseDbTimestamp(text: string): Date {
  if (/^-?\d+$/.test(text)) return new Date(Number(text));
  const m = DB_TIMESTAMP.exec(text);
  if (!m) return new Date(text);
  const [, y, mo, d, h, mi, s = '00', frac = '', off] = m;
  let offset = 'Z';
  if (off && off.toUpperCase() !== 'Z') {
    const digits = off.slice(1).replace(':', '');
    offset = `${off[0]}${digits.slice(0, 2)}:${digits.slice(2, 4) || '00'}`;
  }
  return new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${frac.slice(0, 4)}${offset}`);
}

const ISO_DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const INTEGER_TEXT = /^-?\d{1,40}$/;
const DECIMAL_TEXT = /^-?\d{1,40}(\.\d{1,40})?$/;

/**
 * `text` as a canonical UUID (lower case), or undefined when it is not one: 8-4-4-4-12 hexadecimal
 * digits of either case. Every id of a by-id request passes here (and in the write checks), so it is
 * a loop over the characters rather than a case-insensitive expression and `toLowerCase()`: an id
 * that is already lower case, as ids nearly always are, comes back as the same string.
 */
export function canonicalUuid(text: string): string | undefined {
  if (text.length !== 36) return undefined;
  let upper = false;
  for (let i = 0; i < 36; i++) {
    const c = text.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return undefined; // -
    } else if ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66)) {
      // 0-9, a-f
    } else if (c >= 0x41 && c <= 0x46) {
      upper = true; // A-F
    } else {
      return undefined;
    }
  }
  return upper ? text.toLowerCase() : text;
}

/** What a filter value is compared against. */
export interface ValueTarget {
  readonly kind: ValueKind;
  /** Allowed values of an enum column; checked for equality operators only. */
  readonly enumValues?: readonly (string | number)[];
  /** For an integer column: its range. */
  readonly range?: IntegerRange;
}

/** The range of a `number` or `bigint` column that holds integers; spread into its `ColumnInfo`. */
export function rangeOfColumn(kind: ValueKind, prop: EntityProperty): { range?: IntegerRange } {
  const range = kind === 'number' || kind === 'bigint' ? integerRangeOf(prop) : undefined;
  return range ? { range } : {};
}

function fail(path: string, value: unknown, expected: string): never {
  throw invalid(path, `expected ${expected}, received ${describeValue(value)}`, 'invalid_value');
}

function refuse(path: string, problem: ValueProblem | undefined): void {
  if (problem)
    throw new ValidationError(`${path}: ${problem.message}`, [
      { path, message: problem.message, reason: problem.reason },
    ]);
}

/**
 * Checks one filter value against its column and turns it into the value bound to the statement.
 * Throws a ValidationError naming `path` — never lets a value reach the database that the database
 * could reject (an invalid uuid is an error on PostgreSQL and a silent mismatch on SQLite).
 */
export function coerceValue(
  target: ValueTarget,
  value: unknown,
  path: string,
  dialect: Dialect,
  maxStringLength: number,
  checkEnum: boolean,
): unknown {
  // fail and refuse are module functions, not closures: this runs for every id and filter value.
  if (typeof value === 'string' && value.length > maxStringLength) {
    throw invalid(path, `the value has ${value.length} characters; the limit is ${maxStringLength}`, 'value_too_long');
  }
  let out: unknown;
  switch (target.kind) {
    case 'string':
      if (typeof value !== 'string') fail(path, value, 'a string');
      // No stored text holds these, and PostgreSQL refuses a parameter with U+0000.
      refuse(path, textProblem(value as string, path));
      out = value;
      break;
    case 'uuid':
      out = typeof value === 'string' ? canonicalUuid(value) : undefined;
      if (out === undefined) fail(path, value, 'a UUID such as "3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21"');
      break;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) fail(path, value, 'a number');
      // PostgreSQL reads the parameter as the column's type: a fraction or an overflow would fail there.
      if (target.range) {
        if (!Number.isInteger(value)) fail(path, value, 'an integer');
        refuse(path, integerProblem(BigInt(value as number), target.range, path));
      }
      out = value;
      break;
    case 'bigint': {
      const ok =
        typeof value === 'number' ? Number.isSafeInteger(value) : typeof value === 'string' && INTEGER_TEXT.test(value);
      if (!ok) fail(path, value, 'an integer or a string of digits');
      const n = BigInt(value as string | number);
      refuse(path, integerProblem(n, target.range ?? INTEGER_RANGES[64], path));
      // PostgreSQL casts text to bigint exactly; SQLite compares a bound BigInt as a 64-bit integer.
      out = dialect === 'postgresql' ? n.toString() : n;
      break;
    }
    case 'decimal': {
      const ok =
        typeof value === 'number' ? Number.isFinite(value) : typeof value === 'string' && DECIMAL_TEXT.test(value);
      if (!ok) fail(path, value, 'a number or a decimal string such as "12.50"');
      // PostgreSQL casts text to numeric exactly; SQLite compares numbers.
      out = dialect === 'postgresql' ? String(value) : Number(value);
      break;
    }
    case 'boolean':
      if (typeof value !== 'boolean') fail(path, value, 'true or false');
      out = value;
      break;
    case 'date':
      if (typeof value !== 'string' || !isCalendarDate(value))
        fail(path, value, 'an ISO 8601 date such as "2026-01-31" (years 0001 to 9999)');
      out = value;
      break;
    case 'datetime':
      out = typeof value === 'string' ? parseIsoDateTime(value) : undefined;
      if (out === undefined)
        fail(path, value, 'an ISO 8601 date-time such as "2026-01-31T09:30:00Z" (years 0001 to 9999)');
      break;
    default:
      return fail(path, value, 'a column that can be compared');
  }
  if (checkEnum && target.enumValues && !target.enumValues.includes(out as string | number)) {
    throw invalid(
      path,
      `expected one of ${target.enumValues.map((v) => JSON.stringify(v)).join(', ')}, received ${describeValue(value)}`,
      'invalid_value',
    );
  }
  return out;
}

/**
 * ISO 8601 date or date-time, on a calendar day of the years 0001–9999; without an offset the time is
 * UTC. Undefined when not a real instant. (A filter only compares: an offset may carry the instant
 * just outside those years.)
 */
export function parseIsoDateTime(text: string): Date | undefined {
  const m = ISO_DATETIME.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h = 0, mi = 0, s = 0] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((p) =>
    p === undefined ? undefined : Number(p),
  ) as number[];
  if (!isCalendarDate(`${m[1]}-${m[2]}-${m[3]}`) || h! > 23 || mi! > 59 || s! > 59) return undefined;
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  let time = utcDate(y!, mo! - 1, d!, h, mi, s, ms).getTime();
  const off = m[8];
  if (off && off.toUpperCase() !== 'Z') {
    const digits = off.slice(1).replace(':', '');
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4));
    if (minutes > 18 * 60) return undefined;
    time -= (off[0] === '-' ? -1 : 1) * minutes * 60_000;
  }
  return new Date(time);
}
