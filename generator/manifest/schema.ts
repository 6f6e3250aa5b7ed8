/**
 * The resource manifest (`src/apps/<module>/<module>.resource.json`), as a TypeBox schema. It is both
 * the validator and the source of the published JSON Schema (`resource.schema.json`) that gives editors
 * completion through `$schema`.
 */
import { Type, type Static } from 'typebox';
import { DECIMAL_DEFAULTS, MAX_DECIMAL_PRECISION } from './decimal.js';

export const FIELD_TYPES = [
  'uuid',
  'string',
  'text',
  'integer',
  'bigint',
  'float',
  'decimal',
  'boolean',
  'date',
  'datetime',
  'json',
  'enum',
] as const;
export const RELATION_KINDS = ['many-to-one', 'one-to-one', 'one-to-many', 'many-to-many'] as const;
export const ON_DELETE = ['restrict', 'cascade', 'set null'] as const;

const identifier = (what: string) =>
  Type.String({
    pattern: '^[a-z][a-z0-9_]*$',
    maxLength: 63,
    description: `${what}: lower snake_case, starting with a letter`,
  });

/** A closed set of strings (`enum` in the published JSON Schema). */
const oneOf = <const T extends string[]>(values: readonly [...T], description: string) =>
  Type.Enum<T>(values, { description });

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

export const FieldSchema = Type.Object(
  {
    type: oneOf(FIELD_TYPES, 'Column type'),
    description: Type.Optional(Type.String({ description: 'Shown in the API docs' })),
    primary: Type.Optional(
      Type.Boolean({ description: 'Primary key; a uuid primary key is generated (v4) and output-only' }),
    ),
    nullable: Type.Optional(Type.Boolean({ description: 'Accepts and stores null' })),
    default: Type.Optional(
      Type.Union([Scalar, Type.Array(Type.Unknown()), Type.Object({})], {
        description: 'Default value for create (and for replace when absent)',
      }),
    ),
    max_length: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'Maximum length (string)' })),
    min_length: Type.Optional(Type.Integer({ minimum: 0, description: 'Minimum length (string, text)' })),
    minimum: Type.Optional(Type.Number({ description: 'Smallest value (integer, float)' })),
    maximum: Type.Optional(Type.Number({ description: 'Largest value (integer, float)' })),
    precision: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_DECIMAL_PRECISION,
        description: `decimal: total number of digits, 1–${MAX_DECIMAL_PRECISION} (default ${DECIMAL_DEFAULTS.precision})`,
      }),
    ),
    scale: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_DECIMAL_PRECISION,
        description: `decimal: digits after the point, 0–precision (default ${DECIMAL_DEFAULTS.scale})`,
      }),
    ),
    format: Type.Optional(oneOf(['email', 'uri', 'hostname'] as const, 'String format checked on input')),
    values: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        uniqueItems: true,
        description: 'Allowed values (enum)',
      }),
    ),
    index: Type.Optional(Type.Boolean({ description: 'Create an index' })),
    unique: Type.Optional(Type.Boolean({ description: 'Unique constraint (409 CONFLICT on violation)' })),
    create: Type.Optional(Type.Boolean({ description: 'false: not accepted on create' })),
    update: Type.Optional(Type.Boolean({ description: 'false: not accepted on update' })),
    output: Type.Optional(Type.Boolean({ description: 'false: never returned (e.g. a hash)' })),
    readonly: Type.Optional(Type.Boolean({ description: 'Output only, set by the system (e.g. created_at)' })),
    auto: Type.Optional(
      oneOf(['now', 'now_on_update'] as const, 'Set by the system: on create (now) or on every write (now_on_update)'),
    ),
    version: Type.Optional(
      Type.Boolean({
        description:
          "integer: the record's version, output only: 1 on create, +1 on every update (checked by the database, so If-Match is one compare-and-set); the ETag derives from it. At most one per resource, not primary, not nullable",
      }),
    ),
  },
  { additionalProperties: false },
);

export const RelationSchema = Type.Object(
  {
    kind: oneOf(RELATION_KINDS, 'Relation kind'),
    target: identifier('Target resource name (its manifest "name")'),
    inverse: Type.Optional(identifier('Name of the relation on the target pointing back')),
    nullable: Type.Optional(Type.Boolean({ description: 'To-one relations: may be empty' })),
    on_delete: Type.Optional(oneOf(ON_DELETE, 'What deleting the target does to this side')),
    ids_field: Type.Optional(identifier('Many-to-many: the body key holding the related ids (default <singular>_ids)')),
    owner: Type.Optional(
      Type.Boolean({ description: 'One-to-one / many-to-many: this side holds the foreign key / pivot' }),
    ),
  },
  { additionalProperties: false },
);

export const ManifestSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    name: identifier('Table name and permission namespace'),
    entity: Type.String({ pattern: '^[A-Z][A-Za-z0-9]*$', maxLength: 63, description: 'Model class name, PascalCase' }),
    prefix: Type.Optional(Type.String({ pattern: '^/[a-z0-9/_-]*$', description: 'URL prefix, e.g. /tasks' })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'OpenAPI tags' })),
    expose_schemas: Type.Optional(
      Type.Boolean({ description: 'Answer ?schema=true with the JSON Schema of each route' }),
    ),
    pagination: Type.Optional(
      Type.Object(
        {
          default_limit: Type.Optional(Type.Integer({ minimum: 1 })),
          max_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
        },
        {
          additionalProperties: false,
          description: 'List and search page sizes: default_limit (default 50) and max_limit (default 500)',
        },
      ),
    ),
    fields: Type.Record(identifier('Field name'), FieldSchema, { description: 'Columns, by wire name' }),
    relations: Type.Optional(
      Type.Record(identifier('Relation name'), RelationSchema, {
        description: 'Relations to other resources, by name',
      }),
    ),
  },
  { additionalProperties: false },
);

export type Manifest = Static<typeof ManifestSchema>;
export type FieldSpec = Static<typeof FieldSchema>;
export type RelationSpec = Static<typeof RelationSchema>;
export type FieldType = (typeof FIELD_TYPES)[number];
export type RelationKind = (typeof RELATION_KINDS)[number];
