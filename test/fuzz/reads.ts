/**
 * The collection routes: `GET <prefix>/` (query parameters) and `POST <prefix>/search` (a body from
 * `search.ts`), with cursors obtained from the server just before the request — as issued, altered,
 * or issued for another query — and `?schema=true`.
 */
import fc from 'fast-check';
import { compareValue } from './compare.js';
import type { Envelope } from './envelope.js';
import type { Caller, Fuzzed, HttpResponse } from './harness.js';
import {
  checkRows,
  gate,
  includeTree,
  JSON_HEADERS,
  withCaller,
  type Case,
  type Expectation,
  type IncludeTree,
} from './oracle.js';
import type { Resource } from './resources.js';
import { searchArb, type SearchSpec } from './search.js';
import { includeExpectation, includeQuery, type IncludeSpec } from './writes.js';

export type CursorKind = 'issued' | 'altered' | 'garbage' | 'foreign' | 'with_offset';

export interface ListPlan {
  readonly op: 'list';
  readonly caller: string;
  readonly resource: string;
  readonly limit?: string;
  readonly offset?: string;
  readonly cursor?: CursorKind;
  readonly include?: IncludeSpec;
  readonly schema?: string;
  /** A query parameter the route does not declare (ignored). */
  readonly extra?: string;
}

export interface SearchPlan {
  readonly op: 'search';
  readonly caller: string;
  readonly resource: string;
  readonly spec: SearchSpec;
  readonly cursor?: CursorKind;
  readonly schema?: string;
}

const cursorArb = fc
  .option(fc.constantFrom<CursorKind>('issued', 'issued', 'altered', 'garbage', 'foreign', 'with_offset'), { freq: 4 })
  .map((c) => c ?? undefined);
const schemaArb = fc.option(fc.constantFrom('true', 'false'), { freq: 8 }).map((s) => s ?? undefined);

export function listPlanArb(
  resource: Resource,
  caller: fc.Arbitrary<string>,
  include: fc.Arbitrary<IncludeSpec | undefined>,
): fc.Arbitrary<ListPlan> {
  const max = resource.limits.maxLimit;
  const limit = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max }).map(String) },
    { weight: 1, arbitrary: fc.constantFrom('0', String(max + 1), '-3', 'abc', '1.5', '99999999999999999999', '1e2') },
  );
  const offset = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 40 }).map(String) },
    { weight: 1, arbitrary: fc.constantFrom('-1', 'x', '2.5') },
  );
  return fc.record(
    {
      op: fc.constant('list' as const),
      caller,
      resource: fc.constant(resource.name),
      limit,
      offset,
      cursor: cursorArb,
      include,
      schema: schemaArb,
      extra: fc.constantFrom('foo', 'page', 'sort', 'filters'),
    },
    { requiredKeys: ['op', 'caller', 'resource'] },
  );
}

export function searchPlanArb(fz: Fuzzed, resource: Resource, caller: fc.Arbitrary<string>): fc.Arbitrary<SearchPlan> {
  return caller.chain((name) =>
    fc.record(
      {
        op: fc.constant('search' as const),
        caller: fc.constant(name),
        resource: fc.constant(resource.name),
        spec: searchArb(fz, resource, fz.caller(name)),
        cursor: cursorArb,
        schema: schemaArb,
      },
      { requiredKeys: ['op', 'caller', 'resource', 'spec'] },
    ),
  );
}

async function adminPost(fz: Fuzzed, url: string, body: unknown): Promise<Envelope | undefined> {
  const res = await fz.inject({
    method: 'POST',
    url,
    headers: withCaller(fz.caller('admin'), JSON_HEADERS),
    payload: JSON.stringify(body),
  });
  return res.status === 200 ? (JSON.parse(res.text) as Envelope) : undefined;
}

/** A next_cursor the server issued for `query` (a search body) on `resource`; undefined below two rows. */
async function issuedCursor(
  fz: Fuzzed,
  resource: Resource,
  query: Record<string, unknown>,
): Promise<string | undefined> {
  const page = await adminPost(fz, `${resource.prefix}/search`, { ...query, limit: 1 });
  const meta = page?.meta as { next_cursor?: string | null } | undefined;
  return meta?.next_cursor ?? undefined;
}

/** The same cursor with one character changed: its signature no longer holds. */
function alter(cursor: string): string {
  const i = Math.floor(cursor.length / 2);
  const c = cursor[i] === 'A' ? 'B' : 'A';
  return cursor.slice(0, i) + c + cursor.slice(i + 1);
}

interface CursorChoice {
  readonly value: string;
  readonly expect?: Expectation;
}

/** The cursor to send and, when it must be refused, how. `where`: `query.cursor` or `cursor`. */
async function chooseCursor(
  fz: Fuzzed,
  resource: Resource,
  kind: CursorKind,
  query: Record<string, unknown>,
  where: string,
): Promise<CursorChoice | undefined> {
  if (kind === 'garbage')
    return {
      value: 'AAAA',
      expect: { status: 422, why: 'the cursor was never issued', paths: [where], reasons: ['invalid_cursor'] },
    };
  const issued = await issuedCursor(fz, resource, query);
  if (!issued) return undefined;
  switch (kind) {
    case 'issued':
      return { value: issued };
    case 'altered':
      return {
        value: alter(issued),
        expect: { status: 422, why: 'the cursor was changed', paths: [where], reasons: ['invalid_cursor'] },
      };
    case 'with_offset':
      return {
        value: issued,
        expect: { status: 422, why: 'offset and cursor together', paths: [where], reasons: ['invalid_request'] },
      };
    case 'foreign': {
      const other = { filters: [{ field: 'id', op: 'isnull', value: false }], sort: [{ field: 'id', order: 'desc' }] };
      if (JSON.stringify({ filters: query.filters ?? [], sort: query.sort ?? [] }) === JSON.stringify(other))
        return undefined;
      const foreign = await issuedCursor(fz, resource, other);
      return foreign
        ? {
            value: foreign,
            expect: {
              status: 422,
              why: 'the cursor was issued for another sort and filters',
              paths: [where],
              reasons: ['cursor_mismatch'],
            },
          }
        : undefined;
    }
  }
}

/** Page checks shared by list and search. */
function verifyPage(
  fz: Fuzzed,
  resource: Resource,
  caller: Caller,
  env: Envelope,
  res: HttpResponse,
  page: {
    limit: number;
    offset: number;
    paginated: boolean;
    cursor: boolean;
    total?: number;
    includes: IncludeTree;
    isList: boolean;
  },
): string[] {
  const problems = checkRows(fz, resource, caller, env.data, page.includes, page.limit);
  const rows = Array.isArray(env.data) ? env.data : [];
  if (page.paginated) {
    const meta = env.meta as { limit?: unknown; offset?: unknown; next_cursor?: unknown; has_more?: unknown } | null;
    if (!meta || typeof meta !== 'object')
      return [...problems, 'meta: expected { limit, offset, next_cursor, has_more } for a paginated request'];
    if (meta.limit !== page.limit) problems.push(`meta.limit is ${JSON.stringify(meta.limit)}, expected ${page.limit}`);
    const wantOffset = page.cursor ? null : page.offset;
    if (meta.offset !== wantOffset)
      problems.push(`meta.offset is ${JSON.stringify(meta.offset)}, expected ${JSON.stringify(wantOffset)}`);
    if (typeof meta.has_more !== 'boolean') problems.push('meta.has_more is not a boolean');
    if (meta.has_more === true && typeof meta.next_cursor !== 'string')
      problems.push('meta.has_more without a next_cursor');
    if (meta.has_more === false && meta.next_cursor !== null) problems.push('meta.next_cursor without has_more');
    if (page.total !== undefined && !page.cursor && meta.has_more !== page.offset + rows.length < page.total)
      problems.push(`meta.has_more is ${String(meta.has_more)} with ${page.total} rows in all`);
  } else {
    if (env.meta !== null)
      problems.push(`meta is ${JSON.stringify(env.meta)}, expected null without pagination parameters`);
    const link = res.headers['link'];
    if (
      page.isList &&
      page.total !== undefined &&
      page.total > page.limit !== (typeof link === 'string' && /rel="next"/.test(link))
    ) {
      problems.push(`Link: ${String(link)} with ${page.total} rows and a page of ${page.limit}`);
    }
  }
  if (page.total !== undefined && !page.cursor) {
    const want = Math.max(0, Math.min(page.limit, page.total - page.offset));
    if (rows.length !== want)
      problems.push(
        `${rows.length} rows, expected ${want} (${page.total} in all, offset ${page.offset}, limit ${page.limit})`,
      );
  }
  return problems;
}

/**
 * At most one fault per request: the engine checks a query's parts in an order of its own, so when
 * several are wrong the answer would depend on it. The first faulty part is kept; the others become
 * valid (or absent).
 */
function oneFault(fz: Fuzzed, resource: Resource, caller: Caller, plan: ListPlan): ListPlan {
  const intOk = (v: string | undefined, min: number, max: number): boolean =>
    v === undefined || (v !== '' && Number.isInteger(Number(v)) && Number(v) >= min && Number(v) <= max);
  const faults = [
    !intOk(plan.limit, 1, resource.limits.maxLimit),
    !intOk(plan.offset, 0, Number.MAX_SAFE_INTEGER),
    includeExpectation(fz, caller, resource, plan.include) !== undefined,
    plan.cursor !== undefined && plan.cursor !== 'issued',
  ];
  const first = faults.indexOf(true);
  if (first < 0) return plan;
  const { limit, offset, include, cursor, ...rest } = plan;
  return {
    ...rest,
    ...(first === 0 ? { limit } : faults[0] || limit === undefined ? {} : { limit }),
    ...(first === 1 ? { offset } : faults[1] || offset === undefined ? {} : { offset }),
    ...(first === 2 ? { include } : faults[2] || include === undefined ? {} : { include }),
    ...(first === 3 ? { cursor } : faults[3] || cursor === undefined ? {} : { cursor }),
  } as ListPlan;
}

export async function prepareList(fz: Fuzzed, drawn: ListPlan): Promise<Case> {
  const resource = fz.resource(drawn.resource);
  const caller = fz.caller(drawn.caller);
  const plan = oneFault(fz, resource, caller, drawn);
  const query = new URLSearchParams();
  if (plan.limit !== undefined) query.set('limit', plan.limit);
  if (plan.offset !== undefined && (plan.cursor === undefined || plan.cursor === 'with_offset'))
    query.set('offset', plan.offset);
  const include = includeQuery(plan.include);
  if (include !== undefined) query.set('include', include);
  if (plan.schema !== undefined) query.set('schema', plan.schema);
  if (plan.extra) query.set(plan.extra, '1');
  const cursor = plan.cursor ? await chooseCursor(fz, resource, plan.cursor, {}, 'query.cursor') : undefined;
  if (cursor) query.set('cursor', cursor.value);
  if (plan.cursor === 'with_offset' && !query.has('offset')) query.set('offset', '0');
  const label = `list${plan.cursor && cursor ? ` cursor:${plan.cursor}` : ''}${plan.include ? ` include:${plan.include.kind}` : ''}${plan.schema === 'true' ? ' ?schema=true' : ''}`;
  const request = { method: 'GET', url: `${resource.prefix}/?${query.toString()}`, headers: withCaller(caller) };
  const expect = await (async (): Promise<Expectation> => {
    // Route validation (before the guard): Fastify coerces an integer-valued string such as `1e2`.
    for (const name of ['limit', 'offset'] as const) {
      const value = query.get(name);
      if (value !== null && !(value !== '' && Number.isInteger(Number(value))))
        return { status: 422, why: `${name}=${value} is not an integer`, paths: [`query.${name}`] };
    }
    const denied = gate(caller, resource, 'listview');
    if (denied) return denied;
    if (plan.schema === 'true' && resource.exposeSchemas) {
      const expected = resource.out.jsonSchema(caller.context);
      return {
        status: 200,
        why: 'introspection',
        verify: (_r, env) =>
          JSON.stringify(env.data) === JSON.stringify(expected)
            ? []
            : ['data is not the output schema the caller is shown'],
      };
    }
    // The search engine: page bounds first, then the include paths, then the cursor itself.
    const limit = query.has('limit') ? Number(query.get('limit')) : resource.limits.defaultLimit;
    if (!(limit >= 1 && limit <= resource.limits.maxLimit))
      return {
        status: 422,
        why: `limit ${query.get('limit')} is outside 1..${resource.limits.maxLimit}`,
        paths: ['query.limit'],
        reasons: ['invalid_limit'],
      };
    const offset = query.has('offset') ? Number(query.get('offset')) : 0;
    if (offset < 0)
      return {
        status: 422,
        why: `offset ${query.get('offset')} is negative`,
        paths: ['query.offset'],
        reasons: ['invalid_offset'],
      };
    if (cursor?.expect && plan.cursor === 'with_offset') return cursor.expect;
    const bad = includeExpectation(fz, caller, resource, plan.include);
    if (bad) return bad;
    if (cursor?.expect) return cursor.expect;
    const total = await fz.count(resource);
    const includes = includeTree(plan.include?.kind === 'paths' ? plan.include.paths : []);
    const paginated = ['limit', 'offset', 'cursor'].some((k) => query.has(k));
    return {
      status: 200,
      why: 'a valid list request',
      verify: (res, env) =>
        verifyPage(fz, resource, caller, env, res, {
          limit,
          offset,
          paginated,
          cursor: cursor !== undefined,
          total,
          includes,
          isList: true,
        }),
    };
  })();
  return { label, request, expect };
}

export async function prepareSearch(fz: Fuzzed, plan: SearchPlan): Promise<Case> {
  const resource = fz.resource(plan.resource);
  const caller = fz.caller(plan.caller);
  let body = plan.spec.body;
  let cursor: CursorChoice | undefined;
  if (plan.cursor && !plan.spec.fault && typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const { limit: _l, offset: _o, ...query } = body as Record<string, unknown>;
    cursor = await chooseCursor(fz, resource, plan.cursor, { filters: query.filters, sort: query.sort }, 'cursor');
    if (cursor) body = { ...query, ...(plan.cursor === 'with_offset' ? { offset: 0 } : {}), cursor: cursor.value };
  }
  const url = `${resource.prefix}/search${plan.schema ? `?schema=${plan.schema}` : ''}`;
  const request = { method: 'POST', url, headers: withCaller(caller, JSON_HEADERS), payload: JSON.stringify(body) };
  const label = `search${plan.spec.fault ? `: ${plan.spec.fault.label}` : ''}${cursor ? ` cursor:${plan.cursor}` : ''}${plan.schema === 'true' ? ' ?schema=true' : ''}`;
  const expect = await (async (): Promise<Expectation> => {
    const denied = gate(caller, resource, 'listview');
    if (denied) return denied;
    if (plan.schema === 'true' && resource.exposeSchemas)
      return {
        status: 200,
        why: 'introspection',
        verify: (_r, env) =>
          (env.data as { title?: string })?.title === 'SearchRequest' ? [] : ['data is not the SearchRequest schema'],
      };
    const fault = plan.spec.fault;
    if (fault) return { status: fault.status, why: fault.label, paths: [fault.path], reasons: fault.reasons };
    if (cursor?.expect) return cursor.expect;
    const b = body as Record<string, unknown>;
    const limit = typeof b.limit === 'number' ? b.limit : resource.limits.defaultLimit;
    const offset = typeof b.offset === 'number' ? b.offset : 0;
    const filtered = Array.isArray(b.filters) && b.filters.length > 0;
    const total = filtered ? undefined : await fz.count(resource);
    const paginated = ['limit', 'offset', 'cursor'].some((k) => b[k] !== undefined);
    const includes = includeTree((b.include as string[] | undefined) ?? []);
    return {
      status: 200,
      why: 'a valid search for this caller',
      verify: (res, env) => [
        ...verifyPage(fz, resource, caller, env, res, {
          limit,
          offset,
          paginated,
          cursor: cursor !== undefined,
          ...(total === undefined ? {} : { total }),
          includes,
          isList: false,
        }),
        ...checkMatches(resource, (b.filters as unknown[] | undefined) ?? [], env.data),
      ],
    };
  })();
  return { label, request, expect };
}

/** Rows must satisfy the top-level `eq` and `isnull` filters on the resource's own fields. */
function checkMatches(resource: Resource, filters: unknown[], data: unknown): string[] {
  if (!Array.isArray(data)) return [];
  const problems: string[] = [];
  for (const [i, f] of filters.entries()) {
    const leaf = f as { field?: string; op?: string; value?: unknown };
    const field = resource.fields.get(leaf.field ?? '');
    if (!field || !['string', 'text', 'uuid', 'integer', 'boolean', 'enum', 'date', 'bigint'].includes(field.kind))
      continue;
    const isNull =
      leaf.op === 'isnull' ? leaf.value === true : leaf.op === 'eq' && leaf.value === null ? true : undefined;
    for (const row of data.slice(0, 25) as Record<string, unknown>[]) {
      if (!(field.name in row)) continue;
      const v = row[field.name];
      if (isNull !== undefined) {
        if ((v === null) !== isNull)
          problems.push(
            `data: a row with ${field.name} = ${JSON.stringify(v)} matched filters[${i}] (${leaf.op} ${JSON.stringify(leaf.value)})`,
          );
      } else if (leaf.op === 'eq') {
        const value = field.kind === 'bigint' && typeof leaf.value === 'number' ? String(leaf.value) : leaf.value;
        if (compareValue(field, value, v))
          problems.push(
            `data: a row with ${field.name} = ${JSON.stringify(v)} matched filters[${i}] (eq ${JSON.stringify(leaf.value)})`,
          );
      }
    }
  }
  return problems;
}
