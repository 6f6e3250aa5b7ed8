/**
 * `core generate [module_name] [--dry-run]`
 *
 * Validates every manifest first (all problems of all files, with their JSON paths; nothing is
 * written if one fails), regenerates each app (or the one named) in memory, then prints one line per
 * file — CREATE / UPDATE / UNCHANGED / SKIP / CONFLICT — and writes. A file edited by hand is never
 * overwritten (CONFLICT). With --dry-run the same lines say what would happen and nothing is
 * written. When files changed, a migration for the schema change follows, applied right away in
 * development (`migration-step.ts`). The project is marked busy meanwhile, so a running `core run`
 * reloads once, after the database matches the new code.
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
  const tree = new Tree(root);
  for (const entry of selected) {
    await generateApp(tree, entry.manifest, {
      module: entry.module,
      dir: appDir(entry.module),
      manifestPath: entry.path,
      manifests,
      modules,
    });
  }
  const managed = new ManagedFiles(root);
  const schemaFile = manifestSchemaFile();
  managed.write(schemaFile.path, schemaFile.content);

  if (options.dryRun) {
    const planned = [...tree.changes(), ...managed.changes()].sort((a, b) => a.path.localeCompare(b.path));
    printChanges(planned);
    info(`Dry run: ${summarize(planned)}; nothing was written.`);
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
    if (codeChanged && options.migration) {
      const { migrateAfterGenerate } = await import('./migration-step.js');
      await migrateAfterGenerate(root, { apply: options.apply });
    }
    if (codeChanged) await refreshClient(root);
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

/** The typed client (`core client`), once the project has one: it follows the routes just generated. */
async function refreshClient(root: string): Promise<void> {
  const { CLIENT_DIR, writeClient } = await import('./client.js');
  if (!existsSync(join(root, CLIENT_DIR))) return;
  const code = await writeClient(root).catch((error: unknown) => {
    warn(`the typed client was not refreshed: ${(error as Error).message}`);
    return 0;
  });
  if (code !== 0) warn('the typed client was not refreshed (see above); run `core client` once the app builds');
}
