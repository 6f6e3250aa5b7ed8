/**
 * Row filters as the caller's context carries them: which rows of a table the caller may see or
 * change for one action, in the search syntax (docs/security.md, "Row filters"). This layer knows no
 * model: the filters are JSON here, and the search layer compiles them against the models.
 */

/**
 * A value read from the verified token on each request: `{ "$claim": "org.id" }` is the `id` key of
 * the token's `org` object. A claim the token lacks, or of the wrong type, makes its filter match no row.
 */
export interface ClaimValue {
  readonly $claim: string;
}

/** `{ field, op, value }`, where `value` may be a `ClaimValue`. */
export interface RowFilterLeaf {
  readonly field: string;
  readonly op: string;
  readonly value?: unknown;
}

/** `{ op: 'and' | 'or', items }`. */
export interface RowFilterGroup {
  readonly op: 'and' | 'or';
  readonly items: readonly RowFilterNode[];
}

export type RowFilterNode = RowFilterLeaf | RowFilterGroup;

/** The filter no row passes (an empty `or`): what a caller gets where it may see nothing. */
export const NO_ROWS: readonly RowFilterNode[] = Object.freeze([Object.freeze({ op: 'or', items: [] })]);

/**
 * The row filters of one caller, as the policies give them (see `PolicySet`). Contexts whose roles
 * filter no table have none, and cost nothing.
 */
export interface RowFilterSource {
  /**
   * The filter on the rows of `table` this caller may `action` (`view`, `listview`, `create`,
   * `update`, `delete`), with `$claim` values unresolved; null when every row. The same array is
   * returned for the same arguments.
   */
  filterFor(table: string, action: string): readonly RowFilterNode[] | null;
  /** The policies the filters come from: checked against the models once, before they are used. */
  readonly origin: object;
}

/** A `{ "$claim": "…" }` value. */
export function isClaimValue(value: unknown): value is ClaimValue {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as { $claim?: unknown }).$claim === 'string'
  );
}

/** The value at a dotted claim path, or undefined; only the claims' own keys count (never `constructor`…). */
export function readClaim(claims: Readonly<Record<string, unknown>> | undefined, path: string): unknown {
  let value: unknown = claims;
  for (const segment of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, segment))
      return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}
