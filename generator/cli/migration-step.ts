/**
 * The migration that follows generated code (`core startapp`, `core generate`): written when the
 * project can run its migration runner, otherwise a warning saying how to write it later.
 */
import { CliError } from './errors.js';
import { step, warn } from './output.js';
import { notInstalledProblem, runMigrations } from '../project/migrations.js';

export async function writeMigrationAfterGenerate(root: string): Promise<void> {
  const problem = notInstalledProblem(root);
  if (problem) {
    warn(`no migration written: ${problem}, then \`core makemigrations\``);
    return;
  }
  step('Writing the migration for the change (core makemigrations)…');
  const code = await runMigrations(root, 'make');
  if (code !== 0) {
    throw new CliError('the files listed above were written, but no migration: fix the problem reported above, then run `core makemigrations`', code);
  }
}
