/**
 * Runs the project's migration runner (shipped in the runtime package, `dist/migrations/cli.js`)
 * with the project's own tsx, in the project folder: migrations then use the project's models,
 * node_modules and `.env`, whatever version of the CLI runs them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { markMigrated } from './busy.js';
import { stream } from './process.js';

export const RUNNER = 'node_modules/@core/runtime/dist/migrations/cli.js';

/** The runner's exit code for `up --refuse-data-loss` when it applied nothing to keep data. */
const RUNNER_DATA_LOSS = 3;

/** Why the project cannot run migrations or the dev server yet, or null. */
export function notInstalledProblem(root: string): string | null {
  if (!existsSync(join(root, RUNNER)) || !existsSync(join(root, 'node_modules', 'tsx', 'package.json'))) {
    return `the project's dependencies are not installed (no ${existsSync(join(root, 'node_modules')) ? RUNNER : 'node_modules'}); run \`npm install\` in ${root}`;
  }
  return null;
}

/** `make` writes a migration, `up` applies pending ones. Output goes straight to the terminal. */
export function runMigrations(root: string, command: 'make' | 'up', extra: readonly string[] = []): Promise<number> {
  return stream(process.execPath, ['--import', 'tsx', RUNNER, command, ...extra], { cwd: root });
}

/**
 * Applies the pending migrations unless they would lose data (the runner then lists what, and applies
 * none of them): `applied` (also when none was pending), `data-loss`, or the runner's exit code.
 */
export async function applyPendingMigrations(root: string): Promise<'applied' | 'data-loss' | number> {
  const code = await runMigrations(root, 'up', ['--refuse-data-loss']);
  if (code === 0) markMigrated(root);
  return code === 0 ? 'applied' : code === RUNNER_DATA_LOSS ? 'data-loss' : code;
}

/** Absolute path of the project's tsx CLI script (run with this Node, no shell or .cmd shim). */
export function tsxCli(root: string): string {
  const dir = join(root, 'node_modules', 'tsx');
  const { bin } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    bin: string | Record<string, string>;
  };
  return join(dir, typeof bin === 'string' ? bin : bin['tsx']!);
}
