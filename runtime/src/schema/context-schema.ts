import { Type, type TObject } from 'typebox';
import { getContext, type CoreContext } from '../context/context.js';
import { ArtifactCache } from './artifact-cache.js';
import { boundRequiredFields, withBoundKey } from './claim-bound.js';
import { parseInput } from './input.js';
import { introspect } from './introspection.js';
import { compileSerializer, maskWithPlan } from './output.js';
import { planOutput, type OutputPlan } from './output-plan.js';
import { restrictionScope } from './restriction-scope.js';
import { describeSchema, type SchemaInfo } from './schema-info.js';
import type {
  IntrospectedSchema,
  MaskedOutput,
  ParseMode,
  ParsedBody,
  RelationSpec,
  SchemaDefinition,
  SchemaInput,
  SchemaPatch,
  Serializer,
} from './types.js';

const outputPlans = new ArtifactCache<OutputPlan>();
const serializers = new ArtifactCache<Serializer>();
const documents = new ArtifactCache<IntrospectedSchema>();

function plan(info: SchemaInfo, ctx: CoreContext): OutputPlan {
  const scope = restrictionScope(info, ctx.restrictedFields);
  return outputPlans.get(info, scope.key, () => planOutput(info, scope));
}

/**
 * The schema base class: input shielding, output masking and introspection for the active context.
 * A schema is a subclass with a namespace and a TypeBox object; it is never instantiated.
 *
 * ```ts
 * export class TaskCreate extends ContextSchema {
 *   static override readonly __model__ = 'tasks';
 *   static override readonly fields = Type.Object({
 *     title: Type.String({ maxLength: 255 }),
 *     description: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], { default: null })),
 *   });
 * }
 * export type TaskCreateInput = SchemaInput<typeof TaskCreate>;
 *
 * const body = TaskCreate.parse(request.body);          // pruned, defaulted, validated
 * reply.send(TaskOut.serializer()(task));              // masked JSON, compiled once per restriction set
 * ```
 *
 * Every method takes the context explicitly or reads the active one (`getContext()`); what it
 * compiles is cached per (schema class, restriction entries that concern it), never per request.
 * Restriction entries (`tasks.assignee_email`, `tasks.project`, `tasks.project.budget`,
 * `projects.budget`) are matched with `isPathRestricted`; a relation and its `foreignKey` field are
 * hidden together. Schemas must not change after their first use.
 */
export abstract class ContextSchema {
  /** Permission / restriction namespace (the table name), e.g. `tasks`. */
  static readonly __model__: string = '';
  /** The fields as one TypeBox object. Optional fields may carry a `default`. */
  static readonly fields: TObject = Type.Object({});
  /** Includable relations (output schemas); see `RelationSpec`. */
  static readonly relations: Readonly<Record<string, RelationSpec>> = {};
  /** Foreign-key field → relation name for schemas without `relations` (create/update). */
  static readonly foreignKeys: Readonly<Record<string, string>> = {};

  /**
   * Reads a request body. `mode`:
   * - `create` (default) and `replace` (PUT): required fields must be present, absent optional fields
   *   get their `default`. For PUT the router passes the result to the service as the full new
   *   state: every writable field is present (fields without a default: see `parseDetailed`), and
   *   restricted fields are absent, so they keep their stored value.
   * - `patch` (PATCH): every field optional, no defaults; only the fields sent are returned.
   * Restricted fields are pruned before validation and unknown keys dropped, silently. A required
   * field the caller's row scope binds to a token claim (docs/security.md, "Row filters") may be left
   * out of a create or replace body: the repository takes it from the token, or keeps the stored value.
   * @throws ValidationError (422) when the body is not an object or fails validation.
   */
  static parse<S extends SchemaDefinition>(
    this: S,
    input: unknown,
    ctx?: CoreContext,
    options?: { mode?: 'create' | 'replace' },
  ): SchemaInput<S>;
  static parse<S extends SchemaDefinition>(
    this: S,
    input: unknown,
    ctx: CoreContext | undefined,
    options: { mode: 'patch' },
  ): SchemaPatch<S>;
  static parse<S extends SchemaDefinition>(
    this: S,
    input: unknown,
    ctx: CoreContext | undefined,
    options: { mode: ParseMode },
  ): SchemaInput<S> | SchemaPatch<S>;
  static parse(
    this: SchemaDefinition,
    input: unknown,
    ctx: CoreContext = getContext(),
    options: { mode?: ParseMode } = {},
  ): unknown {
    const info = describeSchema(this);
    const mode = checkMode(options.mode);
    return parseInput(info, input, ctx.restrictedFields, mode, boundRequiredFields(info, ctx, mode)).data;
  }

  /**
   * `parse`, plus `absent`: the writable fields still missing after defaults (only possible for an
   * optional field declared without a `default`), which a replace should reset to the model default.
   */
  static parseDetailed<S extends SchemaDefinition, M extends ParseMode = 'create'>(
    this: S,
    input: unknown,
    ctx: CoreContext = getContext(),
    options: { mode?: M } = {},
  ): ParsedBody<M extends 'patch' ? SchemaPatch<S> : SchemaInput<S>> {
    const info = describeSchema(this);
    const mode = checkMode(options.mode);
    const parsed = parseInput(info, input, ctx.restrictedFields, mode, boundRequiredFields(info, ctx, mode));
    return parsed as unknown as ParsedBody<M extends 'patch' ? SchemaPatch<S> : SchemaInput<S>>;
  }

  /**
   * The JSON serializer for this caller: `(objectOrArray) => string`, masked fields and relations
   * absent, dates as ISO strings. The same function is returned for every context with the same
   * relevant restrictions. Values are rows shaped like the schema (plain objects or objects with
   * `toJSON`); an included relation is an object / array / null, an unloaded one is left out.
   */
  static serializer(this: SchemaDefinition, ctx: CoreContext = getContext()): Serializer {
    const info = describeSchema(this);
    const scope = restrictionScope(info, ctx.restrictedFields);
    return serializers.get(info, scope.key, () => compileSerializer(plan(info, ctx)));
  }

  /** Masks rows into new plain objects (same rules and date writing as `serializer`). */
  static mask<S extends SchemaDefinition>(this: S, value: readonly unknown[], ctx?: CoreContext): MaskedOutput<S>[];
  static mask<S extends SchemaDefinition>(this: S, value: object | null, ctx?: CoreContext): MaskedOutput<S> | null;
  static mask<S extends SchemaDefinition>(
    this: S,
    value: unknown,
    ctx?: CoreContext,
  ): MaskedOutput<S> | MaskedOutput<S>[] | null;
  static mask(this: SchemaDefinition, value: unknown, ctx: CoreContext = getContext()): unknown {
    return maskWithPlan(plan(describeSchema(this), ctx), value);
  }

  /**
   * The introspection document for this caller (`data` of a `?schema=true` answer, docs/http.md):
   * `{ title, type: 'object', properties, required }`, restricted fields removed from both, plus
   * `x-relations` on output schemas with relations. `mode: 'patch'` documents a PATCH body (nothing
   * required); `create` (the default) and `replace` leave out of `required` the fields the caller's
   * row scope binds to a claim, as `parse` does. The result is cached and frozen.
   */
  static jsonSchema(
    this: SchemaDefinition,
    ctx: CoreContext = getContext(),
    options: { mode?: ParseMode } = {},
  ): IntrospectedSchema {
    const info = describeSchema(this);
    const scope = restrictionScope(info, ctx.restrictedFields);
    const mode = checkMode(options.mode);
    const patch = mode === 'patch';
    const bound = boundRequiredFields(info, ctx, mode);
    return documents.get(info, withBoundKey(`${patch ? 'patch' : 'full'}|${scope.key}`, bound), () =>
      introspect(plan(info, ctx).root, bound === undefined ? { patch } : { patch, bound }),
    );
  }

  /**
   * The caller's restriction entries that concern this schema — its own fields and relations, and
   * those of the schemas it can include — sorted: `meta.restricted_fields` of an introspection
   * answer (empty when none apply).
   */
  static restrictedFieldsFor(this: SchemaDefinition, ctx: CoreContext = getContext()): readonly string[] {
    return restrictionScope(describeSchema(this), ctx.restrictedFields).entries;
  }

  /** The top-level fields this caller may see (e.g. the columns worth selecting). */
  static visibleFields(this: SchemaDefinition, ctx: CoreContext = getContext()): readonly string[] {
    return plan(describeSchema(this), ctx).root.fields.map((f) => f.name);
  }
}

function checkMode(mode: ParseMode | undefined): ParseMode {
  if (mode === undefined) return 'create';
  if (mode === 'create' || mode === 'replace' || mode === 'patch') return mode;
  throw new Error(`Unknown parse mode ${JSON.stringify(mode)}: use 'create', 'replace' or 'patch'.`);
}

/** Any schema class, e.g. the type of a router's `createSchema` / `schemaOut`. */
export type SchemaClass = typeof ContextSchema;
