import type { ValidationError } from '../errors.js';
import { describeValue, invalid } from '../model/issues.js';
import type { SearchLimits } from './limits.js';
import {
  FILTER_OPERATORS,
  type FilterLeaf,
  type FilterNode,
  type FilterOperator,
  type SortRule,
} from './search-request.js';
import { bucketSize } from './sql-text.js';

/** A leaf and its JSON path, in depth-first order — the order the compiled statement binds values in. */
export interface LeafRef {
  readonly node: FilterLeaf;
  readonly path: string;
}

/**
 * A request whose structure has been checked: every bound of `SearchLimits` holds, groups nest no
 * deeper than `maxDepth`, every operator is known. `key` identifies its *shape* — everything that
 * decides the SQL text (fields, operators, value kinds, `in` size classes, sort, includes) and
 * nothing that is only bound as a parameter — so requests of one shape share one compiled statement.
 */
export interface AnalyzedRequest {
  readonly key: string;
  readonly filters: readonly FilterNode[];
  readonly leaves: readonly LeafRef[];
  readonly sort: readonly Required<SortRule>[];
  readonly include: readonly IncludeRef[];
  readonly limit: number | undefined;
  readonly offset: number | undefined;
  readonly cursor: string | undefined;
}

export interface AnalyzeOptions {
  readonly maxDepth: number;
  readonly limits: Readonly<SearchLimits>;
  /** Identity of the handler registered under a field name, if any (part of the shape). */
  readonly handlerId: (field: string) => number | undefined;
}

const OPERATORS: ReadonlySet<string> = new Set(FILTER_OPERATORS);
const REQUEST_KEYS: ReadonlySet<string> = new Set(['filters', 'include', 'sort', 'limit', 'offset', 'cursor']);
/**
 * A cursor carries the sort values of the last row, and a sort on a long text column makes it as long
 * as that value: any cursor the server issues must come back, so the only bound is one no request body
 * reaches (bodies are capped at 1 MiB before parsing).
 */
const MAX_CURSOR_LENGTH = 2 * 1024 * 1024;
/** Field and include paths are names, not data: longer than this is not a path of any model. */
const MAX_NAME_LENGTH = 256;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An absent key the request needs, at `<path>.<key>`, with the reason `required` that input
 * validation uses for missing fields too.
 */
function missing(path: string, key: string, what: string): ValidationError {
  return invalid(`${path}.${key}`, `'${key}' is required: ${what}`, 'required');
}

/** Checks the structure and bounds of a request without looking at the model. Throws ValidationError. */
export function analyzeRequest(request: unknown, options: AnalyzeOptions): AnalyzedRequest {
  const body = request ?? {};
  if (!isObject(body)) {
    throw invalid(
      'body',
      `expected a search object { filters, include, sort, limit, offset, cursor }, received ${describeValue(body)}`,
      'invalid_request',
    );
  }
  for (const key of Object.keys(body)) {
    if (!REQUEST_KEYS.has(key) && body[key] !== undefined) {
      throw invalid(
        key,
        `unknown key '${key}'; a search request has filters, include, sort, limit, offset and cursor`,
        'invalid_request',
      );
    }
  }
  const { limits } = options;
  const walker = new FilterWalker(options);
  const filters = body.filters ?? [];
  if (!Array.isArray(filters))
    throw invalid(
      'filters',
      `expected an array of filter nodes, received ${describeValue(filters)}`,
      'invalid_request',
    );
  const filterKey = filters.map((node, i) => walker.node(node, `filters[${i}]`, 0)).join(',');

  const sort = analyzeSort(body.sort, limits);
  const include = analyzeIncludes(body.include, 'include', limits);
  const limit = body.limit;
  if (
    limit !== undefined &&
    (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > limits.maxLimit)
  ) {
    throw invalid(
      'limit',
      `expected an integer from 1 to ${limits.maxLimit}, received ${describeValue(limit)}`,
      'invalid_limit',
    );
  }
  const offset = body.offset;
  if (offset !== undefined && (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0)) {
    throw invalid('offset', `expected an integer of 0 or more, received ${describeValue(offset)}`, 'invalid_offset');
  }
  const cursor = body.cursor;
  if (cursor !== undefined && (typeof cursor !== 'string' || cursor === '' || cursor.length > MAX_CURSOR_LENGTH)) {
    throw invalid('cursor', 'expected the next_cursor string of a previous page', 'invalid_cursor');
  }
  if (cursor !== undefined && offset !== undefined) {
    throw invalid(
      'cursor',
      'send either offset or cursor, not both: a cursor already says where the page starts',
      'invalid_request',
    );
  }
  return {
    key: `F[${filterKey}]S[${sort.map((r) => `${JSON.stringify(r.field)}:${r.order}`).join(',')}]I${JSON.stringify(include.map((i) => i.path))}`,
    filters: filters as FilterNode[],
    leaves: walker.leaves,
    sort,
    include,
    limit: limit as number | undefined,
    offset: offset as number | undefined,
    cursor: cursor as string | undefined,
  };
}

class FilterWalker {
  readonly leaves: LeafRef[] = [];
  private count = 0;
  constructor(private readonly options: AnalyzeOptions) {}

  /** Returns the shape key of one node; `depth` is the number of groups above it. */
  node(node: unknown, path: string, depth: number): string {
    const { limits, maxDepth } = this.options;
    if (!isObject(node)) {
      throw invalid(
        path,
        `expected a filter { field, op, value } or a group { op: 'and' | 'or', items }, received ${describeValue(node)}`,
        'invalid_request',
      );
    }
    if (++this.count > limits.maxFilterNodes) {
      throw invalid(
        path,
        `the request has more than ${limits.maxFilterNodes} filter nodes; combine values with 'in' or split the search`,
        'too_many_filters',
      );
    }
    const op = node.op;
    if (op === undefined) {
      throw missing(
        path,
        'op',
        node.items !== undefined
          ? "a group's op is 'and' or 'or'"
          : `a filter is { field, op, value } with op one of ${FILTER_OPERATORS.join(', ')}`,
      );
    }
    if (op === 'and' || op === 'or') {
      if (depth + 1 > maxDepth) {
        throw invalid(path, `groups nest ${depth + 1} levels deep here; the limit is ${maxDepth}`, 'max_depth');
      }
      const items = node.items;
      if (items === undefined)
        throw missing(path, 'items', `a group { op: '${op}', items } needs the array of filters it combines`);
      if (!Array.isArray(items))
        throw invalid(
          `${path}.items`,
          `expected an array of filter nodes, received ${describeValue(items)}`,
          'invalid_request',
        );
      return `${op}(${items.map((item, i) => this.node(item, `${path}.items[${i}]`, depth + 1)).join(',')})`;
    }
    if (typeof op !== 'string' || !OPERATORS.has(op)) {
      const hint =
        node.items !== undefined ? "; a group's op is 'and' or 'or'" : `; use one of ${FILTER_OPERATORS.join(', ')}`;
      throw invalid(`${path}.op`, `unknown operator ${describeValue(op)}${hint}`, 'unknown_operator');
    }
    const field = node.field;
    if (field === undefined) throw missing(path, 'field', 'the column, relation path or handler name to filter on');
    if (typeof field !== 'string' || field === '' || field.length > MAX_NAME_LENGTH) {
      throw invalid(`${path}.field`, `expected a field name, received ${describeValue(field)}`, 'invalid_request');
    }
    const value = node.value;
    if (Array.isArray(value) && value.length > limits.maxInList) {
      throw invalid(
        `${path}.value`,
        `the list has ${value.length} values; the limit is ${limits.maxInList}`,
        'too_many_values',
      );
    }
    this.leaves.push({ node: node as unknown as FilterLeaf, path });
    const handler = this.options.handlerId(field);
    const tag = handler !== undefined ? `h${handler}` : valueTag(op as FilterOperator, value);
    return `${JSON.stringify(field)}${op}:${tag}`;
  }
}

/**
 * The part of a value that changes the SQL: null-ness (`eq null` is `is null`), the isnull flag,
 * and an `in` list's size class. Other values are bound as parameters and checked at bind time.
 */
export function valueTag(op: FilterOperator, value: unknown): string {
  if (op === 'isnull') return value === true ? 'T' : value === false ? 'F' : 'x';
  if (value === null) return 'n';
  if (value === undefined) return 'u';
  if (Array.isArray(value)) return `a${bucketSize(value.length)}`;
  switch (typeof value) {
    case 'string':
      return 's';
    case 'number':
      return 'd';
    case 'boolean':
      return 'b';
    default:
      return 'o';
  }
}

function analyzeSort(sort: unknown, limits: Readonly<SearchLimits>): Required<SortRule>[] {
  if (sort === undefined) return [];
  if (!Array.isArray(sort))
    throw invalid('sort', `expected an array of { field, order }, received ${describeValue(sort)}`, 'invalid_request');
  if (sort.length > limits.maxSortKeys) {
    throw invalid(
      'sort',
      `the request sorts on ${sort.length} keys; the limit is ${limits.maxSortKeys}`,
      'too_many_sort_keys',
    );
  }
  return sort.map((rule: unknown, i) => {
    const path = `sort[${i}]`;
    if (!isObject(rule))
      throw invalid(path, `expected { field, order }, received ${describeValue(rule)}`, 'invalid_request');
    const { field, order = 'asc' } = rule;
    if (field === undefined) throw missing(path, 'field', 'the column or to-one relation path to sort on');
    if (typeof field !== 'string' || field === '' || field.length > MAX_NAME_LENGTH) {
      throw invalid(`${path}.field`, `expected a field name, received ${describeValue(field)}`, 'invalid_request');
    }
    if (order !== 'asc' && order !== 'desc') {
      throw invalid(`${path}.order`, `expected 'asc' or 'desc', received ${describeValue(order)}`, 'invalid_request');
    }
    return { field, order };
  });
}

/** One include path and where it was in the request (for error details). */
export interface IncludeRef {
  readonly path: string;
  readonly jsonPath: string;
}

/** Checks an include list; duplicates collapse onto their first occurrence. */
export function analyzeIncludes(include: unknown, jsonPath: string, limits: Readonly<SearchLimits>): IncludeRef[] {
  if (include === undefined) return [];
  if (!Array.isArray(include))
    throw invalid(
      jsonPath,
      `expected an array of relation paths, received ${describeValue(include)}`,
      'invalid_request',
    );
  if (include.length > limits.maxIncludes) {
    throw invalid(
      jsonPath,
      `the request includes ${include.length} paths; the limit is ${limits.maxIncludes}`,
      'too_many_includes',
    );
  }
  const seen = new Set<string>();
  const refs: IncludeRef[] = [];
  include.forEach((path: unknown, i) => {
    if (typeof path !== 'string' || path === '' || path.length > MAX_NAME_LENGTH) {
      throw invalid(
        `${jsonPath}[${i}]`,
        `expected a relation path such as 'comments.author', received ${describeValue(path)}`,
        'invalid_request',
      );
    }
    if (!seen.has(path)) {
      seen.add(path);
      refs.push({ path, jsonPath: `${jsonPath}[${i}]` });
    }
  });
  return refs;
}
