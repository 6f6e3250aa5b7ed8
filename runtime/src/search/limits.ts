/**
 * Caps that bound the work one search request can ask for. Every cap is checked before any SQL is
 * built, so an oversized request costs a walk over its JSON and nothing else.
 */
export interface SearchLimits {
  /** Filter nodes (leaves and groups together) in one request. */
  maxFilterNodes: number;
  /** Elements of an `in` / `nin` list. */
  maxInList: number;
  /** Characters of one string filter value (a LIKE pattern, an id…). */
  maxStringLength: number;
  /** Sort rules in one request (the primary-key tiebreaker is added on top). */
  maxSortKeys: number;
  /** Include paths in one request. */
  maxIncludes: number;
  /** Relation hops in one dot-path (`comments.author.name` has two). */
  maxPathDepth: number;
  /** Rows one to-many include may load for one page; more is a ValidationError asking for a smaller page. */
  maxIncludedRows: number;
  /** Page size when the request names none. */
  defaultLimit: number;
  /** Largest page size a request may ask for. */
  maxLimit: number;
}

export const DEFAULT_SEARCH_LIMITS: Readonly<SearchLimits> = Object.freeze({
  maxFilterNodes: 64,
  maxInList: 500,
  maxStringLength: 1024,
  maxSortKeys: 5,
  maxIncludes: 8,
  maxPathDepth: 3,
  maxIncludedRows: 10_000,
  defaultLimit: 50,
  maxLimit: 500,
});

/** Fills the defaults and checks the result; a bad configuration is a programming error, thrown at construction. */
export function resolveSearchLimits(partial: Partial<SearchLimits> = {}): Readonly<SearchLimits> {
  const limits: SearchLimits = { ...DEFAULT_SEARCH_LIMITS };
  for (const [name, value] of Object.entries(partial) as [keyof SearchLimits, unknown][]) {
    if (value === undefined) continue;
    if (!(name in DEFAULT_SEARCH_LIMITS)) {
      throw new Error(`Unknown search limit "${name}": use one of ${Object.keys(DEFAULT_SEARCH_LIMITS).join(', ')}`);
    }
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new Error(`Search limit "${name}" must be a positive integer, got ${String(value)}`);
    }
    limits[name] = value;
  }
  if (limits.defaultLimit > limits.maxLimit) {
    throw new Error(`Search limit defaultLimit (${limits.defaultLimit}) is above maxLimit (${limits.maxLimit}): lower it or raise maxLimit`);
  }
  return Object.freeze(limits);
}

const limitKeys = new WeakMap<Readonly<SearchLimits>, string>();

/**
 * A short key for a resolved limits object. Compiled shapes embed checks made at compile time (path
 * depth, string lengths in bind slots), so engines configured differently must not share them.
 */
export function limitsKey(limits: Readonly<SearchLimits>): string {
  let key = limitKeys.get(limits);
  if (key === undefined) {
    key = Object.values(limits).join(',');
    limitKeys.set(limits, key);
  }
  return key;
}
