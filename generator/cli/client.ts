/**
 * `core client [--out src/client] [--check]`: writes a typed client of the app from its OpenAPI
 * document, through the writer shipped in the runtime (`dist/openapi/cli.js`), run with the project's
 * own tsx in the project folder, so the project's apps, node_modules and openapi-typescript are used.
 * The generated tests (`test/apps/<module>.test.ts`) drive the apps through it, so `core startapp` and
 * `core generate` write it too, after the code (`writeClientAfterGenerate`). `--check` writes nothing
 * and fails when the client on disk differs from what a run would write (the project's `pretest`), or
 * when a test imports a client that is not there.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Command } from 'commander';
import { CliError } from './errors.js';
import { projectRoot } from './context.js';
import { info, step, warn } from './output.js';

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
    .option('--check', 'write nothing; exit 1 when the client on disk is stale, or missing while a test imports it')
    .addHelpText(
      'after',
      `
Writes <dir>/openapi.json (the app's OpenAPI 3.1 document), <dir>/schema.d.ts (its types) and
<dir>/index.ts (createApiClient(), an openapi-fetch client typed with them). \`core startapp\` and
\`core generate\` write it too: the generated tests call the app through it. The project must be
installed. With --check (npm test runs it first), a client that no longer matches the app fails
with the names of its stale files; commit what \`core client\` writes.

  import { createApiClient } from './client/index.js';
  const api = createApiClient({ baseUrl: 'http://127.0.0.1:8000', headers: { authorization: \`Bearer \${token}\` } });
  const { data, error } = await api.POST('/tasks', { body: { title: 'Ship it' } });`,
    )
    .action(async (options: { out: string; check?: boolean }) => {
      const root = projectRoot();
      if (options.check === true && !existsSync(join(root, options.out))) {
        const users = testsImporting(root, options.out);
        if (users.length > 0)
          throw new CliError(
            `no typed client in ${options.out}, which ${users.join(', ')} import${users.length === 1 ? 's' : ''}: run \`core client\` and commit the result`,
          );
        // A project without a client (it never ran `core client`, and no test uses one) has nothing that can be stale.
        info(`no typed client in ${options.out}: nothing to check`);
        return;
      }
      const code = await writeClient(root, options.out, { check: options.check === true });
      if (code !== 0) throw new CliError('', code); // the writer printed its one-line reason
    });
}

/**
 * Why the client cannot be written in `root` (dependencies not installed, a runtime without the
 * writer, openapi-fetch or openapi-typescript missing), with what to run; null when it can.
 */
export async function clientProblem(root: string): Promise<string | null> {
  const { notInstalledProblem } = await import('../project/migrations.js');
  const problem = notInstalledProblem(root);
  if (problem) return problem;
  if (!existsSync(join(root, CLIENT_WRITER)))
    return `the project's @core/runtime has no client writer (${CLIENT_WRITER}); update the runtime in vendor/ and run \`npm install\``;
  const missing = CLIENT_PACKAGES.filter(([name]) => !existsSync(join(root, 'node_modules', name, 'package.json')));
  if (missing.length > 0)
    return `the client needs ${missing.map(([name]) => name).join(' and ')}: run ${missing.map(([, install]) => `\`${install}\``).join(' and ')}`;
  return null;
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
  const problem = await clientProblem(root);
  if (problem) throw new CliError(problem);
  const { stream } = await import('../project/process.js');
  const args = ['--import', 'tsx', CLIENT_WRITER, '--out', out, ...(options.check === true ? ['--check'] : [])];
  return stream(process.execPath, args, { cwd: root });
}

/**
 * After `core startapp` or `core generate` wrote the code: the typed client, which the generated tests
 * import, written again from the app as it now is. Never fails the command (the files are written):
 * a problem is a warning that says what to run.
 */
export async function writeClientAfterGenerate(root: string): Promise<void> {
  step('Writing the typed client the tests use (core client)…');
  const code = await writeClient(root).catch((error: unknown) => {
    warn(`the typed client was not written: ${(error as Error).message}`);
    return 0;
  });
  if (code !== 0) warn('the typed client was not written (see above); run `core client` once the app builds');
}

/**
 * What a command that left the generated tests of `modules` out (`generateApp` with `test: false`)
 * says: they import the typed client, which `problem` keeps from being written.
 */
export async function warnTestsLeftOut(modules: readonly string[], problem: string): Promise<void> {
  if (modules.length === 0) return;
  const { resourceTestPath } = await import('../generators/app/resource-test.js');
  const paths = modules.map(resourceTestPath);
  const names = paths.length === 1 ? paths[0]! : `${paths.slice(0, -1).join(', ')} and ${paths.at(-1)}`;
  warn(
    `${names} left out: ${paths.length === 1 ? 'it calls the app' : 'they call the apps'} through the typed client ` +
      `(${CLIENT_DIR}/), which cannot be written yet: ${problem}, then \`core generate\``,
  );
}

/** The files under `test/` that import the client in `out` (`'../../src/client/index.js'`), relative to `root`. */
function testsImporting(root: string, out: string): string[] {
  const dir = join(root, 'test');
  if (!existsSync(dir)) return [];
  const folder = out.replace(/^\.\//, '').replace(/\/+$/, '');
  const pattern = new RegExp(`from '(\\.\\./)+${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/`);
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.[cm]?ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => pattern.test(readFileSync(file, 'utf8')))
    .map((file) => relative(root, file).split('\\').join('/'))
    .sort();
}
