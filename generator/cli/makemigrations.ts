/**
 * `core makemigrations [--name <name>]`: writes a migration from the difference between the models
 * and the last migration's snapshot; with no difference it says so and writes nothing.
 */
import { Command } from 'commander';
import { CliError } from './errors.js';
import { runMigrationCommand } from './migrate.js';

export function makemigrationsCommand(): Command {
  return new Command('makemigrations')
    .description('write a migration for the changes in the models since the last migration')
    .option('--name <name>', 'suffix of the migration file name, e.g. add_due_date')
    .addHelpText(
      'after',
      `
Migrations go to migrations/<dialect>/ (sqlite or postgresql, from DATABASE_URL). The project must
be installed (\`npm install\`). Same as \`npm run makemigrations\` in the project.`,
    )
    .action(async (options: { name?: string }) => {
      if (options.name !== undefined && !/^[a-z0-9_]+$/i.test(options.name)) {
        throw new CliError(`--name must be letters, digits and "_", got ${JSON.stringify(options.name)}`);
      }
      await runMigrationCommand('make', options.name === undefined ? [] : ['--name', options.name]);
    });
}
