/**
 * The files of a new project (`core init`), written into an in-memory tree. Pure: the caller picks
 * the secret and the runtime tarball, commits the tree and copies the tarball (binary) into `vendor/`.
 */
import type { Tree } from '../../engine/tree.js';
import { render } from '../../engine/render.js';
import { templateManifest } from '../../project/starter-manifest.js';
import { EXAMPLE_ROLE, rowFilterExample } from '../app/row-filter-example.js';

export type DatabaseKind = 'sqlite' | 'postgres';
export const DATABASE_KINDS: readonly DatabaseKind[] = ['sqlite', 'postgres'];

export interface ProjectOptions {
  /** Already validated (see `projectNameProblem`). */
  name: string;
  db: DatabaseKind;
  /** `SECRET_KEY` for `.env`: 64 hex characters. */
  secretKey: string;
  /** File name of the runtime tarball under `vendor/`. */
  runtimeTarball: string;
  /** File name of the CLI tarball under `vendor/` (the project's `core` command). */
  cliTarball: string;
}

/** Where the migration runner lives inside the installed runtime package (for package.json scripts). */
export const MIGRATION_RUNNER = 'node_modules/@core/runtime/dist/migrations/cli.js';

export function databaseUrlFor(name: string, db: DatabaseKind): string {
  return db === 'sqlite' ? 'sqlite:./dev.db' : `postgresql://postgres@127.0.0.1:5432/${name}`;
}

/** Writes every file of the project (never over an existing one: rule `refuse`). */
export function generateProject(tree: Tree, options: ProjectOptions): void {
  const databaseUrl = databaseUrlFor(options.name, options.db);
  const data = {
    projectName: options.name,
    packageName: options.name,
    databaseUrl,
    secretKey: options.secretKey,
    runtimeTarball: options.runtimeTarball,
    cliTarball: options.cliTarball,
    migrationRunner: MIGRATION_RUNNER,
  };
  // The README's row filter example is the one `core startapp tasks --template` prints.
  const example = rowFilterExample(templateManifest('tasks'));
  const readme = {
    rowFilterTable: example.table,
    rowFilterField: example.field,
    rowFilterRoleName: EXAMPLE_ROLE,
    rowFilterRole: example.role.join('\n'),
    rowFilterNote: example.present
      ? ''
      : `The starter \`${example.table}\` has no such field: add one to its manifest first (then \`npx core generate\`),\n` +
        `\`"${example.field}": { "type": "string", "max_length": 255 }\`, holding the id of the user a row belongs to.`,
  };
  const databaseSection = render(
    options.db === 'sqlite' ? 'project/readme-sqlite.md.hbs' : 'project/readme-postgres.md.hbs',
    data,
  ).trimEnd();

  const files: [path: string, template: string][] = [
    ['src/main.ts', 'main.ts.hbs'],
    ['src/policies.json', 'policies.json.hbs'],
    ['test/smoke.test.ts', 'smoke.test.ts.hbs'],
    ['.env', 'env.hbs'],
    ['.env.example', 'env.example.hbs'],
    ['.gitignore', 'gitignore.hbs'],
    ['package.json', 'package.json.hbs'],
    ['tsconfig.json', 'tsconfig.json.hbs'],
    ['tsconfig.build.json', 'tsconfig.build.json.hbs'],
    // The repository's formatter settings: generated code is written the way they format it.
    ['biome.json', 'biome.json.hbs'],
    ['.editorconfig', 'editorconfig.hbs'],
    ['scripts/build.mjs', 'build.mjs.hbs'],
    ['README.md', 'README.md.hbs'],
    // Shipping: the production image, what stays out of it, and N instances on PostgreSQL + NATS.
    ['Dockerfile', 'Dockerfile.hbs'],
    ['.dockerignore', 'dockerignore.hbs'],
    ['compose.yaml', 'compose.yaml.hbs'],
  ];
  for (const [path, template] of files)
    tree.write(path, render(`project/${template}`, { ...data, ...readme, databaseSection }), 'refuse');

  // Git keeps no empty folders; the marker keeps `src/apps/` in a fresh clone.
  tree.write('src/apps/.gitkeep', '', 'refuse');
  // An empty file is a valid, empty SQLite database.
  if (options.db === 'sqlite') tree.write('dev.db', '', 'refuse');
}
