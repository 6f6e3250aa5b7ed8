/**
 * `docs/manifest.md`, rendered from the manifest schema itself: the tables of keys, field flags and
 * relation keys come from the TypeBox schema's `description`s, so the reference cannot drift from what
 * the validator accepts. `npm run docs:manifest` writes it; a test fails when the committed file is stale.
 */
import type { TSchema } from 'typebox';
import { FIELD_TYPES, FieldSchema, ManifestSchema, RELATION_KINDS, RelationSchema } from './schema.js';

interface SchemaNode {
  type?: string | string[];
  description?: string;
  enum?: readonly unknown[];
  anyOf?: SchemaNode[];
  items?: SchemaNode;
  properties?: Record<string, SchemaNode>;
  required?: readonly string[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

const node = (schema: TSchema): SchemaNode => schema as unknown as SchemaNode;

/** A short type label for a table cell: `string`, `integer 1–65535`, `"a" \| "b"`, `array of string`. */
function typeLabel(schema: SchemaNode): string {
  if (schema.enum) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(', ');
  if (schema.anyOf) return schema.anyOf.map(typeLabel).join(' or ');
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : (schema.type ?? 'any');
  if (type === 'array') return `array of ${schema.items ? typeLabel(schema.items) : 'values'}`;
  if (type === 'object' && !schema.properties) return 'object';
  const bounds =
    schema.minimum !== undefined || schema.maximum !== undefined
      ? ` ${schema.minimum ?? ''}–${schema.maximum ?? ''}`
      : '';
  return `${type}${bounds}`;
}

function cell(text: string | undefined): string {
  return (text ?? '').replace(/\|/g, '\\|');
}

function keyTable(schema: TSchema, skip: ReadonlySet<string> = new Set()): string {
  const object = node(schema);
  const required = new Set(object.required ?? []);
  const rows = Object.entries(object.properties ?? {})
    .filter(([key]) => !skip.has(key))
    .map(
      ([key, prop]) =>
        `| \`${key}\` | ${required.has(key) ? 'yes' : ''} | ${cell(typeLabel(prop))} | ${cell(prop.description)} |`,
    );
  return ['| key | required | type | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

const EXAMPLE = {
  $schema: '../resource.schema.json',
  name: 'tasks',
  entity: 'Task',
  prefix: '/tasks',
  tags: ['tasks'],
  expose_schemas: true,
  fields: {
    id: { type: 'uuid', primary: true },
    title: { type: 'string', max_length: 255, index: true },
    priority: { type: 'enum', values: ['low', 'medium', 'high'], default: 'medium' },
    budget: { type: 'decimal', precision: 12, scale: 2, nullable: true, default: null },
    is_completed: { type: 'boolean', default: false, create: false },
    created_at: { type: 'datetime', auto: 'now', readonly: true },
  },
  relations: {
    project: { kind: 'many-to-one', target: 'projects', nullable: true, on_delete: 'set null' },
    labels: { kind: 'many-to-many', target: 'labels' },
  },
};

/** The whole of `docs/manifest.md`. */
export function manifestReference(): string {
  return `<!-- Generated from generator/manifest/schema.ts by \`npm run docs:manifest\`; edit the schema, not this file. -->
# The resource manifest

Each app has one manifest, \`src/apps/<module>/<module>.resource.json\`. \`core generate\` turns it into the
app's model, schemas, repository, service, router and test, and writes a migration for the change. The
manifest names \`"$schema": "../resource.schema.json"\`, so editors complete and check it as you type; the
CLI validates it against the same schema and names the JSON path of every problem
(\`$.fields.title.max_length: expected an integer ≥ 1\`) before it writes anything.

\`\`\`json
${JSON.stringify(EXAMPLE, null, 2)}
\`\`\`

## Top-level keys

${keyTable(ManifestSchema, new Set(['$schema']))}

## Fields

\`fields\` maps each wire name (the JSON key, the column, the search field and the restriction entry
\`<name>.<field>\` all use it) to a field. Exactly one field is \`primary\`.

Types: ${FIELD_TYPES.map((t) => `\`${t}\``).join(', ')}.

| type | on the wire | notes |
|---|---|---|
| \`uuid\` | string, format uuid | a \`primary\` uuid is generated (v4) and output-only |
| \`string\` | string | \`max_length\` (default 255), \`min_length\`, \`format\` |
| \`text\` | string | no length limit in the column |
| \`integer\` | number | 32-bit; \`minimum\`, \`maximum\` |
| \`bigint\` | string of digits | 64-bit; a string so that JavaScript clients keep every digit |
| \`float\` | number | double precision |
| \`decimal\` | string such as \`"3.50"\` | \`precision\` and \`scale\` (default 12 and 2); always written with the scale's digits |
| \`boolean\` | \`true\` / \`false\` | |
| \`date\` | string \`YYYY-MM-DD\` | |
| \`datetime\` | string, RFC 3339 | \`auto: "now"\` or \`"now_on_update"\` for timestamps the system sets |
| \`json\` | any JSON value | stored as JSON (jsonb on PostgreSQL) |
| \`enum\` | one of \`values\` | |

${keyTable(FieldSchema)}

## Relations

\`relations\` maps a relation name to its kind and target (another manifest's \`name\`). Kinds:
${RELATION_KINDS.map((k) => `\`${k}\``).join(', ')}. A to-one relation is written in bodies as \`<relation>_id\`
(\`project_id\`), a many-to-many as \`<singular>_ids\` (\`label_ids\`); related rows appear under the
relation's name when a request includes them (\`?include=project,labels\`).

${keyTable(RelationSchema)}
`;
}
