/**
 * An example role that confines users to their own rows of a table, for `core startapp` to print and
 * the project README to show: a newcomer sees how `row_filters` in src/policies.json work on their
 * own table. Core never writes it into the policies: roles are the project's decision.
 *
 * The owner field is guessed from the names users give such fields (`owner_id`, `user_id`,
 * `author_id`, `created_by`…) among the text and uuid fields, since the filter compares it with the
 * token's `sub` claim, a string. Without one, the example names `owner_id` as a field to add.
 */
import type { Manifest } from '../../manifest/schema.js';

export interface RowFilterExample {
  readonly table: string;
  /** The field the filter compares with the token's `sub`. */
  readonly field: string;
  /** False: the table has no field that could hold an owner, and `field` is one to add. */
  readonly present: boolean;
  /** The role as JSON lines, to paste into `roles` of src/policies.json. */
  readonly role: readonly string[];
}

export const EXAMPLE_ROLE = 'member';
const SUGGESTED_FIELD = 'owner_id';
const OWNER_NAME = /^(owner|user|author|creator|created_by|account|member)(_id|_sub)?$/;
const OWNER_TYPES = new Set(['string', 'text', 'uuid']);

export function rowFilterExample(manifest: Manifest): RowFilterExample {
  const candidates = Object.entries(manifest.fields).filter(
    ([name, spec]) => OWNER_NAME.test(name) && OWNER_TYPES.has(spec.type) && spec.primary !== true,
  );
  const found = candidates.find(([name]) => name === SUGGESTED_FIELD) ?? candidates[0];
  const field = found?.[0] ?? SUGGESTED_FIELD;
  const table = manifest.name;
  const filter = `[{ "field": ${JSON.stringify(field)}, "op": "eq", "value": { "$claim": "sub" } }]`;
  return {
    table,
    field,
    present: found !== undefined,
    role: [
      `"${EXAMPLE_ROLE}": {`,
      `  "permissions": [${JSON.stringify(`${table}:*`)}],`,
      '  "restricted_fields": [],',
      `  "row_filters": { ${JSON.stringify(table)}: ${filter} }`,
      '}',
    ],
  };
}

/** What the example needs first when the table has no owner field: one to add to the manifest. */
export function missingOwnerNote(example: RowFilterExample, manifestPath: string): string | undefined {
  if (example.present) return undefined;
  return (
    `${example.table} has no field that could hold an owner: add one to ${manifestPath} first, ` +
    `e.g. "${example.field}": { "type": "string", "max_length": 255 }, holding the user's id (the token's sub).`
  );
}
