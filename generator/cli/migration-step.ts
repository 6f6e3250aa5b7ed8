/**
 * What follows generated code (`core startapp`, `core generate`): the migration for the change, written
 * when the project can run its migration runner, and in development applied to the database right
 * away, so that a server started by `core run` reloads onto a schema that matches its code. A
 * migration that would lose data is written but not applied: the command stops and says what to do.
 */
import { CliError } from './errors.js';
import { step, warn } from './output.js';
import { projectSettings } from './settings.js';
import { applyPendingMigrations, notInstalledProblem, runMigrations } from '../project/migrations.js';

export async function migrateAfterGenerate(root: string, options: { apply: boolean }): Promise<void> {
  const problem = notInstalledProblem(root);
  if (problem) {
    warn(`no migration written: ${problem}, then \`core makemigrations\``);
    return;
  }
  step('Writing the migration for the change (core makemigrations)…');
  const code = await runMigrations(root, 'make');
  if (code !== 0) {
    throw new CliError(
      'the files listed above were written, but no migration: fix the problem reported above, then run `core makemigrations`',
      code,
    );
  }
  if (!options.apply) return;
  const { settings } = projectSettings(root);
  if (!settings.isDevelopment) {
    step(
      `ENVIRONMENT=${settings.environment}: the migration is not applied automatically; apply it with \`core migrate\`.`,
    );
    return;
  }
  step('Applying it to the development database…');
  const outcome = await applyPendingMigrations(root);
  if (outcome === 'data-loss') throw dataLossError();
  if (outcome !== 'applied') {
    throw new CliError(
      'the files and the migration were written, but applying it failed: fix the problem reported above, then run `core migrate`',
      outcome,
    );
  }
}

/** What to do about a migration the development loop would not apply (the runner listed the data at risk just before). */
export function warnDataLoss(): void {
  warn('the pending migration was not applied: it would lose the data listed above, or fail on it.');
  warn(
    '  to keep the data, edit that migration under migrations/ (rename a column instead of dropping and adding it, convert values before a narrower type, give a new NOT NULL column a default), then run `core migrate`;',
  );
  warn('  to let the data go, run `core migrate`: it applies the migration as it is.');
}

/** The advice above, and the error that ends the command. */
export function dataLossError(): CliError {
  warnDataLoss();
  return new CliError('not applied: a pending migration would lose data (listed above)', DATA_LOSS_EXIT_CODE);
}

/** Exit code of a command that stopped before a migration that would lose data. */
export const DATA_LOSS_EXIT_CODE = 3;
