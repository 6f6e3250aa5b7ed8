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
  /**
   * Tables the filters' relation paths add to the statement: each to-one join once (leaves on the
   * same path share it), and for each leaf through a to-many relation the tables of its own `exists`
   * subquery (a many-to-many one reads the pivot too), with the to-one joins and the related row
   * scope inside it; subqueries nested in that one are not counted. PostgreSQL's planning time grows
   * much faster than linearly with these tables (search/README.md, "Limits").
   */
  maxJoins: number;
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
  maxJoins: 24,
  maxIncludedRows: 10_000,
  defaultLimit: 50,
  maxLimit: 500,
});

const LIMIT_NAMES = Object.keys(DEFAULT_SEARCH_LIMITS) as (keyof SearchLimits)[];

/**
 * Resolved limits, shared: equal configurations get one frozen object, so an engine created per
 * request neither allocates its limits nor recomputes their key. Bounded, in case limits are computed
 * per request; past the bound, objects are still correct, only not shared.
 */
const MAX_SHARED = 64;
const shared: Readonly<SearchLimits>[] = [];
/** Short keys (`L0`, `L1`, …) of shared limits, and the values key of any other limits object. */
const keys = new WeakMap<Readonly<SearchLimits>, string>();

/** The value `partial` asks for, or the default; unchecked. */
function requested(partial: Partial<SearchLimits>, name: keyof SearchLimits): unknown {
  const value = partial[name];
  return value === undefined ? DEFAULT_SEARCH_LIMITS[name] : value;
}

/** The shared limits equal to `partial` filled with defaults; they were checked when first shared. */
function findShared(partial: Partial<SearchLimits>): Readonly<SearchLimits> | undefined {
  next: for (const candidate of shared) {
    for (const name of LIMIT_NAMES) if (candidate[name] !== requested(partial, name)) continue next;
    return candidate;
  }
  return undefined;
}

/** Fills the defaults and checks the result; a bad configuration is a programming error, thrown at construction. */
export function resolveSearchLimits(partial: Partial<SearchLimits> = {}): Readonly<SearchLimits> {
  let empty = true;
  for (const name in partial) {
    if ((partial as Record<string, unknown>)[name] === undefined) continue;
    if (!(name in DEFAULT_SEARCH_LIMITS))
      throw new Error(`Unknown search limit "${name}": use one of ${LIMIT_NAMES.join(', ')}`);
    empty = false;
  }
  if (empty) return DEFAULT_SEARCH_LIMITS;
  const known = findShared(partial);
  if (known) return known;
  const limits = {} as SearchLimits;
  for (const name of LIMIT_NAMES) {
    const value = requested(partial, name);
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new Error(`Search limit "${name}" must be a positive integer, got ${String(value)}`);
    }
    limits[name] = value;
  }
  if (limits.defaultLimit > limits.maxLimit) {
    throw new Error(
      `Search limit defaultLimit (${limits.defaultLimit}) is above maxLimit (${limits.maxLimit}): lower it or raise maxLimit`,
    );
  }
  return share(limits);
}

function share(limits: Readonly<SearchLimits>): Readonly<SearchLimits> {
  const frozen = Object.freeze(limits);
  if (shared.length < MAX_SHARED) {
    keys.set(frozen, `L${shared.length}`);
    shared.push(frozen);
  }
  return frozen;
}

share(DEFAULT_SEARCH_LIMITS);

/**
 * A short key for a limits object; equal limits give equal keys. Compiled shapes embed checks made at
 * compile time (path depth, string lengths in bind slots), so engines configured differently must
 * not share them.
 */
export function limitsKey(limits: Readonly<SearchLimits>): string {
  let key = keys.get(limits);
  if (key === undefined) {
    const known = findShared(limits);
    // Not shared (built by hand, or past the bound): the values themselves, which never look like `L<n>`.
    key = (known && keys.get(known)) ?? LIMIT_NAMES.map((name) => limits[name]).join(',');
    keys.set(limits, key);
  }
  return key;
}
