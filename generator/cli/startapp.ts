/**
 * `core startapp <module_name> [--template]`
 *
 * Writes the app's manifest, generates its modules, registers its plugin in `src/main.ts` and then,
 * when the project's dependencies are installed, writes the migration for its tables (and applies it
 * in development, `migration-step.ts`) and the typed client its test calls it through (`core client`).
 * In a project not installed yet the test is left out, so that it never imports a missing client:
 * `core generate` writes both once the project is installed. Every file is
 * computed in memory first; a problem anywhere (a taken name, a main.ts the edit cannot place, a
 * conflict) leaves the project untouched.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import type { ManagedFiles } from '../engine/managed-files.js';
import type { Manifest } from '../manifest/schema.js';
import { CliError } from './errors.js';
import { info, printChanges } from './output.js';
import { moduleNameProblem } from '../project/names.js';
import { appDir, MAIN_FILE, manifestPath, POLICIES_FILE } from '../project/root.js';
import { projectRoot } from './context.js';

interface StartAppOptions {
  template?: boolean;
  register: boolean;
  migration: boolean;
  apply: boolean;
}

export function startappCommand(): Command {
  return new Command('startapp')
    .description(
      'add an app (a resource with its model, schemas, repository, service, router and plugin) to the project',
    )
    .argument('<module_name>', "the app's folder under src/apps/, lower snake_case (e.g. tasks, order_items)")
    .option(
      '--template',
      'start from the starter task resource (title, description, priority, is_completed, assignee_email)',
    )
    .option('--no-register', 'do not add the plugin to src/main.ts')
    .option('--no-migration', 'do not write a migration afterwards')
    .option('--no-apply', 'write the migration but do not apply it (it is applied in development otherwise)')
    .addHelpText(
      'after',
      `
Without --template you are asked for the fields on a terminal; otherwise (no terminal) the manifest
has only a uuid "id": add fields to src/apps/<module_name>/<module_name>.resource.json, then run
\`core generate <module_name>\`.

The app's test (test/apps/<module_name>.test.ts) calls it through the typed client (src/client/),
written afterwards; in a project not installed yet the test is left out until \`core generate\`.

Examples:
  core startapp tasks --template
  core startapp order_items`,
    )
    .action(async (module: string, options: StartAppOptions) => runStartApp(module, options));
}

async function runStartApp(module: string, options: StartAppOptions): Promise<void> {
  const problem = moduleNameProblem(module);
  if (problem) throw new CliError(problem);
  const root = projectRoot();
  const dir = appDir(module);
  if (existsSync(join(root, dir)) && readdirSync(join(root, dir)).length > 0) {
    throw new CliError(
      `the app ${module} already exists (${dir}); edit ${manifestPath(module)} and run \`core generate ${module}\``,
    );
  }

  const [
    { Tree },
    { ManagedFiles },
    { validateManifest },
    starter,
    { generateApp, appPlugin },
    { loadManifests, manifestMap },
    { manifestSchemaFile },
  ] = await Promise.all([
    import('../engine/tree.js'),
    import('../engine/managed-files.js'),
    import('../manifest/validate.js'),
    import('../project/starter-manifest.js'),
    import('../generators/app/index.js'),
    import('../project/manifests.js'),
    import('../project/schema-file.js'),
  ]);

  let draft: unknown;
  if (options.template) draft = starter.templateManifest(module);
  else if (process.stdin.isTTY && process.stdout.isTTY)
    draft = starter.manifestWithFields(module, await askFields(module));
  else draft = starter.minimalManifest(module);
  const path = manifestPath(module);
  const manifest = validateManifest(draft, path);

  const others = loadManifests(root);
  const taken = others.find((other) => other.manifest.name === manifest.name);
  if (taken)
    throw new CliError(
      `the resource name "${manifest.name}" is already used by ${taken.path}; choose another module name`,
    );
  const manifests = manifestMap(others).set(manifest.name, manifest);

  const tree = new Tree(root);
  tree.write(path, starter.manifestText(manifest), 'refuse');
  const modules = new Map([
    ...others.map((other) => [other.manifest.name, other.module] as const),
    [manifest.name, module],
  ]);
  const { clientProblem, warnTestsLeftOut, writeClientAfterGenerate } = await import('./client.js');
  const noClient = await clientProblem(root);
  await generateApp(tree, manifest, {
    module,
    dir,
    manifestPath: path,
    manifests,
    modules,
    template: options.template === true,
    test: noClient === null,
  });

  const managed = new ManagedFiles(root);
  const schemaFile = manifestSchemaFile();
  managed.write(schemaFile.path, schemaFile.content);
  if (options.register) await registerInMain(managed, appPlugin(module));

  const planned = [...tree.changes(), ...managed.changes()];
  const conflicts = planned.filter((change) => change.kind === 'CONFLICT');
  if (conflicts.length > 0) {
    printChanges(conflicts);
    throw new CliError(
      `${conflicts.length} file${conflicts.length === 1 ? '' : 's'} in the way (see above): nothing was written`,
    );
  }
  // Marked busy so that a running `core run` reloads once, with the new tables in place.
  const { holdBusy } = await import('../project/busy.js');
  const release = holdBusy(root, 'startapp');
  try {
    const changes = [...tree.commit(), ...managed.commit()].sort((a, b) => a.path.localeCompare(b.path));
    printChanges(changes);
    try {
      if (options.migration) {
        const { migrateAfterGenerate } = await import('./migration-step.js');
        await migrateAfterGenerate(root, { apply: options.apply });
      }
    } finally {
      // Also when the migration step stops the command: the test just written imports the client.
      if (noClient === null) await writeClientAfterGenerate(root);
      else await warnTestsLeftOut([module], noClient);
    }
  } finally {
    release();
  }
  info('');
  info(
    `App ${module} added. Edit ${path} and run \`core generate ${module}\` to regenerate; \`core run\` to serve it.`,
  );
  printRowFilterExample(await import('../generators/app/row-filter-example.js'), manifest, path);
}

/** How to confine users to their own rows of the new table: printed, never written into src/policies.json. */
function printRowFilterExample(
  { rowFilterExample, missingOwnerNote, EXAMPLE_ROLE }: typeof import('../generators/app/row-filter-example.js'),
  manifest: Manifest,
  path: string,
): void {
  const example = rowFilterExample(manifest);
  info('');
  info(
    `To confine users to their own ${example.table}, add a role like this to "roles" in ${POLICIES_FILE} (core never edits it):`,
  );
  for (const line of example.role) info(`  ${line}`);
  info(
    `A ${EXAMPLE_ROLE} then reaches only the ${example.table} whose ${example.field} equals the sub of their token, ` +
      `and what they create gets it from the token (try it: \`core token --role ${EXAMPLE_ROLE} --sub <id>\`).`,
  );
  const note = missingOwnerNote(example, path);
  if (note) info(note);
}

async function askFields(module: string) {
  const { promptFields, PromptCancelled } = await import('../project/prompt-fields.js');
  try {
    return await promptFields(module);
  } catch (error) {
    if (error instanceof PromptCancelled) throw new CliError(error.message, 130);
    throw error;
  }
}

async function registerInMain(managed: ManagedFiles, plugin: { className: string; importPath: string }): Promise<void> {
  const source = managed.read(MAIN_FILE);
  if (source === null)
    throw new CliError(`${MAIN_FILE} not found: the plugin cannot be registered; restore it, or pass --no-register`);
  const { registerPlugin, RegisterPluginError } = await import('../ast/register-plugin.js');
  try {
    // Written even when unchanged, so the output lists main.ts as UNCHANGED (already registered).
    managed.write(MAIN_FILE, registerPlugin(source, plugin, MAIN_FILE).content, source);
  } catch (error) {
    if (error instanceof RegisterPluginError) throw new CliError(error.message);
    throw error;
  }
}
