/**
 * `core client --check`, as CI runs it in a project (`npm test` runs it first, as `pretest`): nothing
 * to check without a client, 0 while the committed client matches what `core client` would write,
 * 1 with the stale and missing files named once the app changed, and never a file written. Then the
 * client of the generated tests: `core generate` writes the tests together with the client they
 * import (also when only the client is missing), and `--check` fails on a test importing a missing one.
 *
 * Each project is the generated relation-graph app in a temporary folder, installed the cheap way:
 * its node_modules links this repository's packages, and `@core/runtime` is a stand-in whose
 * `dist/` files load the runtime's sources (the client writer included) through the project's tsx.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { core, lines, REPO_ROOT, snapshot, tempDir } from '../helpers/cli.js';

const project = tempDir('core-client-');
const root = project.path;
const RUNTIME_SRC = join(REPO_ROOT, 'runtime/src');
const CLIENT_FILES = ['openapi.json', 'schema.d.ts', 'index.ts'].map((file) => `src/client/${file}`);
/** Each run of the writer builds the app and types its document: a few seconds. */
const RUNS_TIMEOUT = 120_000;

beforeAll(() => installedProject(root));

/** The relation graph's sources (no test/) in `root`, with node_modules as described above. */
function installedProject(root: string): void {
  cpSync(join(REPO_ROOT, 'fixtures/golden/relation-graph/expected/src'), join(root, 'src'), { recursive: true });
  writeFileSync(
    join(root, 'package.json'),
    `${JSON.stringify({ name: 'client-check', private: true, type: 'module', dependencies: { '@core/runtime': '*' } }, null, 2)}\n`,
  );
  const modules = join(root, 'node_modules');
  mkdirSync(modules);
  for (const entry of readdirSync(join(REPO_ROOT, 'node_modules'))) {
    if (entry !== '@core' && entry !== '.bin' && !entry.startsWith('.'))
      symlinkSync(join(REPO_ROOT, 'node_modules', entry), join(modules, entry), 'dir');
  }
  const runtime = join(modules, '@core/runtime');
  const stub = (file: string, text: string): void => {
    mkdirSync(join(runtime, file, '..'), { recursive: true });
    writeFileSync(join(runtime, file), text);
  };
  stub(
    'package.json',
    JSON.stringify({ name: '@core/runtime', type: 'module', exports: { '.': './dist/index.js' } }, null, 2),
  );
  stub('dist/index.js', `export * from ${JSON.stringify(join(RUNTIME_SRC, 'index.ts'))};\n`);
  stub('dist/openapi/cli.js', `import ${JSON.stringify(join(RUNTIME_SRC, 'openapi/cli.ts'))};\n`);
  // `core` checks that the project is installed by the migration runner's presence.
  stub('dist/migrations/cli.js', '');
}

afterAll(() => project.remove());

describe('core client --check', () => {
  it('has nothing to check in a project without a client, and writes nothing', async () => {
    const before = snapshot(root);
    const result = await core(['client', '--check'], { cwd: root });
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)).toEqual(['no typed client in src/client: nothing to check']);
    expect(result.code).toBe(0);
    expect(snapshot(root)).toEqual(before);
  });

  it(
    'exits 0 while the client is what core client writes (CRLF line endings too)',
    async () => {
      const written = await core(['client'], { cwd: root });
      expect(written.stderr).toBe('');
      expect(lines(written.stdout)).toEqual(CLIENT_FILES.map((file) => `CREATE ${file}`));
      expect(written.code).toBe(0);
      // A Windows checkout (core.autocrlf) turns the committed files' line endings into CRLF.
      const document = join(root, 'src/client/openapi.json');
      writeFileSync(document, readFileSync(document, 'utf8').replace(/\n/g, '\r\n'));

      const before = snapshot(root);
      const result = await core(['client', '--check'], { cwd: root });
      expect(result.stderr).toBe('');
      expect(lines(result.stdout)).toEqual(CLIENT_FILES.map((file) => `CURRENT ${file}`));
      expect(result.code).toBe(0);
      expect(snapshot(root)).toEqual(before);
    },
    RUNS_TIMEOUT,
  );

  it(
    'exits 1 naming the stale and missing files once the app changed, and writes nothing',
    async () => {
      // The app changes (labels move to /tags) and nobody runs `core client`; one client file is gone.
      const app = join(root, 'src/apps/labels');
      const [file] = readdirSync(app).filter((name) => readFileSync(join(app, name), 'utf8').includes("'/labels'"));
      expect(file, 'the file that sets the labels prefix').toBeDefined();
      writeFileSync(join(app, file!), readFileSync(join(app, file!), 'utf8').replace("'/labels'", "'/tags'"));
      rmSync(join(root, 'src/client/index.ts'));

      const before = snapshot(root);
      const result = await core(['client', '--check'], { cwd: root });
      expect(result.code).toBe(1);
      expect(lines(result.stdout)).toEqual([]);
      expect(lines(result.stderr)).toEqual([
        "the typed client does not match the app's OpenAPI document: src/client/openapi.json (stale), " +
          'src/client/schema.d.ts (stale), src/client/index.ts (missing); run `core client` (or `core generate`) ' +
          'and commit the result',
      ]);
      expect(snapshot(root)).toEqual(before);

      // Written again, the client is current.
      expect((await core(['client'], { cwd: root })).code).toBe(0);
      expect(readFileSync(join(root, 'src/client/openapi.json'), 'utf8')).toContain('"/tags/{id}"');
      const again = await core(['client', '--check'], { cwd: root });
      expect(again.stderr).toBe('');
      expect(again.code).toBe(0);
    },
    RUNS_TIMEOUT,
  );
});

describe('the typed client of the generated tests', () => {
  const generated = tempDir('core-client-tests-');
  const dir = generated.path;
  const APPS = ['comments', 'labels', 'profiles', 'projects', 'tasks', 'users'];
  const TESTS = APPS.map((app) => `test/apps/${app}.test.ts`);
  beforeAll(() => installedProject(dir));
  afterAll(() => generated.remove());

  it(
    'core generate writes the tests and then the client they import',
    async () => {
      const result = await core(['generate', '--no-migration'], { cwd: dir });
      expect(result.code, result.stderr).toBe(0);
      const out = lines(result.stdout);
      for (const test of TESTS) expect(out).toContain(`CREATE    ${test}`);
      expect(out.slice(-CLIENT_FILES.length)).toEqual(CLIENT_FILES.map((file) => `CREATE ${file}`));
      expect(lines(result.stderr)).toEqual(['Writing the typed client the tests use (core client)…']);
      expect(readFileSync(join(dir, 'test/apps/tasks.test.ts'), 'utf8')).toContain(
        "import { createApiClient, type Schemas } from '../../src/client/index.js';",
      );

      const check = await core(['client', '--check'], { cwd: dir });
      expect(check.stderr).toBe('');
      expect(check.code).toBe(0);
    },
    RUNS_TIMEOUT,
  );

  it(
    'core client --check fails while a test imports a missing client; core generate writes it back',
    async () => {
      rmSync(join(dir, 'src/client'), { recursive: true });
      const before = snapshot(dir);
      const check = await core(['client', '--check'], { cwd: dir });
      expect(check.code).toBe(1);
      expect(lines(check.stderr)).toEqual([
        `core: no typed client in src/client, which ${TESTS.join(', ')} import: run \`core client\` and commit the result`,
      ]);
      expect(snapshot(dir)).toEqual(before);

      // Nothing else to change: the client alone is written.
      const result = await core(['generate', '--no-migration'], { cwd: dir });
      expect(result.code, result.stderr).toBe(0);
      const written = lines(result.stdout).filter((line) => !line.startsWith('UNCHANGED'));
      expect(written).toEqual([
        `${lines(result.stdout).filter((line) => line.startsWith('UNCHANGED')).length} unchanged`,
        ...CLIENT_FILES.map((file) => `CREATE ${file}`),
      ]);
      expect((await core(['client', '--check'], { cwd: dir })).code).toBe(0);
    },
    RUNS_TIMEOUT,
  );
});
