/**
 * The Core project the bench measures, made by the real CLI the way a user makes it (installs left out):
 *
 *   core init benchapp --no-install
 *   core startapp tasks --template --no-migration      the task app, registered in src/main.ts
 *   core startapp projects --no-migration               the two apps the include endpoints embed
 *   core startapp comments --no-migration
 *   (the manifests replaced by bench/specs/*.resource.json, the policies by the fixture's)
 *   core generate --no-migration
 *
 * The task manifest is the `--template` starter's (fixtures/specs/tasks.resource.json) plus two
 * relations: `project` (many-to-one, so every task row carries `project_id`) and `comments` (one-to-many).
 * The manifests and the policies are the bench's so the project serves exactly the routes, fields and
 * roles the other servers implement; they are what a user edits.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { POLICIES_PATH, ROOT } from './config.js';

const run = promisify(execFile);
const CORE_BIN = join(ROOT, 'generator/bin/core.js');
/** The apps, in the order `startapp` adds them; their manifests are bench/specs/<app>.resource.json. */
export const APPS = ['tasks', 'projects', 'comments'] as const;

/** The project's folder name; cpu-profile.ts recognises the app's own files by it. */
export const PROJECT_NAME = 'benchapp';

async function core(args: readonly string[], cwd: string): Promise<void> {
  // Plain output, no stack traces: the CLI as a user runs it.
  const { CORE_DEBUG: _debug, ...env } = process.env;
  try {
    await run(process.execPath, [CORE_BIN, ...args], {
      cwd,
      env: { ...env, NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const { stderr, stdout, code } = error as { stderr?: string; stdout?: string; code?: number };
    throw new Error(
      `core ${args.join(' ')} failed (exit ${code ?? '?'}) in ${cwd}:\n${stderr || stdout || (error as Error).message}`,
      { cause: error },
    );
  }
}

/** Generates the project in `<workDir>/benchapp` and returns that path. */
export async function generateCoreProject(workDir: string): Promise<string> {
  const project = join(workDir, PROJECT_NAME);
  // The first `core init` after a runtime change also builds and packs the runtime tarball (cached by
  // a hash of runtime/src); the bench itself bundles runtime/src directly and never installs it.
  await core(['init', PROJECT_NAME, '--no-install'], workDir);
  await core(['startapp', 'tasks', '--template', '--no-migration'], project);
  for (const app of APPS.slice(1)) await core(['startapp', app, '--no-migration'], project);

  for (const app of APPS) {
    const manifestPath = join(project, `src/apps/${app}/${app}.resource.json`);
    const { $schema } = JSON.parse(readFileSync(manifestPath, 'utf8')) as { $schema?: string };
    const manifest = JSON.parse(readFileSync(join(ROOT, `bench/specs/${app}.resource.json`), 'utf8')) as Record<
      string,
      unknown
    >;
    writeFileSync(manifestPath, `${JSON.stringify($schema ? { $schema, ...manifest } : manifest, null, 2)}\n`);
  }
  copyFileSync(POLICIES_PATH, join(project, 'src/policies.json'));

  await core(['generate', '--no-migration'], project);
  return project;
}
