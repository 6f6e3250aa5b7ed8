import type { Static, TObject } from 'typebox';

/**
 * An includable relation of an output schema. `schema` is a thunk so two schemas can point at each
 * other (`TaskOut.project → ProjectOut`, `ProjectOut.tasks → TaskOut`) without a temporal-dead-zone
 * error. `foreignKey` names the field of *this* schema that belongs to the relation (`project_id`):
 * restricting the relation also hides that field, and restricting the field also hides the relation.
 *
 * Declare relations as an object literal with `as const` so `many` keeps its literal type:
 * ```ts
 * static override readonly relations = {
 *   project: { schema: () => ProjectOut, many: false, foreignKey: 'project_id' },
 *   comments: { schema: () => CommentOut, many: true },
 * } as const;
 * ```
 * (A helper function would be nicer to read, but TypeScript cannot infer a generic call's type
 * through a cycle of class statics — the plain literal is what keeps cyclic schemas typed.)
 */
export interface RelationSpec {
  readonly schema: () => SchemaDefinition;
  /** true for to-many (the value is an array), false for to-one (an object or null). */
  readonly many: boolean;
  /** The field of this schema holding the related row's key, e.g. `project_id`. */
  readonly foreignKey?: string;
}

/** The static side every schema class has (what the runtime reads). */
export interface SchemaDefinition {
  /** The class name: the introspection `title`. */
  readonly name: string;
  /** Permission / restriction namespace (the table name), e.g. `tasks`. */
  readonly __model__: string;
  /** The fields, as one TypeBox object schema. */
  readonly fields: TObject;
  /** Includable relations (output schemas). */
  readonly relations: Readonly<Record<string, RelationSpec>>;
  /**
   * Foreign-key field → relation name, for schemas that carry a key but not the relation itself
   * (create/update schemas: `{ project_id: 'project' }`), so `tasks.project` prunes `project_id`.
   */
  readonly foreignKeys: Readonly<Record<string, string>>;
}

/** How a request body is read: see `ContextSchema.parse`. */
export type ParseMode = 'create' | 'replace' | 'patch';

/** What a create or replace body parses to: the static type of the schema's fields. */
export type SchemaInput<S extends { readonly fields: TObject }> = Static<S['fields']>;

/** What a patch body parses to: every field optional, only the fields sent are present. */
export type SchemaPatch<S extends { readonly fields: TObject }> = Partial<Static<S['fields']>>;

type RelationOutput<R> = R extends { readonly schema: () => infer T extends SchemaDefinition; readonly many: infer M }
  ? M extends true
    ? SchemaOutput<T>[]
    : M extends false
      ? SchemaOutput<T> | null
      : SchemaOutput<T> | SchemaOutput<T>[] | null
  : never;

/**
 * The shape an output schema describes: its fields plus, when included, its relations. Date-time
 * fields are declared as strings (`format: 'date-time'`); the serializer also accepts `Date` values.
 */
export type SchemaOutput<S extends SchemaDefinition> = Static<S['fields']> & {
  -readonly [K in keyof S['relations']]?: RelationOutput<S['relations'][K]>;
};

type MaskedRelation<R> = R extends { readonly schema: () => infer T extends SchemaDefinition; readonly many: infer M }
  ? M extends true
    ? MaskedOutput<T>[]
    : M extends false
      ? MaskedOutput<T> | null
      : MaskedOutput<T> | MaskedOutput<T>[] | null
  : never;

/** What `mask` returns: `SchemaOutput` where any field may have been removed for the caller. */
export type MaskedOutput<S extends SchemaDefinition> = Partial<Static<S['fields']>> & {
  -readonly [K in keyof S['relations']]?: MaskedRelation<S['relations'][K]>;
};

/** `{ data, absent }` from `ContextSchema.parseDetailed`. */
export interface ParsedBody<T> {
  /** The pruned, defaulted and validated body. */
  readonly data: T;
  /**
   * Writable fields (declared and not restricted) that are still missing from `data` after defaults:
   * in replace mode, the fields a service should reset to the model's default. Always empty in patch
   * mode, and empty whenever every optional field declares a `default` (as generated schemas do).
   */
  readonly absent: readonly string[];
}

/** One property of an introspected schema: a JSON Schema fragment (`type`, `format`, `default`, …). */
export type JsonSchemaFragment = { readonly [keyword: string]: unknown };

/**
 * The introspection result (docs/http.md): `{ title, type: 'object', properties, required }`.
 * Output schemas with relations add `x-relations` (name → the related object's schema, itself
 * masked for the caller); schemas without relations do not carry the key at all.
 */
export interface IntrospectedSchema {
  readonly title: string;
  readonly type: 'object';
  readonly properties: { readonly [field: string]: JsonSchemaFragment };
  readonly required: readonly string[];
  readonly 'x-relations'?: { readonly [relation: string]: JsonSchemaFragment };
}

/** A compiled response serializer: one object or an array of them → JSON text. */
export type Serializer = (value: unknown) => string;
