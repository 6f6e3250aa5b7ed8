/**
 * `models.ts` (generator-owned): the model class (`declare`d fields, so TypeScript knows the row
 * shape) and its MikroORM schema (`defineModel` with `p` builders). Relations are thunks, so models
 * of different apps may import each other in a cycle.
 */
import { call, chain, print, str, type Expr } from '../../engine/code.js';
import { Imports } from '../../engine/imports.js';
import { article, singular, words } from '../../engine/names.js';
import { render } from '../../engine/render.js';
import { modelBuilder, modelType, VERSION_DESCRIPTION } from './fields.js';
import type { AppModel } from './normalize.js';
import type { DeleteRule, ResolvedRelation } from './relations.js';

interface Declared {
  readonly name: string;
  readonly type: string;
  readonly doc?: string;
}

export function renderModels(app: AppModel): string {
  const { names } = app;
  const imports = new Imports().value('@core/runtime', 'Base', 'defineModel').value('@mikro-orm/core', 'p');
  if (app.primary.type === 'uuid') imports.value('node:crypto', 'randomUUID');

  const declared: Declared[] = app.fields.map((f) => {
    const doc = f.spec.description ?? (f.version ? `${VERSION_DESCRIPTION}.` : undefined);
    return { name: f.name, type: modelType(f), ...(doc ? { doc } : {}) };
  });
  const version = app.fields.find((f) => f.version);
  // With options after it, the builders object is not the last argument and cannot hug the call:
  // every argument goes on its own line, the builders one level deeper.
  const indent = version ? 4 : 2;
  const builders: string[] = app.fields.map((f) => line(f.name, modelBuilder(f), indent));

  for (const relation of app.relations) {
    const target = relation.target.entity;
    if (relation.target.table !== app.manifest.name) imports.value(`../${relation.target.module}/models.js`, target);
    const toMany = relation.kind === 'one-to-many' || relation.kind === 'many-to-many';
    imports.type('@mikro-orm/core', toMany ? 'Collection' : 'Ref');
    const type = toMany ? `Collection<${target}>` : relation.nullable ? `Ref<${target}> | null` : `Ref<${target}>`;
    declared.push({ name: relation.name, type, doc: relationDoc(app, relation) });
    const column = indent + relation.name.length + 8; // after `name: () => `
    builders.push(line(relation.name, `() => ${print(relationBuilder(relation), indent, column, 1)}`, indent));
  }

  return render('app/models.ts.hbs', {
    banner: banner(app),
    imports: imports.render(),
    classDoc: `${capitalize(names.article)} ${names.singularWords} (table \`${names.table}\`; also the permission namespace, e.g. \`${names.table}:view\`).`,
    entity: names.entity,
    table: names.table,
    modelSchema: names.modelSchema,
    declared,
    builders,
    // The repository increments the version column on every update, with a compare-and-set for If-Match.
    modelOptions: version ? `{ version: ${str(version.name)} }` : '',
  });
}

function banner(app: AppModel): string[] {
  return [
    `The ${app.names.singularWords} model, generated from ${app.manifestFile}: change the fields there and run`,
    `\`core generate ${app.module}\`. An edit here is reported as a conflict and stops regeneration;`,
    'business rules belong in services.ts, queries in repositories.ts.',
  ];
}

function line(name: string, value: Expr, indent: number): string {
  return `${' '.repeat(indent)}${name}: ${print(value, indent, indent + name.length + 2, 1)},`;
}

/** `p.manyToOne(Project).ref().index().nullable().deleteRule('set null')` and friends. */
function relationBuilder(r: ResolvedRelation): Expr {
  const target = r.target.entity;
  const links: (readonly [string, ...Expr[]])[] = [];
  switch (r.kind) {
    case 'many-to-one':
      // Indexed on every database: MikroORM indexes foreign keys on SQLite only, and without an index
      // a PostgreSQL include or relation filter from the other side scans the whole table.
      links.push(['ref'], ['index']);
      if (r.nullable) links.push(['nullable']);
      links.push(['deleteRule', str(r.onDelete!)]);
      return chain(call('p.manyToOne', target), ...links);
    case 'one-to-one':
      if (r.owner) {
        links.push(['owner']);
        if (r.inversedBy) links.push(['inversedBy', str(r.inversedBy)]);
        links.push(['ref']);
        if (r.nullable) links.push(['nullable']);
        links.push(['deleteRule', str(r.onDelete!)]);
      } else {
        links.push(['mappedBy', str(r.mappedBy!)], ['ref'], ['nullable']);
      }
      return chain(call('p.oneToOne', target), ...links);
    case 'one-to-many':
      return chain(call('p.oneToMany', target), ['mappedBy', str(r.mappedBy!)]);
    case 'many-to-many':
      if (r.owner) {
        links.push(['owner']);
        if (r.inversedBy) links.push(['inversedBy', str(r.inversedBy)]);
      } else {
        links.push(['mappedBy', str(r.mappedBy!)]);
      }
      return chain(call('p.manyToMany', target), ...links);
  }
}

/** One line saying what the relation is and how it is written, for the `declare`. */
function relationDoc(app: AppModel, r: ResolvedRelation): string {
  const target = words(r.target.entity);
  const these = app.names.pluralWords;
  const owning = `${r.target.entity}.${r.mappedBy}`;
  switch (r.kind) {
    case 'many-to-one':
      return `Many-to-one, written as \`${r.key}\`: ${deletePhrase(r.onDelete!, target, these, these)}.`;
    case 'one-to-one': {
      const one = app.names.singularWords;
      if (r.owner)
        return `One-to-one, owning side (\`${r.key}\`, unique): ${deletePhrase(r.onDelete!, target, one, `${app.names.article} ${one}`)}.`;
      return `One-to-one, inverse side of \`${owning}\`: set it from the ${target} (\`${r.mappedBy}_id\`).`;
    }
    case 'one-to-many':
      return `One-to-many, inverse side of \`${owning}\`: set it from each ${target} (\`${r.mappedBy}_id\`).`;
    case 'many-to-many':
      if (r.owner) return `Many-to-many, owning side (the pivot table), written as \`${r.key}\`.`;
      return `Many-to-many, inverse side of \`${owning}\`: written from the ${target} (\`${ownerKey(app, r)}\`).`;
  }
}

/** What deleting the target does, e.g. `deleting the project deletes its tasks too`. */
function deletePhrase(rule: DeleteRule, target: string, its: string, has: string): string {
  switch (rule) {
    case 'set null':
      return `deleting the ${target} sets it to null`;
    case 'cascade':
      return `deleting the ${target} deletes its ${its} too`;
    case 'restrict':
      return `${article(target)} ${target} that still has ${has} cannot be deleted (409)`;
  }
}

/** The wire key of the owning side of an inverse many-to-many (its `ids_field`, or `<singular>_ids`). */
function ownerKey(app: AppModel, r: ResolvedRelation): string {
  const spec = app.manifests.get(r.target.table)?.relations?.[r.mappedBy!];
  return spec?.ids_field ?? `${singular(r.mappedBy!)}_ids`;
}

function capitalize(text: string): string {
  return text[0]!.toUpperCase() + text.slice(1);
}
