/**
 * The `core` command line: one file per command in this folder. Commands import their heavy
 * dependencies (ts-morph, prompts, handlebars) only when they run, so `core --help` and quick
 * commands start fast.
 */
import { Command } from 'commander';
import { clientCommand } from './client.js';
import { reportError } from './errors.js';
import { generateCommand } from './generate.js';
import { initCommand } from './init.js';
import { makemigrationsCommand } from './makemigrations.js';
import { migrateCommand } from './migrate.js';
import { runCommand } from './run.js';
import { startappCommand } from './startapp.js';
import { tokenCommand } from './token.js';

const VERSION = '0.1.0';

export function buildProgram(): Command {
  const program = new Command('core')
    .description('Core: create and grow layered web APIs (Fastify + TypeBox + MikroORM)')
    .version(VERSION, '-v, --version')
    .showSuggestionAfterError()
    // Usage errors stay on one line, suggestion included: "error: unknown command 'initt' (Did you mean init?)".
    .configureOutput({ outputError: (text, write) => write(`${text.trimEnd().replace(/\n+/g, ' ')}\n`) })
    .addHelpText(
      'after',
      `
Getting started:
  core init blog && cd blog
  core startapp tasks --template
  core run

Set CORE_DEBUG=1 to see stack traces of errors.`,
    );
  for (const command of [
    initCommand(),
    startappCommand(),
    generateCommand(),
    makemigrationsCommand(),
    migrateCommand(),
    runCommand(),
    tokenCommand(),
    clientCommand(),
  ]) {
    program.addCommand(command.copyInheritedSettings(program)); // the one-line errors above, for every command
  }
  return program;
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  process.exitCode = reportError(error);
}
