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
  const code = await runMigrations(root, command, extra);
  // The runner already printed its one-line reason.
  if (code !== 0) throw new CliError('', code);
}
