import { IsOptional, Type, type TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { Value } from 'typebox/value';
import { jsonProblem, textProblem, type ValueProblem } from '../model/value-checks.js';
import { ValidationError, type ErrorDetail } from '../errors.js';
import { ArtifactCache } from './artifact-cache.js';
import { withBoundKey, type BoundFields } from './claim-bound.js';
import { restrictionScope, visibility, type RestrictionScope } from './restriction-scope.js';
import { isRecord, kindOf, type SchemaInfo } from './schema-info.js';
import type { ParseMode } from './types.js';
import { toErrorDetails } from './validation-errors.js';

interface InputPlan {
  /** Declared fields left after pruning, in declaration order. */
  readonly writable: readonly string[];
  /**
   * The pruned object schema: restricted properties removed; nothing required in patch mode, nor the
   * fields the caller's row scope binds to a claim.
   */
  readonly schema: TSchema;
  readonly validator: Validator;
  /**
   * The fields with a default, for a schema where filling them is all `Value.Default` would do; null
   * where it would do more (a default below a field, a reference), so it runs as it is.
   */
  readonly defaults: readonly DefaultedField[] | null;
}

interface DefaultedField {
  readonly name: string;
  readonly schema: TSchema & { default?: unknown };
}

const plans = new ArtifactCache<InputPlan>();

/** One compiled validator per (schema, mode, relevant restrictions, bound fields), built on first use. */
function inputPlan(
  info: SchemaInfo,
  restricted: ReadonlySet<string>,
  mode: ParseMode,
  bound: BoundFields | undefined,
): InputPlan {
  const scope = restrictionScope(info, restricted);
  // create and replace read a body the same way; only patch differs.
  const patch = mode === 'patch';
  return plans.get(info, withBoundKey(`${patch ? 'patch' : 'full'}|${scope.key}`, bound), () =>
    buildInputPlan(info, scope, patch, bound),
  );
}

function buildInputPlan(
  info: SchemaInfo,
  scope: RestrictionScope,
  patch: boolean,
  bound: BoundFields | undefined,
): InputPlan {
  const writable = visibility(info, [], scope).fields;
  const properties: Record<string, TSchema> = {};
  for (const name of writable) {
    const property = info.properties[name]!;
    properties[name] = bound?.names.has(name) ? Type.Optional(property) : property;
  }
  // Built with TypeBox (not as a raw JSON object) so `Value.Default` recognises it; the property
  // schemas keep their own optional markers, hence the same `required` as the declaration.
  const object = Type.Object(properties);
  const schema: TSchema = patch ? Type.Partial(object) : object;
  return { writable, schema, validator: Compile(schema), defaults: patch ? null : topLevelDefaults(properties) };
}

/**
 * `Value.Default` walks the whole schema for every body, checking each union's variants against the
 * value with TypeBox's interpreted checker, a large part of a create's work (docs/performance.md). Where no
 * field's schema holds a default or a reference below its own top, the walk only puts each absent
 * field's default in place (a present value comes back as it is, or as an equal copy): that is done
 * here from a list, and `Value.Default` runs for the other schemas.
 */
function topLevelDefaults(properties: Readonly<Record<string, TSchema>>): readonly DefaultedField[] | null {
  const fields: DefaultedField[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const { default: _own, ...below } = property as Record<string, unknown>;
    if (holdsDefaultOrReference(below)) return null;
    if (Object.hasOwn(property, 'default')) fields.push({ name, schema: property });
  }
  return fields;
}

function holdsDefaultOrReference(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(holdsDefaultOrReference);
  if (!isRecord(node)) return false;
  if (Object.hasOwn(node, 'default') || Object.hasOwn(node, '$ref') || Object.hasOwn(node, '$defs')) return true;
  return Object.values(node).some(holdsDefaultOrReference);
}

/** What `Value.Default(plan.schema, data)` does, in place; see `topLevelDefaults`. */
function fillDefaults(plan: InputPlan, data: Record<string, unknown>): void {
  if (!plan.defaults) {
    Value.Default(plan.schema, data);
    return;
  }
  for (const { name, schema } of plan.defaults) {
    if (data[name] !== undefined) continue;
    const value =
      typeof schema.default === 'function' ? (schema.default as () => unknown)() : Value.Clone(schema.default);
    if (value === undefined && IsOptional(schema)) continue;
    data[name] = value;
  }
}

/**
 * The input pipeline, in this order:
 * 1. the body must be a JSON object (422 otherwise);
 * 2. keep only declared, unrestricted keys: restricted ones are pruned silently (never an error,
 *    never validated, never written) and unknown ones are dropped (as Fastify's `removeAdditional`
 *    and Pydantic's default `extra='ignore'` do) — a client sending an extra key is not an error;
 * 3. create / replace: fill absent fields from their `default`; patch: nothing is filled in; a
 *    required field in `bound` (set from the token on create, kept on replace) may be absent;
 * 4. validate with the compiled validator → `ValidationError` with one detail per problem;
 * 5. refuse text no database stores as sent (U+0000, an unpaired surrogate) in any field the client
 *    sent, keys of JSON values included. Checked here, on what the client sent, and not only when
 *    the row is written: a service hook may replace the value before the write, and the client's
 *    request was invalid all the same.
 * The result is a new object (nested values are shared with `input`, which is otherwise left as is).
 */
export function parseInput(
  info: SchemaInfo,
  input: unknown,
  restricted: ReadonlySet<string>,
  mode: ParseMode,
  bound?: BoundFields,
): { data: Record<string, unknown>; absent: string[] } {
  if (!isRecord(input)) {
    throw new ValidationError(`The request body must be a JSON object with the fields of ${info.title}.`, [
      { path: '', message: `must be an object; received ${kindOf(input)}`, reason: 'type' },
    ]);
  }
  const plan = inputPlan(info, restricted, mode, bound);
  const data: Record<string, unknown> = {};
  for (const name of plan.writable) {
    if (Object.hasOwn(input, name) && input[name] !== undefined) data[name] = input[name];
  }
  const unstorable = unstorableText(data);
  if (mode !== 'patch') fillDefaults(plan, data);
  if (!plan.validator.Check(data)) {
    throw new ValidationError(`The request body does not match ${info.title}; see details.`, [
      ...toErrorDetails(plan.validator.Errors(data)),
      ...unstorable,
    ]);
  }
  if (unstorable.length > 0)
    throw new ValidationError(`The request body holds text the database cannot store; see details.`, unstorable);
  // A bound field left out is the token's or the stored value, never one to reset.
  const absent =
    mode === 'patch' ? [] : plan.writable.filter((name) => data[name] === undefined && !bound?.names.has(name));
  return { data, absent };
}

/** One detail per field whose value holds U+0000 or an unpaired surrogate, in a string or a JSON value. */
function unstorableText(data: Record<string, unknown>): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const [name, value] of Object.entries(data)) {
    let found: { path: string; problem: ValueProblem } | undefined;
    if (typeof value === 'string') {
      const problem = textProblem(value, name);
      if (problem) found = { path: name, problem };
    } else if (typeof value === 'object' && value !== null) {
      found = jsonProblem(value, name);
    }
    if (found) details.push({ path: found.path, message: found.problem.message, reason: found.problem.reason });
  }
  return details;
}
