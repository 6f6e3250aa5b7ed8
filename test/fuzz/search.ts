/**
 * `POST <prefix>/search` bodies: filter trees up to the depth limit over the fields and relation
 * paths the output schema has (operators and values chosen per field type), sorts, includes and
 * pagination — each request valid for its caller, or with one fault whose refusal (status, path,
 * reason) is known when it is drawn. A restricted field or relation is a fault only for callers it
 * is restricted for (403); everything the search body may not contain is 422.
 */
import fc from 'fast-check';
import { unstorable } from './bodies.js';
import { instantOf } from './compare.js';
import type { Caller, Fuzzed } from './harness.js';
import { fieldPaths, isRestricted, MAX_HOPS, relationPaths, type PathInfo } from './paths.js';
import type { FieldKind, Resource } from './resources.js';
import { dateArb, dateTimeArb, INT32, textArb } from './values.js';

export const MAX_DEPTH = 3;
const MAX_NODES = 64;
const MAX_IN_LIST = 500;
const MAX_STRING = 1024;
const MAX_SORT_KEYS = 5;
const MAX_INCLUDES = 8;

export interface SearchFault {
  readonly label: string;
  readonly status: 403 | 422;
  /** The detail path the refusal names (or a prefix of it). */
  readonly path: string;
  readonly reasons: readonly string[];
}

export interface SearchSpec {
  readonly body: unknown;
  readonly fault?: SearchFault;
}

type Leaf = { field: string; op: string; value?: unknown };
type Node = Leaf | { op: 'and' | 'or'; items: Node[] };

const STRING_OPS = ['like', 'ilike', 'contains', 'startswith', 'endswith'];
const ORDER_OPS = ['gt', 'gte', 'lt', 'lte'];

function opsFor(kind: FieldKind): string[] {
  const base = ['eq', 'ne', 'in', 'nin', 'isnull'];
  if (kind === 'string' || kind === 'text') return [...base, ...ORDER_OPS, ...STRING_OPS];
  if (kind === 'boolean' || kind === 'enum') return base;
  return [...base, ...ORDER_OPS];
}

/** A real calendar day, any year from 1 to 9999. */
export function isCalendarDay(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  return y >= 1 && date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const danglingEscape = (s: string): boolean => /(^|[^\\])(\\\\)*\\$/.test(s);

function scalarArb(kind: FieldKind, enumValues: readonly unknown[]): fc.Arbitrary<unknown> {
  switch (kind) {
    case 'string':
    case 'text':
      return textArb(0, 20).filter((s) => !unstorable(s));
    case 'uuid':
      return fc.uuid();
    case 'integer':
      return fc.oneof(fc.integer({ min: -5, max: 5 }), fc.integer({ min: INT32.min, max: INT32.max }));
    case 'float':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'bigint':
      return fc.oneof(fc.integer(), fc.stringMatching(/^-?\d{1,18}$/));
    case 'decimal':
      return fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.stringMatching(/^-?\d{1,8}(\.\d{1,4})?$/));
    case 'boolean':
      return fc.boolean();
    case 'date':
      return dateArb.filter(isCalendarDay);
    case 'datetime':
      return dateTimeArb.filter((t) => isCalendarDay(t.slice(0, 10)) && instantOf(t) !== undefined);
    case 'enum':
      return fc.constantFrom(...enumValues.filter((v) => v !== null));
    case 'json':
      return fc.constant(null);
  }
}

interface FieldPath extends PathInfo {
  readonly kind: FieldKind;
  readonly enumValues: readonly unknown[];
  readonly nullable: boolean;
}

function describePaths(fz: Fuzzed, resource: Resource): FieldPath[] {
  const admin = fz.caller('admin');
  return fieldPaths(fz, resource, 2).flatMap((p) => {
    const name = p.path.split('.').at(-1)!;
    const field = p.end.fields.get(name);
    if (!field) return [];
    const schema = fz.doc(p.end, 'out', admin).properties?.[name];
    return [{ ...p, kind: field.kind, enumValues: schema?.enum ?? [], nullable: field.nullable }];
  });
}

function leafArb(paths: readonly FieldPath[]): fc.Arbitrary<Leaf> {
  return fc.constantFrom(...paths).chain((p) =>
    fc.constantFrom(...opsFor(p.kind)).chain((op): fc.Arbitrary<Leaf> => {
      const one = scalarArb(p.kind, p.enumValues).filter(
        (v) => !(STRING_OPS.includes(op) && typeof v === 'string' && danglingEscape(v)),
      );
      if (op === 'isnull') return fc.boolean().map((value) => ({ field: p.path, op, value }));
      if (op === 'in' || op === 'nin')
        return fc.array(one, { maxLength: 4 }).map((value) => ({ field: p.path, op, value }));
      if (op === 'eq' || op === 'ne') return fc.option(one, { freq: 6 }).map((value) => ({ field: p.path, op, value }));
      return one.map((value) => ({ field: p.path, op, value }));
    }),
  );
}

function treeArb(leaf: fc.Arbitrary<Leaf>): fc.Arbitrary<Node[]> {
  // `maxDepth` bounds the nesting by construction (past it only leaves are drawn): a filter on the
  // depth would let a rare, huge draw stall generation.
  const { node } = fc.letrec<{ node: Node; group: Node }>((tie) => ({
    node: fc.oneof({ maxDepth: MAX_DEPTH, depthIdentifier: 'filters', withCrossShrink: true }, leaf, tie('group')),
    group: fc.record({
      op: fc.constantFrom('and' as const, 'or' as const),
      items: fc.array(tie('node'), { maxLength: 3, depthIdentifier: 'filters' }),
    }),
  }));
  return fc
    .array(node, { maxLength: 3 })
    .filter(
      (nodes) => nodes.every((n) => depthOf(n) <= MAX_DEPTH) && nodes.reduce((n, x) => n + countOf(x), 0) <= MAX_NODES,
    );
}

function countOf(node: Node): number {
  return 'items' in node ? 1 + node.items.reduce((n, x) => n + countOf(x), 0) : 1;
}

function depthOf(node: Node): number {
  return 'items' in node ? 1 + Math.max(0, ...node.items.map(depthOf)) : 0;
}

/** `project.id` and `project_id` name one column (as do `a.b.id` and `a.b_id`): one sort key. */
function sortKey(root: Resource, path: string, fz: Fuzzed): string {
  const hops = path.split('.');
  if (hops.length < 2 || hops.at(-1) !== 'id') return path;
  let resource: Resource | undefined = root;
  for (const hop of hops.slice(0, -2))
    resource = resource && fz.resources.get(resource.relations.get(hop)?.target ?? '');
  const relation = hops.at(-2)!;
  return resource?.fields.has(`${relation}_id`) ? [...hops.slice(0, -2), `${relation}_id`].join('.') : path;
}

const nested = (levels: number, leaf: Leaf): Node =>
  levels === 0 ? leaf : { op: levels % 2 ? 'and' : 'or', items: [nested(levels - 1, leaf)] };

export function searchArb(fz: Fuzzed, resource: Resource, caller: Caller): fc.Arbitrary<SearchSpec> {
  const all = describePaths(fz, resource);
  const hidden = (p: string): boolean => isRestricted(fz, caller, resource, p.split('.'));
  const visible = all.filter((p) => p.kind !== 'json' && !hidden(p.path));
  const sortable = visible.filter((p) => !p.crossesMany);
  const includes = relationPaths(fz, resource, 2).map((p) => p.path);
  const visibleIncludes = includes.filter((p) => !hidden(p));
  const leaf = visible.length ? leafArb(visible) : fc.constant<Leaf>({ field: 'id', op: 'isnull', value: false });
  const { maxLimit } = resource.limits;

  const valid = fc.record(
    {
      filters: visible.length ? treeArb(leaf) : fc.constant([]),
      sort: sortable.length
        ? fc
            .uniqueArray(fc.constantFrom(...sortable), { maxLength: 3, selector: (p) => sortKey(resource, p.path, fz) })
            .chain((ps) =>
              fc.tuple(
                ...ps.map((p) =>
                  fc
                    .option(fc.constantFrom('asc', 'desc'), { freq: 2 })
                    .map((order) => (order ? { field: p.path, order } : { field: p.path })),
                ),
              ),
            )
        : fc.constant([]),
      include: visibleIncludes.length ? fc.subarray(visibleIncludes, { maxLength: 3 }) : fc.constant([]),
      limit: fc.integer({ min: 1, max: maxLimit }),
      offset: fc.integer({ min: 0, max: 30 }),
    },
    { requiredKeys: [] },
  );

  const fault = (
    label: string,
    status: 403 | 422,
    path: string,
    reasons: string[],
    edit: (body: Record<string, unknown>) => void,
  ): fc.Arbitrary<SearchSpec> =>
    valid.map((body) => {
      const copy = structuredClone(body) as Record<string, unknown>;
      edit(copy);
      return { body: copy, fault: { label, status, path, reasons } };
    });
  const firstFilter = (node: Node) => (b: Record<string, unknown>) => {
    b.filters = [node, ...((b.filters as Node[] | undefined) ?? [])];
  };
  const faults: fc.Arbitrary<SearchSpec>[] = [];
  const stringPaths = visible.filter((p) => p.kind === 'string' || p.kind === 'text');
  const orderless = visible.filter((p) => p.kind === 'boolean');
  const nonString = visible.filter((p) => !['string', 'text', 'enum'].includes(p.kind));

  faults.push(
    fc
      .constantFrom('nope', 'Title', 'id.x', 'a..b', 'password')
      .filter((f) => !all.some((p) => p.path === f))
      .chain((f) =>
        fault(
          'unknown filter field',
          422,
          'filters[0].field',
          ['unknown_field', 'unknown_relation'],
          firstFilter({ field: f, op: 'eq', value: 'x' }),
        ),
      ),
  );
  faults.push(
    fc
      .constantFrom('regex', 'EQ', 'between', 'not', '', 'and')
      .chain((op) =>
        fault(
          'unknown operator',
          422,
          'filters[0]',
          ['unknown_operator', 'invalid_request', 'required'],
          firstFilter({ field: 'id', op, value: 'x' }),
        ),
      ),
  );
  faults.push(
    fc
      .constantFrom(MAX_DEPTH + 1, MAX_DEPTH + 3)
      .chain((levels) =>
        fault(
          'filters nested too deep',
          422,
          'filters[0]',
          ['max_depth'],
          firstFilter(nested(levels, { field: 'id', op: 'isnull', value: false })),
        ),
      ),
  );
  faults.push(
    fault('too many filter nodes', 422, 'filters', ['too_many_filters'], (b) => {
      b.filters = Array.from({ length: MAX_NODES + 1 }, () => ({ field: 'id', op: 'isnull', value: false }));
    }),
  );
  faults.push(
    fc
      .constantFrom('where', 'filter', 'page', 'fields')
      .chain((key) => fault('unknown key', 422, key, ['invalid_request'], (b) => void (b[key] = []))),
  );
  faults.push(
    fc
      .constantFrom(0, -1, maxLimit + 1, 1.5, '10', null)
      .chain((limit) => fault('bad limit', 422, 'limit', ['invalid_limit'], (b) => void (b.limit = limit))),
  );
  faults.push(
    fc
      .constantFrom(-1, 0.5, '3', null)
      .chain((offset) => fault('bad offset', 422, 'offset', ['invalid_offset'], (b) => void (b.offset = offset))),
  );
  faults.push(
    fc
      .constantFrom('up', 'ASC', '', 1)
      .chain((order) =>
        fault('bad sort order', 422, 'sort[0]', ['invalid_request'], (b) => void (b.sort = [{ field: 'id', order }])),
      ),
  );
  faults.push(
    fault(
      'too many sort keys',
      422,
      'sort',
      ['too_many_sort_keys'],
      (b) => void (b.sort = Array.from({ length: MAX_SORT_KEYS + 1 }, () => ({ field: 'id' }))),
    ),
  );
  faults.push(
    fault(
      'duplicate sort key',
      422,
      'sort[1]',
      ['invalid_sort'],
      (b) => void (b.sort = [{ field: 'id' }, { field: 'id', order: 'desc' }]),
    ),
  );
  faults.push(
    fc
      .constantFrom('nope', 'Project', '')
      .chain((name) =>
        fault(
          'unknown include',
          422,
          'include[0]',
          ['unknown_relation', 'unknown_field', 'invalid_request'],
          (b) => void (b.include = [name]),
        ),
      ),
  );
  if (visibleIncludes.length) {
    faults.push(
      fault(
        'too many includes',
        422,
        'include',
        ['too_many_includes'],
        (b) =>
          void (b.include = Array.from(
            { length: MAX_INCLUDES + 1 },
            (_, i) => visibleIncludes[i % visibleIncludes.length],
          )),
      ),
    );
  }
  const deep = relationPaths(fz, resource, MAX_HOPS + 1)
    .filter((p) => p.path.split('.').length > MAX_HOPS)
    .map((p) => p.path);
  if (deep.length) {
    faults.push(
      fc
        .constantFrom(...deep)
        .chain((p) => fault('include too deep', 422, 'include[0]', ['path_too_deep'], (b) => void (b.include = [p]))),
    );
    faults.push(
      fc
        .constantFrom(...deep)
        .chain((p) =>
          fault(
            'filter path too deep',
            422,
            'filters[0].field',
            ['path_too_deep'],
            firstFilter({ field: `${p}.id`, op: 'isnull', value: false }),
          ),
        ),
    );
  }
  const many = all.filter((p) => p.crossesMany && !hidden(p.path));
  if (many.length)
    faults.push(
      fc
        .constantFrom(...many)
        .chain((p) =>
          fault('sort on a to-many path', 422, 'sort[0]', ['invalid_sort'], (b) => void (b.sort = [{ field: p.path }])),
        ),
    );
  const json = all.filter((p) => p.kind === 'json' && !hidden(p.path) && !p.crossesMany);
  if (json.length)
    faults.push(
      fc
        .constantFrom(...json)
        .chain((p) =>
          fault('sort on a json field', 422, 'sort[0]', ['invalid_sort'], (b) => void (b.sort = [{ field: p.path }])),
        ),
    );
  if (stringPaths.length) {
    const p = fc.constantFrom(...stringPaths);
    faults.push(
      fc
        .tuple(p, fc.constantFrom('eq', 'contains', 'in'))
        .chain(([path, op]) =>
          fc
            .constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfff')
            .chain((bad) =>
              fault(
                'unstorable string value',
                422,
                'filters[0].value',
                ['invalid_value', 'invalid_character'],
                firstFilter({ field: path.path, op, value: op === 'in' ? [bad] : bad }),
              ),
            ),
        ),
    );
    faults.push(
      p.chain((path) =>
        fault(
          'string value too long',
          422,
          'filters[0].value',
          ['value_too_long'],
          firstFilter({ field: path.path, op: 'eq', value: 'x'.repeat(MAX_STRING + 1) }),
        ),
      ),
    );
    faults.push(
      p.chain((path) =>
        fault(
          'wrong value type',
          422,
          'filters[0].value',
          ['invalid_value'],
          firstFilter({ field: path.path, op: 'eq', value: 12 }),
        ),
      ),
    );
    faults.push(
      p.chain((path) =>
        fault(
          'pattern ends with a lone backslash',
          422,
          'filters[0].value',
          ['invalid_value'],
          firstFilter({ field: path.path, op: 'like', value: 'ab\\' }),
        ),
      ),
    );
  }
  if (nonString.length) {
    faults.push(
      fc
        .tuple(fc.constantFrom(...nonString), fc.constantFrom(...STRING_OPS))
        .chain(([path, op]) =>
          fault(
            'string operator on a non-text field',
            422,
            'filters[0].op',
            ['invalid_operator'],
            firstFilter({ field: path.path, op, value: 'a' }),
          ),
        ),
    );
    faults.push(
      fc
        .constantFrom(...nonString)
        .chain((path) =>
          fault(
            'wrong value type',
            422,
            'filters[0].value',
            ['invalid_value'],
            firstFilter({ field: path.path, op: 'eq', value: path.kind === 'boolean' ? 'true' : { a: 1 } }),
          ),
        ),
    );
  }
  if (orderless.length) {
    faults.push(
      fc
        .constantFrom(...orderless)
        .chain((path) =>
          fault(
            'ordering a boolean',
            422,
            'filters[0].op',
            ['invalid_operator'],
            firstFilter({ field: path.path, op: 'gt', value: true }),
          ),
        ),
    );
  }
  faults.push(
    fault(
      'too many values',
      422,
      'filters[0].value',
      ['too_many_values'],
      firstFilter({
        field: 'id',
        op: 'in',
        value: Array.from(
          { length: MAX_IN_LIST + 1 },
          (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        ),
      }),
    ),
  );
  faults.push(
    fault(
      'null in a value list',
      422,
      'filters[0].value',
      ['invalid_value'],
      firstFilter({ field: 'id', op: 'in', value: [null] }),
    ),
  );
  faults.push(
    fc
      .constantFrom<unknown>([], 'x', 3, [{}])
      .chain((body) =>
        fc.constant<SearchSpec>({ body, fault: { label: 'body not an object', status: 422, path: '', reasons: [] } }),
      ),
  );

  const restrictedFields = all.filter((p) => hidden(p.path));
  if (restrictedFields.length) {
    faults.push(
      fc
        .constantFrom(...restrictedFields)
        .chain((path) =>
          fault(
            'restricted filter field',
            403,
            'filters[0].field',
            ['restricted'],
            firstFilter({ field: path.path, op: 'isnull', value: true }),
          ),
        ),
    );
  }
  const restrictedSorts = restrictedFields.filter((p) => !p.crossesMany && p.kind !== 'json');
  if (restrictedSorts.length) {
    faults.push(
      fc
        .constantFrom(...restrictedSorts)
        .chain((path) =>
          fault(
            'restricted sort field',
            403,
            'sort[0].field',
            ['restricted'],
            (b) => void (b.sort = [{ field: path.path }]),
          ),
        ),
    );
  }
  const restrictedIncludes = includes.filter(hidden);
  if (restrictedIncludes.length) {
    faults.push(
      fc
        .constantFrom(...restrictedIncludes)
        .chain((path) =>
          fault('restricted include', 403, 'include[0]', ['restricted'], (b) => void (b.include = [path])),
        ),
    );
  }
  return fc.oneof(
    { weight: 3, arbitrary: valid.map((body): SearchSpec => ({ body })) },
    { weight: 2, arbitrary: fc.oneof(...faults) },
  );
}
