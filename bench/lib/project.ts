/**
 * The Core project the bench measures, made by the real CLI the way a user makes it (installs left out):
 *
 *   core init benchapp --no-install
 *   core startapp tasks --template --no-migration      the task app, registered in src/main.ts
 *   (the manifest replaced by fixtures/specs/tasks.resource.json, policies by the fixture's)
 *   core generate --no-migration
 *
 * The manifest and the policies are the fixture's so the project serves exactly the routes, fields and
 * roles the baselines implement, whatever the `--template` starter becomes; they are what a user edits.
 * Today both are identical to what the CLI writes, and `core generate` reports every file unchanged.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { POLICIES_PATH, ROOT } from './config.js';

const run = promisify(execFile);
const CORE_BIN = join(ROOT, 'generator/bin/core.js');
const MANIFEST = join(ROOT, 'fixtures/specs/tasks.resource.json');

/** The project's folder name; cpu-profile.ts recognises the app's own files by it. */
export const PROJECT_NAME = 'benchapp';

async function core(args: readonly string[], cwd: string): Promise<void> {
  // Plain output, no stack traces: the CLI as a user runs it.
  const { CORE_DEBUG: _debug, ...env } = process.env;
  try {
    await run(process.execPath, [CORE_BIN, ...args], { cwd, env: { ...env, NO_COLOR: '1' }, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr, stdout, code } = error as { stderr?: string; stdout?: string; code?: number };
    throw new Error(`core ${args.join(' ')} failed (exit ${code ?? '?'}) in ${cwd}:\n${stderr || stdout || (error as Error).message}`, { cause: error });
  }
}

/** Generates the project in `<workDir>/benchapp` and returns that path. */
export async function generateCoreProject(workDir: string): Promise<string> {
  const project = join(workDir, PROJECT_NAME);
  // The first `core init` after a runtime change also builds and packs the runtime tarball (cached by
  // a hash of runtime/src); the bench itself bundles runtime/src directly and never installs it.
  await core(['init', PROJECT_NAME, '--no-install'], workDir);
  await core(['startapp', 'tasks', '--template', '--no-migration'], project);

  const manifestPath = join(project, 'src/apps/tasks/tasks.resource.json');
  const { $schema } = JSON.parse(readFileSync(manifestPath, 'utf8')) as { $schema?: string };
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, unknown>;
  writeFileSync(manifestPath, `${JSON.stringify($schema ? { $schema, ...manifest } : manifest, null, 2)}\n`);
  copyFileSync(POLICIES_PATH, join(project, 'src/policies.json'));

  await core(['generate', '--no-migration'], project);
  return project;
}
