/**
 * Size of `decimal` fields: the manifest's optional `precision` (total digits) and `scale` (digits after
 * the point), the column `numeric(precision, scale)`, and the text a body may send for it.
 */

/** `numeric(12, 2)`: amounts up to 9,999,999,999.99, enough for most money columns. */
export const DECIMAL_DEFAULTS = { precision: 12, scale: 2 } as const;

/**
 * The largest `precision` a manifest may ask for. 38 digits is the most SQL Server and Oracle accept
 * and what a 128-bit decimal holds; PostgreSQL would take up to 1000, but a manifest capped at 38 stays
 * portable across MikroORM's drivers, and every value it allows stays within the 40 digits a search
 * filter accepts for a decimal column.
 */
export const MAX_DECIMAL_PRECISION = 38;

export interface DecimalSize {
  readonly precision: number;
  readonly scale: number;
}

/** The field's size: its own `precision` and `scale`, each defaulting on its own to `DECIMAL_DEFAULTS`. */
export function decimalSize(spec: { readonly precision?: number; readonly scale?: number }): DecimalSize {
  return { precision: spec.precision ?? DECIMAL_DEFAULTS.precision, scale: spec.scale ?? DECIMAL_DEFAULTS.scale };
}

/**
 * The JSON Schema `pattern` of a decimal's wire text: an optional minus, at most `precision − scale`
 * integer digits (a lone `0` when that is none), then at most `scale` digits after a point (no point
 * when the scale is 0). `numeric(12, 2)` gives `^-?\d{1,10}(\.\d{1,2})?$`.
 */
export function decimalPattern({ precision, scale }: DecimalSize): string {
  const integerDigits = precision - scale;
  const integer = integerDigits > 0 ? `\\d{1,${integerDigits}}` : '0';
  const fraction = scale > 0 ? `(\\.\\d{1,${scale}})?` : '';
  return `^-?${integer}${fraction}$`;
}

/** `numeric(5, 2)`: how sizes are named in messages and docs. */
export function describeDecimal({ precision, scale }: DecimalSize): string {
  return `numeric(${precision}, ${scale})`;
}

/** What `decimalPattern` allows, in words: "at most 3 digits before the point and 2 after". */
export function decimalRule({ precision, scale }: DecimalSize): string {
  const digits = (n: number) => `${n} digit${n === 1 ? '' : 's'}`;
  const integerDigits = precision - scale;
  if (scale === 0) return `at most ${digits(precision)} and no fraction`;
  if (integerDigits === 0) return `0 before the point and at most ${digits(scale)} after`;
  return `at most ${digits(integerDigits)} before the point and ${scale} after`;
}
