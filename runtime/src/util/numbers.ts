/**
 * A finite number as plain decimal text, without an exponent: the shortest digits that read back as
 * the same double (`0.1`, not `0.1000000000000000055`), so a decimal of up to 15 significant digits
 * comes back as it was written.
 */
export function plainNumberText(value: number): string {
  const text = String(value);
  const e = text.indexOf('e');
  if (e === -1) return text;
  const negative = text.startsWith('-');
  const mantissa = text.slice(negative ? 1 : 0, e);
  const exponent = Number(text.slice(e + 1));
  const point = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  const pointAt = (point === -1 ? mantissa.length : point) + exponent;
  let out: string;
  if (pointAt <= 0) out = `0.${'0'.repeat(-pointAt)}${digits}`;
  else if (pointAt >= digits.length) out = digits + '0'.repeat(pointAt - digits.length);
  else out = `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
  return negative ? `-${out}` : out;
}
