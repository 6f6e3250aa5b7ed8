/**
 * `core client [--out src/client] [--check]`: writes a typed client of the app from its OpenAPI
 * document, through the writer shipped in the runtime (`dist/openapi/cli.js`), run with the project's
 * own tsx in the project folder, so the project's apps, node_modules and openapi-typescript are used.
 * `core generate` runs it again after each change once `src/client/` exists. `--check` writes nothing
 * and fails when the client on disk differs from what a run would write (the project's `pretest`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { CliError } from './errors.js';
import { projectRoot } from './context.js';
import { info } from './output.js';

export const CLIENT_WRITER = 'node_modules/@core/runtime/dist/openapi/cli.js';
export const CLIENT_DIR = 'src/client';

/** What the client needs in the project (older projects: `npm i openapi-fetch` and `npm i -D openapi-typescript`). */
const CLIENT_PACKAGES = [
  ['openapi-fetch', 'npm install -E openapi-fetch@0.17.0'],
  ['openapi-typescript', 'npm install -E -D openapi-typescript@7.13.0'],
] as const;

export function clientCommand(): Command {
  return new Command('client')
    .description('write a typed client of the app (src/client/) from its OpenAPI document')
    .option('--out <dir>', 'folder of the client, relative to the project', CLIENT_DIR)
    .option('--check', 'write nothing; exit 1 when the client on disk is stale (no client: nothing to check)')
    .addHelpText(
      'after',
      `
Writes <dir>/openapi.json (the app's OpenAPI 3.1 document), <dir>/schema.d.ts (its types) and
<dir>/index.ts (createApiClient(), an openapi-fetch client typed with them). Once src/client/
exists, \`core generate\` refreshes it after every change. The project must be installed.
With --check (npm test runs it first), a client that no longer matches the app fails with the
names of its stale files; commit what \`core client\` writes.

  import { createApiClient } from './client/index.js';
  const api = createApiClient({ baseUrl: 'http://127.0.0.1:8000', headers: { authorization: \`Bearer \${token}\` } });
  const { data, error } = await api.POST('/tasks', { body: { title: 'Ship it' } });`,
    )
    .action(async (options: { out: string; check?: boolean }) => {
      const root = projectRoot();
      if (options.check === true && !existsSync(join(root, options.out))) {
        // A project without a client (it never ran `core client`) has nothing that can be stale.
        info(`no typed client in ${options.out}: nothing to check`);
        return;
      }
      const code = await writeClient(root, options.out, { check: options.check === true });
      if (code !== 0) throw new CliError('', code); // the writer printed its one-line reason
    });
}

/**
 * Runs the client writer in `root`; output goes to the terminal. Returns its exit code. With `check`
 * it writes nothing and returns 1 when a file of the client is stale or missing.
 */
export async function writeClient(
  root: string,
  out: string = CLIENT_DIR,
  options: { check?: boolean } = {},
): Promise<number> {
  const { notInstalledProblem } = await import('../project/migrations.js');
  const problem = notInstalledProblem(root);
  if (problem) throw new CliError(problem);
  if (!existsSync(join(root, CLIENT_WRITER))) {
    throw new CliError(
      `the project's @core/runtime has no client writer (${CLIENT_WRITER}); update the runtime in vendor/ and run \`npm install\``,
    );
  }
  const missing = CLIENT_PACKAGES.filter(([name]) => !existsSync(join(root, 'node_modules', name, 'package.json')));
  if (missing.length > 0)
    throw new CliError(
      `the client needs ${missing.map(([name]) => name).join(' and ')}: run ${missing.map(([, install]) => `\`${install}\``).join(' and ')}`,
    );
  const { stream } = await import('../project/process.js');
  const args = ['--import', 'tsx', CLIENT_WRITER, '--out', out, ...(options.check === true ? ['--check'] : [])];
  return stream(process.execPath, args, { cwd: root });
}
