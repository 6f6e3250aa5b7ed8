/**
 * `core run [--host 127.0.0.1] [--port 8000]`: the development server. In development it first
 * applies pending migrations, then serves `src/main.ts` with HOST and PORT set and reloads it when the
 * project changes — after `core generate`, `core startapp` or `core migrate` have finished, with the
 * database migrated first (`project/dev-server.ts`). The CLI stays the parent: Ctrl+C and SIGTERM
 * stop the server, and the server is stopped if the CLI exits, so no stray process keeps the port.
 */
import { Command } from 'commander';
import { CliError } from './errors.js';
import { projectRoot } from './context.js';
import { info, step, warn } from './output.js';

interface RunOptions {
  host?: string;
  port?: string;
  migrate: boolean;
}

export function runCommand(): Command {
  return new Command('run')
    .description('start the development server with automatic reload (applies pending migrations first)')
    .option('--host <host>', 'interface to listen on (default: HOST from .env, else 127.0.0.1)')
    .option('--port <port>', 'port (default: PORT from .env, else 8000)')
    .option('--no-migrate', 'do not apply pending migrations')
    .addHelpText(
      'after',
      `
The server reloads when a file under src/ or migrations/ changes, or .env; after \`core generate\` it
reloads once the new code's migration is applied.

Migrations are applied automatically only when ENVIRONMENT is development, and never when they would
lose data (a dropped column or table that holds values, a narrower type, NOT NULL over NULLs…):
then the server keeps the code it had and the terminal says what to do (exit code 3 at start).

Example:
  core run --port 3000`,
    )
    .action(async (options: RunOptions) => runServer(options));
}

async function runServer(options: RunOptions): Promise<void> {
  const port = options.port === undefined ? undefined : parsePort(options.port);
  const root = projectRoot();
  const [{ projectSettings }, { notInstalledProblem }, { DevServer }, { dataLossError, warnDataLoss }] =
    await Promise.all([
      import('./settings.js'),
      import('../project/migrations.js'),
      import('../project/dev-server.js'),
      import('./migration-step.js'),
    ]);
  const problem = notInstalledProblem(root);
  if (problem) throw new CliError(problem);
  const { settings, warnings } = projectSettings(root);
  for (const message of warnings) warn(message);
  const host = options.host ?? settings.host;
  const listenPort = port ?? settings.port;
  if (options.migrate && !settings.isDevelopment) {
    step(
      `ENVIRONMENT=${settings.environment}: pending migrations are not applied automatically (run \`core migrate\`).`,
    );
  }

  const server = new DevServer({
    root,
    env: { HOST: host, PORT: String(listenPort) },
    migrate: options.migrate && settings.isDevelopment,
    say: step,
    onDataLoss: warnDataLoss,
  });
  const started = await server.start();
  if (started === 'data-loss') throw dataLossError();
  if (started !== 'started') throw new CliError('', started); // the runner said why

  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  info(`API   http://${shownHost}:${listenPort}/`);
  info(`Docs  http://${shownHost}:${listenPort}/docs`);
  step('Reloads when the project changes; Ctrl+C stops.');
  // Ctrl+C or a stop signal is how a dev server ends: stop the app, then exit 0.
  await new Promise<void>((resolve) => {
    const stop = () => void server.stop().then(resolve);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

function parsePort(raw: string): number {
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535)
    throw new CliError(`--port must be a number from 0 to 65535, got ${JSON.stringify(raw)}`);
  return port;
}
