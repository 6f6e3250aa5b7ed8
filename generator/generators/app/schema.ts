/**
 * `schemas.ts` (generator-owned): the three context schemas of the resource — `<Entity>Create` (POST
 * body), `<Entity>Update` (PUT body, and PATCH read with `mode: 'patch'`), `<Entity>Out` (every
 * response) — and their `SchemaInput` / `SchemaPatch` / `SchemaOutput` type aliases.
 */
import { array, call, object, print, str, type Expr } from '../../engine/code.js';
import { Imports } from '../../engine/imports.js';
import { render } from '../../engine/render.js';
import { inputSchema, keySchema, outputSchema } from './fields.js';
import type { AppModel } from './normalize.js';

export function renderSchemas(app: AppModel): string {
  const { names } = app;
  const imports = new Imports()
    .value('typebox', 'Type')
    .value('@core/runtime', 'ContextSchema')
    .type('@core/runtime', 'SchemaInput', 'SchemaOutput', 'SchemaPatch');

  const create = app.fields.filter((f) => f.inCreate).map((f) => [f.name, inputSchema(f)] as const);
  const update = app.fields.filter((f) => f.inUpdate).map((f) => [f.name, inputSchema(f)] as const);
  const out = app.fields.filter((f) => f.inOutput).map((f) => [f.name, outputSchema(f)] as const);
  const foreignKeys: [string, string][] = [];
  const relations: [string, Expr][] = [];

  for (const r of app.relations) {
    if (r.owner && r.key) {
      const key = keySchema(r.target.pk.type, 'input');
      const input =
        r.kind === 'many-to-many'
          ? call('Type.Optional', call('Type.Array', key, object([['default', array([])]])))
          : r.nullable
            ? call('Type.Optional', call('Type.Union', array([key, 'Type.Null()']), object([['default', 'null']])))
            : key;
      create.push([r.key, input]);
      update.push([r.key, input]);
      foreignKeys.push([r.key, r.name]);
    }
    const toOneKey = r.owner && r.kind !== 'many-to-many' ? r.key : undefined;
    if (toOneKey) {
      const key = keySchema(r.target.pk.type, 'output');
      out.push([toOneKey, r.nullable ? call('Type.Union', array([key, 'Type.Null()'])) : key]);
    }
    const outSchema = `${r.target.entity}Out`;
    if (r.target.table !== app.manifest.name) imports.value(`../${r.target.module}/schemas.js`, outSchema);
    const many = r.kind === 'one-to-many' || r.kind === 'many-to-many';
    relations.push([
      r.name,
      object([
        ['schema', `() => ${outSchema}`],
        ['many', String(many)],
        ...(toOneKey ? [['foreignKey', str(toOneKey)] as const] : []),
      ]),
    ]);
  }

  return render('app/schemas.ts.hbs', {
    banner: [
      `The ${names.singularWords} schemas (request bodies and responses), generated from ${app.manifestFile}: change the`,
      `fields there and run \`core generate ${app.module}\`. An edit here is reported as a conflict and stops`,
      'regeneration; write schemas of your own in another file.',
    ],
    imports: imports.render(),
    names,
    prefix: app.prefix.replace(/\/$/, ''),
    createFields: fieldsObject(create),
    updateFields: fieldsObject(update),
    outFields: fieldsObject(out),
    foreignKeys:
      foreignKeys.length > 0 ? print(object(foreignKeys.map(([k, v]) => [k, str(v)] as const)), 2, 45, 1) : '',
    relations: relations.map(([name, spec]) => `    ${name}: ${print(spec, 4, name.length + 6, 1)},`),
  });
}

/** `Type.Object({ … })`, one field per line (or `Type.Object({})`). */
function fieldsObject(entries: readonly (readonly [string, Expr])[]): string {
  if (entries.length === 0) return 'Type.Object({})';
  return `Type.Object({\n${entries.map(([name, value]) => `    ${name}: ${print(value, 4, name.length + 6, 1)},\n`).join('')}  })`;
}
