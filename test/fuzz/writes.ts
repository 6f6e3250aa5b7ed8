/**
 * The by-id and write routes: create, view, replace, patch, delete (and `?schema=true` on those that
 * expose it). A request names an existing row (read from the database when it is sent) or a random
 * id; a body comes from `bodies.ts`. The expectation follows the order the server works in: the
 * guard, introspection, body validation, related rows, the row itself, unique values.
 */
import fc from 'fast-check';
import { bodyArb, classifyBody, resolveBody, type BodySpec, type WriteMode } from './bodies.js';
import { compareValue } from './compare.js';
import type { Envelope } from './envelope.js';
import type { Caller, Fuzzed, HttpResponse } from './harness.js';
import {
  checkRow,
  gate,
  includeTree,
  JSON_HEADERS,
  withCaller,
  type Action,
  type Case,
  type Expectation,
} from './oracle.js';
import { isRestricted, MAX_HOPS, relationPaths } from './paths.js';
import type { Resource } from './resources.js';

export type Target =
  | { readonly kind: 'existing'; readonly pick: number; readonly upper: boolean }
  | { readonly kind: 'random'; readonly id: string };

export type IncludeSpec =
  | { readonly kind: 'paths'; readonly paths: readonly string[] }
  | { readonly kind: 'unknown'; readonly name: string }
  | { readonly kind: 'too_deep'; readonly path: string };

export interface WritePlan {
  readonly op: 'create' | 'view' | 'replace' | 'patch' | 'delete';
  readonly caller: string;
  readonly resource: string;
  readonly target: Target;
  readonly body?: BodySpec;
  readonly include?: IncludeSpec;
  /** `?schema=<value>`: only `true` asks for the schema. */
  readonly schema?: string;
}

const targetArb: fc.Arbitrary<Target> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('existing' as const),
      pick: fc.double({ min: 0, max: 0.999, noNaN: true }),
      upper: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    }),
  },
  { weight: 1, arbitrary: fc.uuid().map((id): Target => ({ kind: 'random', id })) },
);

/** Include parameters: relation paths (restricted ones included: those are refused), or one fault. */
export function includeArb(fz: Fuzzed, resource: Resource): fc.Arbitrary<IncludeSpec | undefined> {
  const paths = relationPaths(fz, resource, 2).map((p) => p.path);
  const deep = relationPaths(fz, resource, MAX_HOPS + 1)
    .filter((p) => p.path.split('.').length > MAX_HOPS)
    .map((p) => p.path);
  const options: fc.Arbitrary<IncludeSpec | undefined>[] = [fc.constant(undefined)];
  if (paths.length)
    options.push(
      fc.subarray(paths, { minLength: 1, maxLength: 3 }).map((p): IncludeSpec => ({ kind: 'paths', paths: p })),
    );
  // (An empty `include=` means no include.)
  options.push(
    fc.constantFrom('nope', 'Project', 'id', 'a..b', 'nope,').map((name): IncludeSpec => ({ kind: 'unknown', name })),
  );
  if (deep.length) options.push(fc.constantFrom(...deep).map((path): IncludeSpec => ({ kind: 'too_deep', path })));
  return fc.oneof(...options);
}

export function writePlanArb(fz: Fuzzed, resource: Resource, caller: fc.Arbitrary<string>): fc.Arbitrary<WritePlan> {
  const schema = fc
    .option(fc.constantFrom('true', 'true', 'false', 'TRUE', '1'), { freq: 6 })
    .map((s) => s ?? undefined);
  const plan = (
    op: WritePlan['op'],
    body?: fc.Arbitrary<BodySpec>,
    include?: fc.Arbitrary<IncludeSpec | undefined>,
  ): fc.Arbitrary<WritePlan> =>
    fc.record({
      op: fc.constant(op),
      caller,
      resource: fc.constant(resource.name),
      target: targetArb,
      body: body ?? fc.constant(undefined),
      include: include ?? fc.constant(undefined),
      schema: op === 'delete' ? fc.constant(undefined) : schema,
    });
  return fc.oneof(
    { weight: 5, arbitrary: plan('create', bodyArb(fz, resource, 'create')) },
    { weight: 3, arbitrary: plan('view', undefined, includeArb(fz, resource)) },
    { weight: 3, arbitrary: plan('replace', bodyArb(fz, resource, 'replace')) },
    { weight: 3, arbitrary: plan('patch', bodyArb(fz, resource, 'patch')) },
    { weight: 1, arbitrary: plan('delete') },
  );
}

const ACTION: Record<WritePlan['op'], Action> = {
  create: 'create',
  view: 'view',
  replace: 'update',
  patch: 'update',
  delete: 'delete',
};
const METHOD: Record<WritePlan['op'], string> = {
  create: 'POST',
  view: 'GET',
  replace: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
};

async function adminRow(
  fz: Fuzzed,
  resource: Resource,
  id: string,
  include: readonly string[] = [],
): Promise<Record<string, unknown> | null> {
  const query = include.length ? `?include=${include.join(',')}` : '';
  const res = await fz.inject({
    method: 'GET',
    url: `${resource.prefix}/${id}${query}`,
    headers: fz.caller('admin').headers as Record<string, string>,
  });
  return res.status === 200 ? (JSON.parse(res.text) as { data: Record<string, unknown> }).data : null;
}

/** The expectation for an include parameter on a row or list answer, or undefined when it is fine. */
export function includeExpectation(
  fz: Fuzzed,
  caller: Caller,
  resource: Resource,
  include: IncludeSpec | undefined,
): Expectation | undefined {
  if (!include) return undefined;
  if (include.kind === 'unknown')
    return {
      status: 422,
      why: `'${include.name}' is not a relation`,
      paths: ['query.include'],
      reasons: ['unknown_relation', 'unknown_field', 'invalid_request'],
    };
  if (include.kind === 'too_deep')
    return {
      status: 422,
      why: `'${include.path}' crosses more than ${MAX_HOPS} relations`,
      paths: ['query.include'],
      reasons: ['path_too_deep'],
    };
  const hidden = include.paths.find((p) => isRestricted(fz, caller, resource, p.split('.')));
  if (hidden)
    return {
      status: 403,
      why: `the relation path '${hidden}' is restricted for ${caller.name}`,
      paths: ['query.include'],
      reasons: ['restricted'],
    };
  return undefined;
}

export function includeQuery(include: IncludeSpec | undefined): string | undefined {
  if (!include) return undefined;
  return include.kind === 'paths' ? include.paths.join(',') : include.kind === 'unknown' ? include.name : include.path;
}

export async function prepareWrite(fz: Fuzzed, plan: WritePlan): Promise<Case> {
  const resource = fz.resource(plan.resource);
  const caller = fz.caller(plan.caller);
  const method = METHOD[plan.op];
  let id: string;
  let existed: boolean;
  if (plan.target.kind === 'random') {
    id = plan.target.id;
    existed = await fz.exists(resource.table, resource.keyColumn, id);
  } else {
    const ids = await fz.ids(resource);
    existed = ids.length > 0;
    id = existed ? ids[Math.floor(plan.target.pick * ids.length)]! : '00000000-0000-4000-8000-000000000000';
    if (plan.target.upper) id = id.toUpperCase();
  }
  const query = new URLSearchParams();
  if (plan.schema !== undefined) query.set('schema', plan.schema);
  const include = plan.op === 'view' ? includeQuery(plan.include) : undefined;
  if (include !== undefined) query.set('include', include);
  const qs = query.size ? `?${query.toString()}` : '';
  const url = plan.op === 'create' ? `${resource.prefix}/${qs}` : `${resource.prefix}/${id}${qs}`;
  const body = plan.body ? await resolveBody(fz, resource, plan.body) : undefined;
  const request = {
    method,
    url,
    headers: withCaller(caller, body === undefined ? {} : JSON_HEADERS),
    ...(body === undefined ? {} : { payload: JSON.stringify(body) ?? 'null' }),
  };
  const fault = plan.body?.fault
    ? ` ${plan.body.fault.kind}${plan.body.fault.field ? ` (${plan.body.fault.field})` : ''}`
    : '';
  const randomId = plan.target.kind === 'random' && plan.op !== 'create';
  const label = `${plan.op}${fault}${plan.include ? ` include:${plan.include.kind}` : ''}${randomId ? ' random id' : ''}${plan.schema === 'true' ? ' ?schema=true' : ''}`;
  const expect = await expectWrite(fz, resource, caller, plan, id, existed, body);
  return { label, request, expect };
}

async function expectWrite(
  fz: Fuzzed,
  resource: Resource,
  caller: Caller,
  plan: WritePlan,
  id: string,
  existed: boolean,
  body: unknown,
): Promise<Expectation> {
  const denied = gate(caller, resource, ACTION[plan.op]);
  if (denied) return denied;
  if (plan.schema === 'true' && resource.exposeSchemas && plan.op !== 'delete')
    return schemaExpectation(fz, resource, caller, plan.op, id);
  if (plan.op === 'view') {
    const bad = includeExpectation(fz, caller, resource, plan.include);
    if (bad) return bad;
    if (!existed) return { status: 404, why: 'no row has this id' };
    const tree = includeTree(plan.include?.kind === 'paths' ? plan.include.paths : []);
    return {
      status: 200,
      why: 'the row exists',
      verify: (_res, env) => checkRow(fz.doc(resource, 'out', caller), env.data, tree, 'data'),
    };
  }
  if (plan.op === 'delete') {
    if (!existed) return { status: 404, why: 'no row has this id' };
    if (await fz.deleteBlocked(resource, id.toLowerCase()))
      return { status: 409, why: 'rows that may not lose it still refer to this row', reasons: ['restrict'] };
    return {
      status: 200,
      why: 'the row exists and nothing blocks its deletion',
      verify: async (_res, env) => [
        ...(env.data === null ? [] : ['data: expected null']),
        ...((await fz.exists(resource.table, resource.keyColumn, id)) ? ['the row is still in the database'] : []),
      ],
    };
  }
  const mode: WriteMode = plan.op;
  const { data, problems } = classifyBody(fz, resource, mode, caller, body);
  if (problems.size) {
    const why = [...problems].map(([field, what]) => `${field || 'the body'}: ${what}`).join('; ');
    const tag = [...problems.values()]
      .map((w) => (w.startsWith('U+0000') ? 'unstorable string' : w.includes('32 bits') ? 'integer out of range' : w))
      .join(', ');
    return { status: 422, why, tag, paths: [...problems.keys()] };
  }
  // The server checks every related id and names each key that misses, so all of them are expected.
  const missing: string[] = [];
  for (const fk of resource.foreignKeys) {
    const value = data[fk.field];
    const ids = fk.many ? (Array.isArray(value) ? value : []) : value == null ? [] : [value];
    const target = fz.resource(fk.target);
    for (const ref of ids) {
      if (!(await fz.exists(target.table, target.keyColumn, String(ref)))) {
        missing.push(fk.field);
        break;
      }
    }
  }
  if (missing.length > 0)
    return {
      status: 422,
      why: `${missing.join(', ')} name${missing.length === 1 ? 's' : ''} no related row`,
      paths: missing,
      reasons: ['not_found'],
    };
  if (mode !== 'create' && !existed) return { status: 404, why: 'no row has this id' };
  const written = fz.target.serviceRule?.(resource.name, mode, data) ?? data;
  for (const [name, value] of Object.entries(written)) {
    const field = resource.fields.get(name);
    if (!field?.unique || value === null || typeof value !== 'string') continue;
    const stored = field.kind === 'uuid' ? value.toLowerCase() : value;
    if (await fz.taken(resource, field.column, stored, mode === 'create' ? undefined : id))
      return { status: 409, why: `another row already has this ${name}`, reasons: ['unique'] };
  }
  const prior = mode === 'create' ? null : await adminRow(fz, resource, id);
  const expected = expectedRow(fz, resource, caller, mode, written, prior);
  // Related ids written through a many-to-many key (`tag_ids`), read back through the relation.
  const links = new Map<string, string[]>();
  for (const fk of resource.foreignKeys)
    if (fk.many && Array.isArray(written[fk.field]))
      links.set(
        fk.relation,
        (written[fk.field] as string[]).map((v) => v.toLowerCase()),
      );
  return {
    status: mode === 'create' ? 201 : 200,
    why: mode === 'create' ? 'a valid body' : 'a valid body for an existing row',
    verify: (res, env) => verifyWritten(fz, resource, caller, expected, links, res, env, mode),
  };
}

/** The row as it must read after the write, for the fields whose value is known. */
function expectedRow(
  fz: Fuzzed,
  resource: Resource,
  caller: Caller,
  mode: WriteMode,
  written: Record<string, unknown>,
  prior: Record<string, unknown> | null,
): Record<string, unknown> {
  const admin = fz.caller('admin');
  const expected: Record<string, unknown> = {};
  const visibleToAdmin = Object.keys(fz.doc(resource, 'out', admin).properties ?? {});
  if (prior) for (const k of visibleToAdmin) if (!resource.touchedOnUpdate.has(k)) expected[k] = prior[k];
  const roleDoc = fz.doc(resource, mode, caller).properties ?? {};
  const adminDoc = fz.doc(resource, mode, admin).properties ?? {};
  for (const [name, value] of Object.entries(written)) if (visibleToAdmin.includes(name)) expected[name] = value;
  // A field the caller may not set is not written: on create it takes its default.
  if (mode === 'create') {
    for (const [name, schema] of Object.entries(adminDoc)) {
      if (!(name in roleDoc) && 'default' in schema && visibleToAdmin.includes(name)) expected[name] = schema.default;
    }
  }
  return expected;
}

async function verifyWritten(
  fz: Fuzzed,
  resource: Resource,
  caller: Caller,
  expected: Record<string, unknown>,
  links: ReadonlyMap<string, string[]>,
  res: HttpResponse,
  env: Envelope,
  mode: WriteMode,
): Promise<string[]> {
  const problems = checkRow(fz.doc(resource, 'out', caller), env.data, {}, 'data');
  const data = (env.data ?? {}) as Record<string, unknown>;
  const visible = fz.doc(resource, 'out', caller).properties ?? {};
  for (const [name, value] of Object.entries(expected)) {
    if (!(name in visible) || !(name in data)) continue;
    const diff = compareValue(resource.fields.get(name), value, data[name]);
    if (diff) problems.push(`data.${name}: ${diff}`);
  }
  const id = data['id'];
  if (mode === 'create' && typeof id === 'string' && res.headers['location'] !== `${resource.prefix}/${id}`)
    problems.push(`Location is ${String(res.headers['location'])}, expected ${resource.prefix}/${id}`);
  if (typeof id !== 'string') return problems;
  // What was answered is what was stored, and the keys written point at the related rows.
  const relations = resource.foreignKeys.map((fk) => fk.relation);
  const stored = await adminRow(fz, resource, id, relations);
  if (!stored) return [...problems, 'the written row cannot be read back'];
  problems.push(...checkRow(fz.doc(resource, 'out', fz.caller('admin')), stored, includeTree(relations), 'stored'));
  for (const [name, value] of Object.entries(expected)) {
    if (!(name in stored)) continue;
    const diff = compareValue(resource.fields.get(name), value, stored[name]);
    if (diff) problems.push(`stored ${name}: ${diff}`);
  }
  for (const [relation, ids] of links) {
    const got = Array.isArray(stored[relation])
      ? (stored[relation] as { id: string }[]).map((r) => r.id.toLowerCase())
      : [];
    const want = [...new Set(ids)].sort();
    if (JSON.stringify([...new Set(got)].sort()) !== JSON.stringify(want))
      problems.push(`stored ${relation}: linked ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  }
  return problems;
}

/** `?schema=true`: the route's schema as this caller is shown it, and nothing written. */
async function schemaExpectation(
  fz: Fuzzed,
  resource: Resource,
  caller: Caller,
  op: WritePlan['op'],
  id: string,
): Promise<Expectation> {
  const schemaClass = op === 'create' ? resource.create : op === 'view' ? resource.out : resource.update;
  const expected = schemaClass.jsonSchema(caller.context, op === 'replace' || op === 'patch' ? { mode: op } : {});
  const restricted = schemaClass.restrictedFieldsFor(caller.context);
  const before = op === 'create' ? await fz.count(resource) : JSON.stringify(await adminRow(fz, resource, id));
  return {
    status: 200,
    why: 'introspection answers the schema without running the handler',
    async verify(_res, env) {
      const problems: string[] = [];
      if (env.message !== 'Schema generated successfully') problems.push(`message ${JSON.stringify(env.message)}`);
      if (JSON.stringify(env.data) !== JSON.stringify(expected))
        problems.push('data is not the schema the caller is shown');
      if (JSON.stringify(env.meta) !== JSON.stringify({ restricted_fields: restricted }))
        problems.push(`meta is ${JSON.stringify(env.meta)}`);
      const props = Object.keys(((env.data ?? {}) as { properties?: object }).properties ?? {});
      const leaked = props.filter((p) => isRestricted(fz, caller, resource, [p]));
      if (leaked.length) problems.push(`restricted fields in the schema: ${leaked.join(', ')}`);
      const after = op === 'create' ? await fz.count(resource) : JSON.stringify(await adminRow(fz, resource, id));
      if (after !== before) problems.push('the request wrote to the database');
      return problems;
    },
  };
}
