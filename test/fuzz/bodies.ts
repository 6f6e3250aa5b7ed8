/**
 * Request bodies for create, replace and patch: drawn from the resource's full (unrestricted) body
 * schema, with at most one fault, then classified against the schema the caller is actually shown
 * — which is what models the documented leniency: keys the caller may not set (restricted) and keys
 * the schema does not have (unknown) are dropped before validation, and `create`/`replace` fill
 * absent fields from their `default`.
 *
 * On top of the schema, the HTTP contract (docs/http.md, "Values on the wire") refuses what no database can store faithfully (U+0000 and lone
 * surrogates in any string) and integers outside the 32 bits an `integer` column holds.
 */
import fc from 'fast-check';
import { Compile, type Validator } from 'typebox/compile';
import type { Caller, Fuzzed } from './harness.js';
import type { Resource } from './resources.js';
import {
  INT32,
  jsonArb,
  mutatedValue,
  mutationsFor,
  typesOf,
  validValue,
  type JsonSchema,
  type Mutation,
} from './values.js';

export type WriteMode = 'create' | 'replace' | 'patch';

/** A reference to a related row, resolved when the request is sent (rows come and go). */
export interface RelatedRef {
  readonly $related: string;
  /** Which existing row, as a fraction of the rows there are; or a random id (expected: not found). */
  readonly pick: number | string;
}

/** The value of a unique field of another row (expected: 409), or `fallback` when there is none. */
export interface ClashRef {
  readonly $clash: string;
  readonly pick: number;
  readonly fallback: unknown;
}

export type BodyFault = Mutation | 'missing_required' | 'not_object' | 'unknown_keys';

export interface BodySpec {
  readonly values: Record<string, unknown>;
  readonly fault?: { readonly kind: BodyFault; readonly field?: string };
  /** The whole body, when the fault replaces it (`not_object`). */
  readonly replaced?: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function relatedArb(target: string, nullable: boolean): fc.Arbitrary<RelatedRef | null> {
  const existing = fc
    .double({ min: 0, max: 0.999, noNaN: true })
    .map((pick): RelatedRef => ({ $related: target, pick }));
  const random = fc.uuid().map((pick): RelatedRef => ({ $related: target, pick }));
  return fc.oneof(
    { weight: 8, arbitrary: existing },
    { weight: 1, arbitrary: random },
    ...(nullable ? [{ weight: 2, arbitrary: fc.constant(null) }] : []),
  );
}

/** A body for `mode` on `resource`, from the unrestricted schema (what an admin is shown). */
export function bodyArb(fz: Fuzzed, resource: Resource, mode: WriteMode): fc.Arbitrary<BodySpec> {
  const admin = fz.caller('admin');
  const doc = fz.doc(resource, mode, admin);
  const props = doc.properties ?? {};
  const required = mode === 'patch' ? [] : (doc.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, schema] of Object.entries(props)) {
    const fk = resource.foreignKeys.find((f) => f.field === name);
    const field = resource.fields.get(name);
    if (fk) {
      model[name] = fk.many
        ? fc.array(relatedArb(fk.target, false), { maxLength: 3 })
        : relatedArb(fk.target, fk.nullable);
    } else if (field?.unique) {
      const value = validValue(schema);
      model[name] = fc.oneof(
        { weight: 6, arbitrary: value },
        {
          weight: 1,
          arbitrary: fc
            .tuple(fc.double({ min: 0, max: 0.999, noNaN: true }), value)
            .map(([pick, fallback]): ClashRef => ({ $clash: name, pick, fallback })),
        },
      );
    } else {
      model[name] = validValue(schema);
    }
  }
  const values = fc.record(model, { requiredKeys: required });
  const faults: fc.Arbitrary<BodySpec>[] = [];
  for (const [name, schema] of Object.entries(props)) {
    if (resource.foreignKeys.some((f) => f.field === name && f.many)) continue;
    const field = resource.fields.get(name);
    const mutations = mutationsFor(schema, { int32: field?.kind === 'integer' });
    if (mutations.length === 0) continue;
    faults.push(
      fc
        .tuple(values, fc.constantFrom(...mutations))
        .chain(([v, kind]) =>
          mutatedValue(schema, kind).map(
            (bad): BodySpec => ({ values: { ...v, [name]: bad }, fault: { kind, field: name } }),
          ),
        ),
    );
  }
  if (required.length > 0) {
    faults.push(
      fc.tuple(values, fc.constantFrom(...required)).map(([v, name]): BodySpec => {
        const { [name]: _dropped, ...rest } = v;
        return { values: rest, fault: { kind: 'missing_required', field: name } };
      }),
    );
  }
  const notObject = fc
    .constantFrom<unknown>([], [{}], 'text', 42, true, null)
    .map((replaced): BodySpec => ({ values: {}, fault: { kind: 'not_object' }, replaced }));
  // Keys the schema does not have — among them output-only and create-only names — are dropped silently.
  const known = [
    ...new Set([
      ...Object.keys(fz.doc(resource, 'out', admin).properties ?? {}),
      ...Object.keys(fz.doc(resource, 'replace', admin).properties ?? {}),
    ]),
  ].filter((k) => !(k in props));
  const unknownKey = fc.oneof(
    fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !(k in props) && k !== '__proto__' && k !== 'constructor'),
    ...(known.length ? [fc.constantFrom(...known)] : []),
  );
  const unknown = fc
    .tuple(values, fc.dictionary(unknownKey, jsonArb, { minKeys: 1, maxKeys: 3 }))
    .map(([v, extra]): BodySpec => ({ values: { ...extra, ...v }, fault: { kind: 'unknown_keys' } }));
  return fc.oneof(
    { weight: 14, arbitrary: values.map((v): BodySpec => ({ values: v })) },
    ...(faults.length ? [{ weight: 6, arbitrary: fc.oneof(...faults) }] : []),
    { weight: 1, arbitrary: notObject },
    { weight: 2, arbitrary: unknown },
  );
}

/** Replaces every related-row and clash reference by a concrete value from the database. */
export async function resolveBody(fz: Fuzzed, resource: Resource, spec: BodySpec): Promise<unknown> {
  if (spec.fault?.kind === 'not_object') return spec.replaced;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(spec.values)) out[key] = await resolveValue(fz, resource, value);
  return out;
}

async function resolveValue(fz: Fuzzed, resource: Resource, value: unknown): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => resolveValue(fz, resource, v)));
  if (!isRecord(value)) return value;
  if ('$related' in value) {
    const ref = value as unknown as RelatedRef;
    if (typeof ref.pick === 'string') return ref.pick;
    const ids = await fz.ids(fz.resource(ref.$related));
    return ids.length ? ids[Math.floor(ref.pick * ids.length)] : null;
  }
  if ('$clash' in value) {
    const ref = value as unknown as ClashRef;
    const values = (await fz.column(resource, resource.fields.get(ref.$clash)!.column)).filter(
      (v) => typeof v === 'string',
    );
    return values.length ? values[Math.floor(ref.pick * values.length)] : ref.fallback;
  }
  return value;
}

const validators = new WeakMap<JsonSchema, Validator>();

function validator(doc: JsonSchema): Validator {
  let v = validators.get(doc);
  if (!v) validators.set(doc, (v = Compile(doc as never)));
  return v;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when a string anywhere in `value` (keys included) holds U+0000 or a lone surrogate. */
export function unstorable(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000') || LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(unstorable);
  if (isRecord(value)) return Object.entries(value).some(([k, v]) => unstorable(k) || unstorable(v));
  return false;
}

export interface Classified {
  /** What the server will write, after pruning, defaults and validation (when `problems` is empty). */
  readonly data: Record<string, unknown>;
  /** Top-level names of the fields that make the body invalid (`''`: the body itself), and why. */
  readonly problems: ReadonlyMap<string, string>;
}

/** The body as the caller's schema reads it: pruned, defaulted, and the fields that make it invalid. */
export function classifyBody(
  fz: Fuzzed,
  resource: Resource,
  mode: WriteMode,
  caller: Caller,
  body: unknown,
): Classified {
  if (!isRecord(body)) return { data: {}, problems: new Map([['', 'not a JSON object']]) };
  const doc = fz.doc(resource, mode, caller);
  const props = doc.properties ?? {};
  const data: Record<string, unknown> = {};
  for (const name of Object.keys(props)) if (body[name] !== undefined) data[name] = body[name];
  if (mode !== 'patch') {
    for (const [name, schema] of Object.entries(props)) {
      if (data[name] === undefined && 'default' in schema) data[name] = structuredClone(schema.default);
    }
  }
  const problems = new Map<string, string>();
  for (const error of validator(doc).Errors(data)) {
    if (error.keyword === 'required') {
      for (const name of (error.params as { requiredProperties?: string[] }).requiredProperties ?? [])
        problems.set(name, 'required');
    } else {
      const name = error.instancePath.split('/')[1] ?? '';
      if (!problems.has(name)) problems.set(name, `the schema's ${error.keyword}`);
    }
  }
  for (const [name, value] of Object.entries(data)) {
    const shown = (JSON.stringify(value) ?? '').slice(0, 40);
    if (!problems.has(name) && unstorable(value)) problems.set(name, `U+0000 or a lone surrogate in ${shown}`);
    const field = resource.fields.get(name);
    if (field?.kind === 'integer' && typeof value === 'number' && (value < INT32.min || value > INT32.max))
      problems.set(name, `${shown} is outside the 32 bits of an integer column`);
  }
  return { data, problems };
}

/** Schema types of a property, for the report. */
export function describeSchema(schema: JsonSchema | undefined): string {
  return schema ? typesOf(schema).join('|') : 'unknown';
}
