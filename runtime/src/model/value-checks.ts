/**
 * What a value must be for both databases to store it exactly, and how a stored number is written
 * back. Writes (`WritePlan`) and search filters check values here first, so a value a database
 * would reject, truncate or round is a 422 naming the field, never a 500 or a silent change:
 *
 * - text: U+0000 cannot be stored by PostgreSQL (`text`, `jsonb`) and an unpaired UTF-16 surrogate is
 *   not Unicode (both drivers would store U+FFFD instead); both are refused on both databases, in
 *   plain strings and in every string and key of a JSON value. Every other code point is stored as is;
 * - integers: a column's range (32 bits for `integer`, 64 for `bigint`), never a wrap or a rounding;
 * - decimals: at most the column's digits before the point and its scale after it (PostgreSQL would
 *   round the rest away), and on SQLite, which keeps a decimal as a double, at most 15 significant
 *   digits, the most a double holds exactly.
 */
import { plainNumberText } from '../util/numbers.js';
import {
  BigIntType,
  DecimalType,
  IntegerType,
  MediumIntType,
  SmallIntType,
  TinyIntType,
  type EntityProperty,
} from '@mikro-orm/core';
import type { Dialect } from '../db/database.js';

export type ValueReason = 'invalid_character' | 'out_of_range' | 'too_precise' | 'format';

export interface ValueProblem {
  readonly reason: ValueReason;
  /** Names the rule and where in the value it failed, never the value itself. */
  readonly message: string;
}

/**
 * The first character of `text` a database would not store as sent: U+0000 or an unpaired
 * surrogate. `what` names the value in the message (`title`, `a key of settings`).
 */
export function textProblem(text: string, what: string): ValueProblem | undefined {
  // Both checks are native scans; the loop below only runs to describe a problem.
  if (text.indexOf('\u0000') === -1 && (text as unknown as { isWellFormed(): boolean }).isWellFormed())
    return undefined;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) {
      return {
        reason: 'invalid_character',
        message: `${what} contains U+0000 (NUL) at character ${i}, which the database cannot store; remove it`,
      };
    }
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    } else if (unit < 0xdc00 || unit > 0xdfff) {
      continue;
    }
    const code = unit.toString(16).toUpperCase();
    return {
      reason: 'invalid_character',
      message: `${what} contains an unpaired surrogate (U+${code}) at character ${i}, which is not Unicode text; send the whole character (a surrogate pair) or remove it`,
    };
  }
  return undefined;
}

/**
 * The first string or object key of a JSON value that `textProblem` refuses, with its path below
 * `path` (`settings.tags[2]`). Walked with a stack of its own: a deeply nested body cannot overflow
 * the call stack here.
 */
export function jsonProblem(value: unknown, path: string): { path: string; problem: ValueProblem } | undefined {
  const stack: [unknown, string][] = [[value, path]];
  while (stack.length > 0) {
    const [node, at] = stack.pop()!;
    if (typeof node === 'string') {
      const problem = textProblem(node, at);
      if (problem) return { path: at, problem };
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${at}[${i}]`]);
    } else if (node !== null && typeof node === 'object') {
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const problem = textProblem(key, `a key of ${at}`);
        if (problem) return { path: at, problem };
        stack.push([child, `${at}.${key}`]);
      }
    }
  }
  return undefined;
}

/** The values an integer column holds. */
export interface IntegerRange {
  readonly bits: 16 | 32 | 64;
  readonly min: bigint;
  readonly max: bigint;
}

/** Integer ranges by width; a bigint column without metadata (a foreign key) is 64 bits. */
export const INTEGER_RANGES = {
  16: { bits: 16, min: -(2n ** 15n), max: 2n ** 15n - 1n },
  32: { bits: 32, min: -(2n ** 31n), max: 2n ** 31n - 1n },
  64: { bits: 64, min: -(2n ** 63n), max: 2n ** 63n - 1n },
} as const satisfies Record<number, IntegerRange>;

const BITS_BY_TYPE_NAME: Record<string, 16 | 32 | 64> = {
  tinyint: 16,
  smallint: 16,
  int2: 16,
  integer: 32,
  int: 32,
  int4: 32,
  mediumint: 32,
  bigint: 64,
  int8: 64,
};

/**
 * The range of an integer property, as PostgreSQL stores it (`integer` 32 bits, `bigint` 64, a
 * tiny or small int 16); undefined for anything else. SQLite keeps every integer in 64 bits, but the
 * same range applies there, so a value valid on one database is valid on the other.
 */
export function integerRangeOf(prop: EntityProperty): IntegerRange | undefined {
  const t = prop.customType;
  if (t instanceof BigIntType) return INTEGER_RANGES[64];
  if (t instanceof SmallIntType || t instanceof TinyIntType) return INTEGER_RANGES[16];
  if (t instanceof IntegerType || t instanceof MediumIntType) return INTEGER_RANGES[32];
  if (t || prop.enum) return undefined;
  const bits = BITS_BY_TYPE_NAME[String(prop.type).toLowerCase()];
  return bits ? INTEGER_RANGES[bits] : undefined;
}

/** Out of range for `range`, with the range in the message. */
export function integerProblem(value: bigint, range: IntegerRange, what: string): ValueProblem | undefined {
  if (value >= range.min && value <= range.max) return undefined;
  return {
    reason: 'out_of_range',
    message: `${what} is outside the range of a ${range.bits}-bit integer (${range.min} to ${range.max})`,
  };
}

/** Significant digits SQLite keeps of a number it stores (it keeps decimals as doubles). */
export const SQLITE_DECIMAL_DIGITS = 15;

/** What a decimal column holds: undefined parts are not limited. */
export interface DecimalSpec {
  readonly precision: number | undefined;
  readonly scale: number | undefined;
  /** Significant digits the database keeps exactly (SQLite); undefined where it keeps them all. */
  readonly significant: number | undefined;
}

export function decimalSpecOf(prop: EntityProperty, dialect: Dialect): DecimalSpec | undefined {
  if (!(prop.customType instanceof DecimalType) && !['decimal', 'numeric'].includes(String(prop.type).toLowerCase()))
    return undefined;
  return {
    precision: typeof prop.precision === 'number' ? prop.precision : undefined,
    scale: typeof prop.scale === 'number' ? prop.scale : undefined,
    significant: dialect === 'sqlite' ? SQLITE_DECIMAL_DIGITS : undefined,
  };
}

const DECIMAL_TEXT = /^-?(\d+)(?:\.(\d+))?$/;

/**
 * Why `text` (`-?digits(.digits)?`) does not fit `spec`, if it does not: more digits before the
 * point than `precision − scale` allows, a digit other than 0 past the scale (a database would round
 * it away), or more significant digits than the database keeps. Call with text matching
 * `isDecimalText`.
 */
export function decimalProblem(text: string, spec: DecimalSpec, what: string): ValueProblem | undefined {
  const m = DECIMAL_TEXT.exec(text)!;
  const whole = m[1]!.replace(/^0+/, '');
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  const { precision, scale } = spec;
  if (precision !== undefined && whole.length > precision - (scale ?? 0)) {
    const allowed = precision - (scale ?? 0);
    return {
      reason: 'out_of_range',
      message: `${what} has ${whole.length} digits before the point; the column (numeric(${precision}, ${scale ?? 0})) holds at most ${allowed}`,
    };
  }
  if (scale !== undefined && fraction.length > scale) {
    return {
      reason: 'too_precise',
      message: `${what} has ${fraction.length} digits after the point; the column keeps ${scale}, and a value is never rounded`,
    };
  }
  if (spec.significant !== undefined) {
    const digits = (whole + fraction).replace(/^0+/, '').replace(/0+$/, '').length;
    if (digits > spec.significant) {
      return {
        reason: 'too_precise',
        message: `${what} has ${digits} significant digits; SQLite keeps a decimal exactly up to ${spec.significant}, and a value is never rounded`,
      };
    }
  }
  return undefined;
}

export function isDecimalText(text: string): boolean {
  return DECIMAL_TEXT.test(text);
}

/**
 * A stored decimal as wire text with exactly `scale` digits after the point (`3.5` → `"3.50"`, `0` →
 * `"0.00"`), whatever form the driver gives: PostgreSQL's text (already at the scale), SQLite's
 * number or integer. Digits past the scale are kept, never rounded (a value written before the
 * column's scale was narrowed).
 */
export function decimalText(raw: unknown, scale: number | undefined): string {
  const text = typeof raw === 'number' ? plainNumberText(raw) : String(raw);
  if (scale === undefined || !DECIMAL_TEXT.test(text)) return text;
  const point = text.indexOf('.');
  const have = point === -1 ? 0 : text.length - point - 1;
  if (have >= scale) return text;
  if (point === -1) return `${text}.${'0'.repeat(scale)}`;
  return text + '0'.repeat(scale - have);
}
