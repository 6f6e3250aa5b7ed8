/**
 * Works around MikroORM 6.6.16 deciding whether a decimal property changed by comparing both values
 * as JavaScript numbers rounded to the scale (`DecimalType.compareValues`): two decimals that differ
 * past a double's 15–17 significant digits compare equal, and an update from one to the other is
 * silently left out of the flush (numeric(38, 10): …4567890 → …4567891 is never written). Here two
 * decimals are equal when their digits are, whatever the trailing zeros ("3.5" and "3.50") or the
 * form (3.5 and "3.5"). Remove when MikroORM compares decimals exactly.
 */
import { DecimalType } from '@mikro-orm/core';
import { plainNumberText } from '../util/numbers.js';

let applied = false;

export function applyDecimalCompareFix(): void {
  if (applied) return;
  applied = true;
  DecimalType.prototype.compareValues = function compareValues(a: unknown, b: unknown): boolean {
    if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
    return canonical(a) === canonical(b);
  };
}

const DECIMAL = /^(-?)0*(\d*?)(?:\.(\d*?)0*)?$/;

/** `-007.500` → `-7.5`, `0.0` → `0`: one spelling per value. Anything else is compared as text. */
function canonical(value: unknown): string {
  const text = typeof value === 'number' ? plainNumberText(value) : String(value);
  const m = DECIMAL.exec(text);
  if (!m) return text;
  const whole = m[2] || '0';
  const fraction = m[3] ?? '';
  const digits = fraction ? `${whole}.${fraction}` : whole;
  return digits === '0' ? '0' : `${m[1]}${digits}`;
}
