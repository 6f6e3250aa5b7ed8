/**
 * `core run [--host 127.0.0.1] [--port 8000]`: the development server. In development it first
 * applies pending migrations, then runs `tsx watch src/main.ts` (restart on every change) with HOST
 * and PORT set. The CLI stays the parent: Ctrl+C and SIGTERM reach the server, and the server is
 * stopped if the CLI exits, so no stray process keeps the port.
 */
import { Command } from 'commander';
import { CliError } from './errors.js';
import { projectRoot } from './context.js';
import { info, step, warn } from './output.js';
import { MAIN_FILE } from '../project/root.js';

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
    .option('--no-migrate', 'do not apply pending migrations first')
    .addHelpText('after', '\nMigrations are applied only when ENVIRONMENT is development.\n\nExample:\n  core run --port 3000')
    .action(async (options: RunOptions) => runServer(options));
}

async function runServer(options: RunOptions): Promise<void> {
  const port = options.port === undefined ? undefined : parsePort(options.port);
  const root = projectRoot();
  const [{ projectSettings }, { notInstalledProblem, runMigrations, tsxCli }, { childEnv, stream }] = await Promise.all([
    import('./settings.js'),
    import('../project/migrations.js'),
    import('../project/process.js'),
  ]);
  const problem = notInstalledProblem(root);
  if (problem) throw new CliError(problem);
  const { settings, warnings } = projectSettings(root);
  for (const message of warnings) warn(message);
  const host = options.host ?? settings.host;
  const listenPort = port ?? settings.port;

  if (options.migrate && settings.isDevelopment) {
    step('Applying pending migrations…');
    const code = await runMigrations(root, 'up');
    if (code !== 0) throw new CliError('', code);
  } else if (options.migrate) {
    step(`ENVIRONMENT=${settings.environment}: pending migrations are not applied automatically (run \`core migrate\`).`);
  }

  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  info(`API   http://${shownHost}:${listenPort}/`);
  info(`Docs  http://${shownHost}:${listenPort}/docs`);
  step('Reloads on every change; Ctrl+C stops.');
  const code = await stream(process.execPath, [tsxCli(root), 'watch', '--clear-screen=false', MAIN_FILE], {
    cwd: root,
    env: childEnv({ HOST: host, PORT: String(listenPort) }),
  });
  // Stopped by Ctrl+C or a stop signal: that is how a dev server ends, not an error.
  if (code !== 0 && code !== 130 && code !== 143) throw new CliError(`the server stopped with exit code ${code}`, code);
}

function parsePort(raw: string): number {
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) throw new CliError(`--port must be a number from 0 to 65535, got ${JSON.stringify(raw)}`);
  return port;
}
