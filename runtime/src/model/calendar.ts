/**
 * The years a `date` or `datetime` may fall in: 0001 to 9999 on both databases. PostgreSQL has no
 * year 0 (its year before 1 is 1 BC, which it reads back in a form no client expects) and SQLite
 * would store one as text; a year past 9999 has no four-digit RFC 3339 form to answer with. So a
 * value outside those years is a 422 naming the field, the same on both databases.
 *
 * Request schemas state the rule as a `pattern` beside the `date` / `date-time` format (see
 * schema/calendar-years.ts), so `?schema=true` and the OpenAPI document say what is accepted, and the
 * write path checks it again for values that do not come through a schema.
 */
import type { ValueProblem } from './value-checks.js';

export const FIRST_YEAR = 1;
export const LAST_YEAR = 9999;

/** Beside `format: 'date'`: no year 0000 (the format already asks for four digits). */
export const DATE_YEARS_PATTERN = '^(?!0000)';

/**
 * Beside `format: 'date-time'`: no year 0000, and no offset that moves the instant out of the years
 * 0001–9999 — on 0001-01-01 an offset east of UTC (`+01:00`), on 9999-12-31 one west of it (`-01:00`).
 * `Z`, `+00:00` and `-00:00` are accepted on both days. Checking the offset on those two days
 * whatever the time keeps the rule a plain pattern any JSON Schema validator can apply.
 */
export const DATE_TIME_YEARS_PATTERN = '^(?!0000)(?!0001-01-01[Tt][^+]*\\+(?!00:00))(?!9999-12-31[Tt][^-]*-(?!00:00))';

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar day `YYYY-MM-DD` (no 2026-02-30) in the years 0001–9999. */
export function isCalendarDate(text: string): boolean {
  const m = CALENDAR_DATE.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < FIRST_YEAR) return false;
  return sameDay(utcDate(y, mo - 1, d), y, mo - 1, d);
}

/**
 * The instant of a UTC calendar time. `Date.UTC` reads the years 0–99 as 1900–1999, so the year is
 * set on its own.
 */
export function utcDate(
  year: number,
  monthIndex: number,
  day: number,
  hours = 0,
  minutes = 0,
  seconds = 0,
  ms = 0,
): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hours, minutes, seconds, ms);
  return date;
}

function sameDay(date: Date, y: number, mo: number, d: number): boolean {
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo && date.getUTCDate() === d;
}

/** Why a `date` value (`YYYY-MM-DD`) cannot be stored, if it cannot. */
export function dateProblem(text: string, what: string): ValueProblem | undefined {
  if (isCalendarDate(text)) return undefined;
  if (CALENDAR_DATE.test(text) && text.startsWith('0000')) return outOfYears(what);
  return { reason: 'format', message: `${what} must be a calendar day written YYYY-MM-DD, such as 2026-01-31` };
}

/** Why an instant cannot be stored as a `datetime`, if it cannot: its UTC year is outside 0001–9999. */
export function instantProblem(date: Date, what: string): ValueProblem | undefined {
  const year = date.getUTCFullYear();
  return year >= FIRST_YEAR && year <= LAST_YEAR ? undefined : outOfYears(what);
}

function outOfYears(what: string): ValueProblem {
  return {
    reason: 'out_of_range',
    message: `${what} is outside the years 0001 to 9999 (in UTC), which both databases store`,
  };
}
