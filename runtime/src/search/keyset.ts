import type { SortKey } from './sort-compiler.js';

/** A keyset predicate's text for one null pattern, and which key feeds each placeholder. */
export interface KeysetSql {
  readonly sql: string;
  readonly order: readonly number[];
}

/**
 * "Rows strictly after the cursor row" in the order of `keys`, for cursor values with the null pattern
 * `mask` (bit i set = value i is NULL). Built as the nested form
 *
 *   after(i) = gt(i) or (eq(i) and after(i + 1)),   after(last) = gt(last)
 *
 * with NULL as the lowest value (NULLS FIRST in asc, NULLS LAST in desc — see compileSort):
 *
 *   asc,  value v:    gt = col > v              eq = col = v
 *   asc,  value NULL: gt = col is not null      eq = col is null
 *   desc, value v:    gt = col < v [or col is null, if nullable]
 *   desc, value NULL: gt = (nothing: NULLs come last)   eq = col is null
 *
 * The last key is the unique tiebreaker, so the predicate is a strict total order.
 */
export function buildKeyset(keys: readonly SortKey[], mask: number): KeysetSql {
  const order: number[] = [];
  const build = (i: number): string => {
    const key = keys[i]!;
    const isNull = (mask & (1 << i)) !== 0;
    let gt: string | null;
    if (key.desc) {
      if (isNull) gt = null;
      else {
        order.push(i);
        gt = key.nullable ? `(${key.expr} < ? or ${key.expr} is null)` : `${key.expr} < ?`;
      }
    } else if (isNull) gt = `${key.expr} is not null`;
    else {
      order.push(i);
      gt = `${key.expr} > ?`;
    }
    if (i === keys.length - 1) return gt ?? '1 = 0';
    let eq: string;
    if (isNull) eq = `${key.expr} is null`;
    else {
      order.push(i);
      eq = `${key.expr} = ?`;
    }
    const rest = `${eq} and ${build(i + 1)}`;
    return gt === null ? `(${rest})` : `(${gt} or (${rest}))`;
  };
  return { sql: build(0), order };
}

/** The null pattern of cursor values (bit i set = value i is NULL). */
export function nullMask(values: readonly unknown[]): number {
  let mask = 0;
  values.forEach((v, i) => {
    if (v === null) mask |= 1 << i;
  });
  return mask;
}
