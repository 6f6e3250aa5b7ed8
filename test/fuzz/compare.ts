/**
 * What a stored value looks like when it comes back, per field type: the documented wire forms.
 * Text of any code point comes back as sent; a bigint as its digits without leading zeros; a
 * decimal with exactly its scale's digits; a date-time as the same instant in UTC with
 * milliseconds; a uuid in any case; json as the same document (object key order aside).
 */
import type { FieldInfo } from './resources.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch of an RFC 3339 date-time (fractions below a millisecond cut off). */
export function instantOf(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, ms);
  let time = date.getTime();
  const off = m[8]!;
  if (off.toUpperCase() !== 'Z')
    time -= (off[0] === '-' ? -1 : 1) * (Number(off.slice(1, 3)) * 60 + Number(off.slice(4, 6))) * 60_000;
  return time;
}

/** `"-007.5"` with scale 2 → `"-7.50"`; `"-0"` → `"0.00"`. */
export function decimalText(value: string, scale: number): string {
  const negative = value.startsWith('-');
  const [int = '0', frac = ''] = value.replace(/^-/, '').split('.');
  const digits =
    (int.replace(/^0+(?=\d)/, '') || '0') + (scale > 0 ? `.${frac.padEnd(scale, '0').slice(0, scale)}` : '');
  return negative && /[1-9]/.test(digits) ? `-${digits}` : digits;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a))
    return a.length === (b as unknown[]).length && a.every((x, i) => sameJson(x, (b as unknown[])[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.hasOwn(b as object, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  );
}

/** Undefined when `actual` is how `sent` (an accepted input value) must come back; else why not. */
export function compareValue(field: FieldInfo | undefined, sent: unknown, actual: unknown): string | undefined {
  const show = (v: unknown): string => {
    const text = JSON.stringify(v) ?? String(v);
    return text.length > 80 ? `${text.slice(0, 77)}…` : text;
  };
  const differ = (): string => `expected ${show(sent)}, got ${show(actual)}`;
  if (sent === null || actual === null) return sent === actual ? undefined : differ();
  switch (field?.kind) {
    case 'uuid':
      return typeof actual === 'string' && actual.toLowerCase() === String(sent).toLowerCase() ? undefined : differ();
    case 'bigint':
      return typeof actual === 'string' &&
        /^-?\d+$/.test(actual) &&
        BigInt(actual) === BigInt(sent as string) &&
        actual === BigInt(actual).toString()
        ? undefined
        : differ();
    case 'decimal': {
      const want = decimalText(String(sent), field.scale ?? 2);
      return actual === want
        ? undefined
        : `expected ${show(want)} (the value written with ${field.scale ?? 2} decimals), got ${show(actual)}`;
    }
    case 'datetime': {
      if (typeof actual !== 'string' || !ISO_MS.test(actual))
        return `expected an ISO 8601 UTC date-time with milliseconds, got ${show(actual)}`;
      const want = instantOf(String(sent));
      const got = Date.parse(actual);
      // Below the millisecond PostgreSQL rounds microseconds where the wire value truncates.
      return want !== undefined && Math.abs(got - want) <= 1 ? undefined : differ();
    }
    case 'json':
      return sameJson(sent, actual) ? undefined : differ();
    case 'float':
      return actual === sent ? undefined : differ();
    default:
      return actual === sent ? undefined : differ();
  }
}
