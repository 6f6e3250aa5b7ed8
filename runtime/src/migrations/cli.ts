/**
 * Migration runner, run inside a project with its own TypeScript loader:
 *
 *   tsx node_modules/@core/runtime/dist/migrations/cli.js make [--name add_tasks] [--entry src/main.ts]
 *   tsx node_modules/@core/runtime/dist/migrations/cli.js up   [--entry src/main.ts] [--refuse-data-loss]
 *   tsx node_modules/@core/runtime/dist/migrations/cli.js pending
 *
 * It imports the project's entry module first (default `src/main.ts`, which imports every app, so
 * every model registers itself), then works on `migrations/<dialect>/`. `core makemigrations`,
 * `core migrate` and the project's `npm run makemigrations` / `npm run migrate` all come here, so the
 * project's own node_modules and models are used. Prints one line per result; on failure one line
 * on stderr and exit code 1. `up --refuse-data-loss` (the development loop's) applies nothing when a
 * pending migration would lose data: one line per risk on stderr and exit code 3.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { registeredModels } from '../db/model-registry.js';
import { applyMigrations, createMigration, DataLossError, pendingMigrations } from './migrations.js';

/** `up --refuse-data-loss` found data the pending migrations would lose, and applied nothing. */
const DATA_LOSS_EXIT_CODE = 3;

const USAGE = 'usage: cli.js <make|up|pending> [--entry src/main.ts] [--name <name>] [--refuse-data-loss]';

interface Args {
  command: string;
  entry: string;
  name?: string;
  /** `up` only: apply nothing when the pending migrations would lose data (exit code 3). */
  refuseDataLoss: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const [command, ...rest] = argv;
  if (!command || !['make', 'up', 'pending'].includes(command))
    throw new Error(`unknown command ${JSON.stringify(command ?? '')}; ${USAGE}`);
  const args: Args = { command, entry: 'src/main.ts', refuseDataLoss: false };
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    const value = rest[i + 1];
    if (flag === '--refuse-data-loss') {
      args.refuseDataLoss = true;
    } else if ((flag === '--entry' || flag === '--name') && value !== undefined) {
      if (flag === '--entry') args.entry = value;
      else args.name = value;
      i++;
    } else {
      throw new Error(`unexpected argument ${JSON.stringify(flag)}; ${USAGE}`);
    }
  }
  if (args.name !== undefined && !/^[a-z0-9_]+$/i.test(args.name))
    throw new Error(`--name must be letters, digits and "_", got ${JSON.stringify(args.name)}`);
  return args;
}

async function loadEntry(entry: string): Promise<void> {
  const path = resolve(entry);
  if (!existsSync(path))
    throw new Error(`${entry} not found: run this in the project folder (it imports the apps from there)`);
  try {
    await import(pathToFileURL(path).href);
  } catch (err) {
    throw new Error(`could not load ${entry}: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  await loadEntry(args.entry);
  const noModels = registeredModels().length === 0;
  switch (args.command) {
    case 'make': {
      if (noModels)
        return say(`No models registered (${args.entry} imports no app that defines one): no migration written.`);
      const made = await createMigration({ name: args.name });
      if (made.file === null) return say('No changes in the models since the last migration: no migration written.');
      return say(
        `Created ${made.file} (${made.statements.length} statement${made.statements.length === 1 ? '' : 's'})`,
      );
    }
    case 'up': {
      if (noModels)
        return say(`No models registered (${args.entry} imports no app that defines one): nothing to migrate.`);
      const applied = await applyMigrations({ refuseDataLoss: args.refuseDataLoss });
      if (applied.length === 0) return say('No pending migrations: the database is up to date.');
      for (const name of applied) say(`Applied ${name}`);
      return;
    }
    case 'pending': {
      if (noModels) return;
      for (const name of await pendingMigrations()) say(name);
    }
  }
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

// Exit explicitly: a timer or connection opened by the app's modules must not keep the runner alive.
main().then(
  () => process.exit(0),
  (err: unknown) => {
    if (process.env.CORE_DEBUG === '1') console.error(err);
    if (err instanceof DataLossError) {
      // One line per risk: the caller (`core run`, `core generate`) adds what to do about them.
      process.stderr.write(`migrations: not applied: ${err.migrations.join(', ')} would lose data:\n`);
      for (const risk of err.risks) process.stderr.write(`  ${risk.target}: ${risk.change}; ${risk.rows}\n`);
      process.exit(DATA_LOSS_EXIT_CODE);
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`migrations: ${message.split('\n')[0]}\n`);
    process.exit(1);
  },
);
