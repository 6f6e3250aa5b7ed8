/**
 * `core generate [module_name] [--dry-run]`
 *
 * Validates every manifest first (all problems of all files, with their JSON paths; nothing is
 * written if one fails), regenerates each app (or the one named) in memory, then prints one line per
 * file — CREATE / UPDATE / UNCHANGED / SKIP / CONFLICT — and writes. A file edited by hand is never
 * overwritten (CONFLICT). With --dry-run the same lines say what would happen and nothing is
 * written. When files changed, a migration for the schema change follows, applied right away in
 * development (`migration-step.ts`), then the typed client the generated tests call the apps through
 * (`core client`), also written when it is missing. In a project where the client cannot be written
 * (not installed yet), the tests are left out, so that none imports a missing client. The project is
 * marked busy meanwhile, so a running `core run` reloads once, after the database matches the new code.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { CliError } from './errors.js';
import { projectRoot } from './context.js';
import { info, printChanges, summarize, warn } from './output.js';
import { moduleNameProblem } from '../project/names.js';
import { appDir } from '../project/root.js';

interface GenerateOptions {
  dryRun?: boolean;
  migration: boolean;
  apply: boolean;
}

export function generateCommand(): Command {
  return new Command('generate')
    .description('regenerate every app (or one) from its manifest; hand edits are kept')
    .argument('[module_name]', 'only this app (src/apps/<module_name>/)')
    .option('--dry-run', 'print what would change; write nothing')
    .option('--no-migration', 'do not write a migration afterwards')
    .option('--no-apply', 'write the migration but do not apply it (it is applied in development otherwise)')
    .addHelpText(
      'after',
      `
Each file is reported as CREATE, UPDATE, UNCHANGED, SKIP (yours, left alone) or CONFLICT
(edited by hand since it was generated: left untouched; move the edit to a user-owned file or delete
the file to regenerate it). A second run without manifest changes changes nothing.

When ENVIRONMENT is development, the migration is applied too, unless it would lose data (a dropped
column or table that holds values, a narrower type, NOT NULL over NULLs…): then it is written but
not applied, and the command exits with code 3 and says what to do. A running \`core run\` reloads
once the database matches the new code.

The generated tests call the apps through the typed client (src/client/, \`core client\`), which
follows: written after a change, or when it is missing. In a project not installed yet the tests
are left out (none imports a missing client); run \`core generate\` again once it is.

Examples:
  core generate
  core generate tasks --dry-run`,
    )
    .action(async (module: string | undefined, options: GenerateOptions) => runGenerate(module, options));
}

async function runGenerate(module: string | undefined, options: GenerateOptions): Promise<void> {
  if (module !== undefined) {
    const problem = moduleNameProblem(module);
    if (problem) throw new CliError(problem);
  }
  const root = projectRoot();
  const [{ Tree }, { ManagedFiles }, { loadManifests, manifestMap }, { generateApp }, { manifestSchemaFile }] =
    await Promise.all([
      import('../engine/tree.js'),
      import('../engine/managed-files.js'),
      import('../project/manifests.js'),
      import('../generators/app/index.js'),
      import('../project/schema-file.js'),
    ]);

  const all = loadManifests(root); // throws with every problem of every manifest
  if (all.length === 0)
    throw new CliError(
      'no apps to generate: src/apps/ has no <module>/<module>.resource.json; add one with `core startapp <name>`',
    );
  const selected = module === undefined ? all : all.filter((entry) => entry.module === module);
  if (selected.length === 0) {
    throw new CliError(
      `no app named ${module}: ${appDir(module!)}/${module}.resource.json not found (apps: ${all.map((e) => e.module).join(', ')})`,
    );
  }

  const manifests = manifestMap(all);
  const modules = new Map(all.map((entry) => [entry.manifest.name, entry.module]));
  const { CLIENT_DIR, clientProblem, warnTestsLeftOut, writeClientAfterGenerate } = await import('./client.js');
  const noClient = await clientProblem(root);
  const tree = new Tree(root);
  for (const entry of selected) {
    await generateApp(tree, entry.manifest, {
      module: entry.module,
      dir: appDir(entry.module),
      manifestPath: entry.path,
      manifests,
      modules,
      test: noClient === null,
    });
  }
  const leftOut = noClient === null ? [] : selected.map((entry) => entry.module);
  const managed = new ManagedFiles(root);
  const schemaFile = manifestSchemaFile();
  managed.write(schemaFile.path, schemaFile.content);

  if (options.dryRun) {
    const planned = [...tree.changes(), ...managed.changes()].sort((a, b) => a.path.localeCompare(b.path));
    printChanges(planned);
    info(`Dry run: ${summarize(planned)}; nothing was written.`);
    if (noClient !== null) await warnTestsLeftOut(leftOut, noClient);
    return;
  }

  const { holdBusy } = await import('../project/busy.js');
  const release = holdBusy(root, 'generate');
  let changes: ReturnType<typeof tree.commit>;
  try {
    changes = [...tree.commit(), ...managed.commit()].sort((a, b) => a.path.localeCompare(b.path));
    printChanges(changes);
    info(summarize(changes));

    // The schema file follows the CLI's version, not the manifests: it alone does not call for a migration.
    const codeChanged = changes.some((c) => (c.kind === 'CREATE' || c.kind === 'UPDATE') && c.path !== schemaFile.path);
    try {
      if (codeChanged && options.migration) {
        const { migrateAfterGenerate } = await import('./migration-step.js');
        await migrateAfterGenerate(root, { apply: options.apply });
      }
    } finally {
      // Also when the migration step stops the command: the tests just written import the client.
      if (noClient !== null) await warnTestsLeftOut(leftOut, noClient);
      else if (codeChanged || !existsSync(join(root, CLIENT_DIR))) await writeClientAfterGenerate(root);
    }
  } finally {
    release();
  }

  const conflicts = changes.filter((c) => c.kind === 'CONFLICT');
  if (conflicts.length > 0) {
    warn("a file in conflict keeps your edit and misses the manifest change; see each file's reason above");
    throw new CliError(
      `${conflicts.length} file${conflicts.length === 1 ? '' : 's'} in conflict left untouched: ${conflicts.map((c) => c.path).join(', ')}`,
      2,
    );
  }
}
