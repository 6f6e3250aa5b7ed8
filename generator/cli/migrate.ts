/**
 * `core migrate`: applies pending migrations from `migrations/<dialect>/` (the dialect of the
 * project's DATABASE_URL), through the project's own migration runner.
 */
import { Command } from 'commander';
import { CliError } from './errors.js';
import { projectRoot } from './context.js';

export function migrateCommand(): Command {
  return new Command('migrate')
    .description("apply pending database migrations (migrations/<dialect>/, for the project's DATABASE_URL)")
    .addHelpText('after', '\nThe project must be installed (`npm install`). Same as `npm run migrate` in the project.')
    .action(async () => runMigrationCommand('up', []));
}

/** Shared with `core makemigrations`: checks the project is installed, runs the runner, passes its exit code on. */
export async function runMigrationCommand(command: 'make' | 'up', extra: readonly string[]): Promise<void> {
  const root = projectRoot();
  const { notInstalledProblem, runMigrations } = await import('../project/migrations.js');
  const problem = notInstalledProblem(root);
  if (problem) throw new CliError(problem);
  // Marked busy so that a running `core run` reloads once this is done (onto the migrated schema).
  const { holdBusy, markMigrated } = await import('../project/busy.js');
  const release = holdBusy(root, command === 'up' ? 'migrate' : 'makemigrations');
  let code: number;
  try {
    code = await runMigrations(root, command, extra);
    if (code === 0 && command === 'up') markMigrated(root);
  } finally {
    release();
  }
  // The runner already printed its one-line reason.
  if (code !== 0) throw new CliError('', code);
}
