import { execFileSync, spawnSync } from 'node:child_process';
import { isAscii } from 'node:buffer';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { core, lines, REPO_ROOT, snapshot, tempDir } from '../helpers/cli.js';

// The first `core init` of a run may build and pack the runtime package (tsc): allow for it.
const SLOW = 180_000;

interface PackageJson {
  name: string;
  type: string;
  engines: Record<string, string>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  overrides: Record<string, unknown>;
  allowScripts: Record<string, boolean>;
}

const dir = tempDir('core-init-');
afterAll(() => dir.remove());

describe('core init <name> --no-install', () => {
  let project: string;
  let stdout: string;

  beforeAll(async () => {
    const result = await core(['init', 'demo', '--no-install'], { cwd: dir.path });
    expect(result.stderr).not.toMatch(/^core:/m);
    expect(result.code).toBe(0);
    stdout = result.stdout;
    project = join(dir.path, 'demo');
  }, SLOW);

  const read = (path: string) => readFileSync(join(project, path), 'utf8');

  it('creates exactly the project layout and lists every file', () => {
    const files = [...snapshot(project).keys()];
    const tarballs = files.filter((f) => f.startsWith('vendor/'));
    expect(tarballs).toEqual([
      expect.stringMatching(/^vendor\/core-cli-0\.1\.0-[0-9a-f]{12}\.tgz$/),
      expect.stringMatching(/^vendor\/core-runtime-0\.1\.0-[0-9a-f]{12}\.tgz$/),
    ]);
    expect(files).toEqual(
      [
        '.dockerignore',
        '.editorconfig',
        '.env',
        '.env.example',
        '.gitignore',
        'Dockerfile',
        'README.md',
        'biome.json',
        'compose.yaml',
        'dev.db',
        'package.json',
        'scripts/build.mjs',
        'src/apps/.gitkeep',
        'src/main.ts',
        'src/policies.json',
        'test/smoke.test.ts',
        'tsconfig.build.json',
        'tsconfig.json',
        ...tarballs,
      ].sort((a, b) => a.localeCompare(b)),
    );
    for (const file of files) expect(stdout).toContain(`CREATE    demo/${file}`);
    expect(readdirSync(dir.path)).toEqual(['demo']); // no staging folder left behind
  });

  it('writes .env with a 64-hex SECRET_KEY (private file) and .env.example without it', () => {
    const env = parseEnv(read('.env'));
    expect(env).toMatchObject({ ENVIRONMENT: 'development', PROJECT_NAME: 'demo', DATABASE_URL: 'sqlite:./dev.db' });
    expect(env.SECRET_KEY).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(project, '.env')).mode & 0o777).toBe(0o600);
    const example = parseEnv(read('.env.example'));
    expect(example).toMatchObject({
      ENVIRONMENT: 'development',
      PROJECT_NAME: 'demo',
      DATABASE_URL: 'sqlite:./dev.db',
      SECRET_KEY: '',
    });
    expect(read('.env.example')).not.toContain(env.SECRET_KEY!);
    expect(read('.gitignore').split('\n')).toEqual(expect.arrayContaining(['.env', 'node_modules/', '*.db']));
  });

  it('writes a package.json with exact pins, the vendored runtime and the npm settings native builds need', () => {
    const pkg = JSON.parse(read('package.json')) as PackageJson;
    expect(pkg).toMatchObject({ name: 'demo', type: 'module', engines: { node: '>=20.19.0' } });
    expect(Object.keys(pkg.scripts)).toEqual(
      expect.arrayContaining(['dev', 'start', 'build', 'test', 'typecheck', 'migrate', 'makemigrations']),
    );
    const runtime = pkg.dependencies['@core/runtime'];
    expect(runtime).toMatch(/^file:vendor\/core-runtime-0\.1\.0-[0-9a-f]{12}\.tgz$/);
    expect(existsSync(join(project, runtime!.slice('file:'.length)))).toBe(true);
    const cli = pkg.devDependencies['@core/cli'];
    expect(cli).toMatch(/^file:vendor\/core-cli-0\.1\.0-[0-9a-f]{12}\.tgz$/);
    expect(existsSync(join(project, cli!.slice('file:'.length)))).toBe(true);
    for (const [name, version] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
      if (!name.startsWith('@core/')) expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
    }
    expect(pkg.dependencies).toMatchObject({
      fastify: '5.12.8',
      '@mikro-orm/core': '6.6.16',
      '@mikro-orm/migrations': '6.6.16',
      'better-sqlite3': '12.11.1',
    });
    // The transitive versions Core is tested with, which install without engine warnings on Node 20.
    const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;
    expect(pkg.overrides).toEqual(root.overrides);
    expect(pkg.allowScripts).toMatchObject({ 'better-sqlite3': true, esbuild: true });
  });

  it('builds for production with its own esbuild script, after a type check, and starts the bundle', () => {
    const pkg = JSON.parse(read('package.json')) as PackageJson;
    expect(pkg.scripts).toMatchObject({
      build: 'tsc -p tsconfig.build.json && node scripts/build.mjs',
      typecheck: 'tsc --noEmit',
    });
    // `npm start` runs the bundle with V8's memory flags (README, Production); this Node accepts them.
    const start = /^node ((?:--[a-z-]+=\d+ )+)dist\/main\.js$/.exec(pkg.scripts['start'] ?? '');
    expect(start, pkg.scripts['start']).not.toBeNull();
    const flags = start![1]!.trim().split(' ');
    expect(flags).toEqual(['--max-semi-space-size=8', '--heap-growing-percent=30']);
    expect(spawnSync(process.execPath, [...flags, '-e', '0'], { encoding: 'utf8' })).toMatchObject({
      status: 0,
      stderr: '',
    });
    // The same esbuild as this repository's (and so the one tsx, also a devDependency, accepts).
    const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;
    expect(pkg.devDependencies.esbuild).toBe(root.dependencies.esbuild);
    const script = read('scripts/build.mjs');
    expect(script).toContain("entry = 'src/main.ts', outdir = 'dist'");
    expect(script).toContain("format: 'cjs'");
    // Native and optional drivers, pino and the Swagger UI stay external; MikroORM and knex are bundled.
    const external = /export const EXTERNAL = \[([^\]]*)\]/.exec(script)![1]!;
    for (const name of ["'better-sqlite3'", "'pg-native'", "'pino'", "'@fastify/swagger-ui'"])
      expect(external).toContain(name);
    for (const name of ["'@mikro-orm/", "'knex'", "'pg'"]) expect(external).not.toContain(name);
    // tsc only checks: nothing it could emit would end up next to the bundle.
    expect(JSON.parse(read('tsconfig.json'))).toMatchObject({ compilerOptions: { noEmit: true } });
    expect(JSON.parse(read('tsconfig.build.json'))).toEqual({
      extends: './tsconfig.json',
      include: ['src'],
      exclude: ['src/**/*.test.ts'],
    });
  });

  it('packs the built runtime (dist, migration runner) and no sources into the tarball', () => {
    const tarball = readdirSync(join(project, 'vendor')).find((name) => name.startsWith('core-runtime-'))!;
    const entries = execFileSync('tar', ['-tzf', join(project, 'vendor', tarball)], { encoding: 'utf8' }).split('\n');
    expect(entries).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/migrations/cli.js',
      ]),
    );
    expect(entries.filter((e) => e.startsWith('package/src/') || e.endsWith('.test.js'))).toEqual([]);
  });

  it('writes an empty SQLite file, the default policies and an empty apps folder', () => {
    expect(statSync(join(project, 'dev.db')).size).toBe(0);
    expect(JSON.parse(read('src/policies.json'))).toEqual({
      roles: {
        admin: { permissions: ['*'], restricted_fields: [] },
        viewer: { permissions: ['tasks:view', 'tasks:listview'], restricted_fields: ['tasks.assignee_email'] },
        anonymous: { permissions: [], restricted_fields: [] },
      },
    });
    expect(readdirSync(join(project, 'src/apps'))).toEqual(['.gitkeep']);
  });

  it('wires src/main.ts in the seven steps, in order, and exports buildApp', () => {
    const main = read('src/main.ts');
    expect(main).toMatch(/export async function buildApp\(/);
    const steps = [
      'setupLogging(',
      'dbManager.initApp(settings.databaseUrl, settings.isDevelopment',
      'new Kernel(',
      'registerDbEventDispatcher(kernel.dispatcher, dbManager.db, { settings })',
      'Fastify({',
      // Before any plugin loads: a plugin loaded earlier would keep Fastify's own error handler.
      'useCoreErrors(app)',
      'app.register(kernel.lifespan)',
      'app.register(swagger',
      'kernel.setup(app)',
      'app.register(ScopedDependencyMiddleware)',
      'app.register(RequestLogMiddleware)',
      'app.register(coreContextPlugin, { secret: settings.secretKey, policies: overrides.policies ?? policies })',
      'useCoreRequest(app)',
      'app.register(coreHealthRoutes',
      'listenWithLifecycle(app, settings)',
    ];
    const positions = steps.map((step) => main.indexOf(step));
    for (const [i, step] of steps.entries()) expect(positions[i], step).toBeGreaterThan(-1);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(main).not.toMatch(/\{\{|\}\}/); // nothing left of the template
  });

  it('writes the smoke test against buildApp and a README', () => {
    expect(read('test/smoke.test.ts')).toContain("import { buildApp } from '../src/main.js'");
    expect(read('README.md')).toMatch(/^# demo$/m);
    expect(read('README.md')).toContain('sqlite:./dev.db');
  });

  it('packs the CLI (its bundle, templates, the runtime tarball) with a `core` bin and pinned dependencies', () => {
    const files = readdirSync(join(project, 'vendor'));
    const tarball = files.find((name) => name.startsWith('core-cli-'))!;
    const entries = execFileSync('tar', ['-tzf', join(project, 'vendor', tarball)], { encoding: 'utf8' }).split('\n');
    const runtime = files.find((name) => name.startsWith('core-runtime-'))!;
    expect(entries).toEqual(
      expect.arrayContaining([
        'package/bin/core.js',
        'package/dist/core.mjs',
        'package/templates/project/package.json.hbs',
        'package/fixtures/specs/tasks.resource.json',
        `package/runtime/${runtime}`,
      ]),
    );
    expect(entries.filter((e) => e.endsWith('.ts'))).toEqual([]);
    const manifest = JSON.parse(
      execFileSync('tar', ['-xzOf', join(project, 'vendor', tarball), 'package/package.json'], { encoding: 'utf8' }),
    ) as PackageJson & { bin: Record<string, string> };
    expect(manifest).toMatchObject({ name: '@core/cli', type: 'module', bin: { core: 'bin/core.js' } });
    const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;
    expect(manifest.dependencies).toMatchObject({
      commander: root.dependencies.commander,
      handlebars: root.dependencies.handlebars,
      'ts-morph': root.dependencies['ts-morph'],
    });
  });

  it('says what to do next, with the CLI the project installs', () => {
    expect(stdout).toMatch(/cd demo\n\s+npm install\n\s+npx core startapp tasks --template\n\s+npx core run/);
    expect(read('README.md')).toContain('npx core generate');
  });

  it("gets the repository's formatter settings, Biome at the repository's version, and lint / format scripts", () => {
    // The repository's biome.json without what only concerns its own folders (and with the folders
    // other tools write in a project), and the same .editorconfig.
    const root = JSON.parse(readFileSync(join(REPO_ROOT, 'biome.json'), 'utf8')) as Record<string, unknown>;
    const { overrides: _repositoryFolders, files: _files, ...settings } = root;
    expect(JSON.parse(read('biome.json'))).toEqual({
      ...settings,
      files: { includes: ['**', '!**/dist', '!**/node_modules', '!**/*.md', '!migrations', '!src/client'] },
    });
    expect(read('.editorconfig')).toBe(readFileSync(join(REPO_ROOT, '.editorconfig'), 'utf8'));
    const pkg = JSON.parse(read('package.json')) as PackageJson;
    const repository = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;
    expect(pkg.devDependencies['@biomejs/biome']).toBe(repository.devDependencies['@biomejs/biome']);
    expect(pkg.scripts).toMatchObject({ lint: 'biome check .', format: 'biome format --write .' });
  });

  it('is formatted as its own biome.json says: biome check finds nothing', () => {
    const biome = join(REPO_ROOT, 'node_modules/@biomejs/biome/bin/biome');
    const result = spawnSync(process.execPath, [biome, 'check', '--colors=off', '.'], {
      cwd: project,
      encoding: 'utf8',
    });
    expect(`${result.stdout}${result.stderr}`).toMatch(/Checked \d+ files in .*\. No fixes applied\./);
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
  });

  it('shows in the README a role that confines users to their own rows, with the field the starter lacks', () => {
    const readme = read('README.md');
    expect(readme).toContain(
      '"row_filters": { "tasks": [{ "field": "owner_id", "op": "eq", "value": { "$claim": "sub" } }] }',
    );
    expect(readme).toContain('The starter `tasks` has no such field: add one to its manifest first');
  });

  describe('scripts/build.mjs on a small program (esbuild from this repository, as after npm install)', () => {
    // A folder of its own: the other tests compare what is in the project's parent folder.
    const buildDir = tempDir('core-build-');
    const work = buildDir.path;
    afterAll(() => buildDir.remove());
    beforeAll(() => {
      mkdirSync(join(work, 'scripts'), { recursive: true });
      copyFileSync(join(project, 'scripts/build.mjs'), join(work, 'scripts/build.mjs'));
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(work, 'node_modules'), 'dir');
      writeFileSync(join(work, 'package.json'), '{ "type": "module" }\n');
    });

    /** Bundles `source` with the project's `buildServer` into `<outdir>/` (main.js and server.cjs). */
    const bundle = (outdir: string, source: string) => {
      writeFileSync(join(work, `${outdir}.ts`), source);
      const build = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { buildServer } = await import('./scripts/build.mjs'); await buildServer({ entry: '${outdir}.ts', outdir: '${outdir}' });`,
        ],
        { cwd: work, encoding: 'utf8' },
      );
      expect(build.status, build.stderr).toBe(0);
    };

    /** `node <nodeArgs> <file>` in the build folder; its standard output. */
    const run = (nodeArgs: string[], file: string) => {
      const done = spawnSync(process.execPath, [...nodeArgs, file], { cwd: work, encoding: 'utf8' });
      expect(done.status, done.stderr).toBe(0);
      return done.stdout;
    };

    /** Bundles `source` into `<outdir>/`, then starts `main.js` twice. */
    const buildAndStart = (outdir: string, source: string) => {
      bundle(outdir, source);
      const start = () => {
        const stdout = run([], join(outdir, 'main.js'));
        const cache = readdirSync(join(work, outdir)).find((name) => name.endsWith('.cache'));
        // The start script saves the cache when V8 had none or rejected it: a new file each time.
        return {
          stdout: stdout.trim(),
          cache: cache === undefined ? undefined : statSync(join(work, outdir, cache)),
        };
      };
      const first = start();
      const second = start();
      return {
        bundle: readFileSync(join(work, outdir, 'server.cjs')),
        main: readFileSync(join(work, outdir, 'main.js'), 'utf8'),
        first,
        second,
      };
    };

    it('escapes the characters of comments, so the start script reads the bundle as latin1, with its code cache', () => {
      const built = buildAndStart(
        'comments',
        [
          // esbuild keeps the comments of class members, as in the packages a server bundles.
          'class Greeting {',
          '  /** A comment with an arrow → and a dash —. */',
          "  text() { return 'a → b — c'; }",
          '}',
          'function café() {}',
          'console.log(JSON.stringify({ text: new Greeting().text(), name: café.name }));',
          '',
        ].join('\n'),
      );
      expect(isAscii(built.bundle)).toBe(true);
      expect(built.bundle.toString('latin1')).toContain('/** A comment with an arrow \\u2192 and a dash \\u2014. */');
      expect(built.main).toContain("source.toString('latin1', 0, end)");
      for (const start of [built.first, built.second]) expect(start.stdout).toBe('{"text":"a → b — c","name":"café"}');
      // The second start loaded the cache the first saved, and V8 took it: nothing saved again.
      expect(built.first.cache).toBeDefined();
      expect(built.second.cache!.ino).toBe(built.first.cache!.ino);
      expect(built.second.cache!.mtimeMs).toBe(built.first.cache!.mtimeMs);
    });

    it('keeps the bundle as it is, read as UTF-8, where an escape would change the program (a raw template)', () => {
      const built = buildAndStart(
        'raw',
        [
          'class Greeting {',
          '  /** A comment → that alone could be escaped. */',
          '  text() { return String.raw`a → b`; }',
          '}',
          'console.log(new Greeting().text(), /→/.source);',
          '',
        ].join('\n'),
      );
      expect(isAscii(built.bundle)).toBe(false);
      expect(built.bundle.toString('utf8')).toContain('/** A comment → that alone could be escaped. */');
      expect(built.main).toContain("source.toString('utf8', 0, end)");
      for (const start of [built.first, built.second]) expect(start.stdout).toBe('a → b →');
      expect(built.second.cache!.ino).toBe(built.first.cache!.ino);
    });

    it("keeps process.nextTick on V8's fast path after a full collection with no tick left", () => {
      // What V8 has learnt about nextTick's object literal, one state per property it defines
      // (MONOMORPHIC: one shape, compiled inline; MEGAMORPHIC: a call into V8's runtime each time).
      bundle(
        'ticks',
        [
          "const debugPrint = new Function('f', '%DebugPrint(f)');",
          'const noop = () => {};',
          'for (let i = 0; i < 1000; i++) process.nextTick(noop);',
          'setImmediate(() => {',
          '  (globalThis as unknown as { gc(): void }).gc();',
          '  for (let i = 0; i < 10; i++) process.nextTick(noop);',
          '  setImmediate(() => debugPrint(process.nextTick));',
          '});',
          '',
        ].join('\n'),
      );
      const literalStates = (stdout: string) =>
        [...stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]);
      const flags = ['--allow-natives-syntax', '--expose-gc'];
      // The bundle alone: the collection dropped the shapes, so nextTick left the fast path.
      const alone = literalStates(run(flags, join('ticks', 'server.cjs')));
      expect(alone).toHaveLength(4);
      expect(alone).toContain('MEGAMORPHIC');
      // Started as `npm start` starts it: the start script's kept tick held them.
      expect(literalStates(run(flags, join('ticks', 'main.js')))).toEqual(Array(4).fill('MONOMORPHIC'));
    });
  });
});

describe('core init, other cases', () => {
  it(
    'gives every project its own secret',
    async () => {
      const a = await core(['init', 'one', '--no-install'], { cwd: dir.path });
      const b = await core(['init', 'two', '--no-install'], { cwd: dir.path });
      expect([a.code, b.code]).toEqual([0, 0]);
      const secret = (name: string) => parseEnv(readFileSync(join(dir.path, name, '.env'), 'utf8')).SECRET_KEY;
      expect(secret('one')).toMatch(/^[0-9a-f]{64}$/);
      expect(secret('one')).not.toBe(secret('two'));
    },
    SLOW,
  );

  it(
    '--db postgres points DATABASE_URL at PostgreSQL, writes no dev.db and explains the database in the README',
    async () => {
      const result = await core(['init', 'shop', '--db', 'postgres', '--no-install'], { cwd: dir.path });
      expect(result.code).toBe(0);
      const project = join(dir.path, 'shop');
      expect(parseEnv(readFileSync(join(project, '.env'), 'utf8')).DATABASE_URL).toBe(
        'postgresql://postgres@127.0.0.1:5432/shop',
      );
      expect(existsSync(join(project, 'dev.db'))).toBe(false);
      expect(readFileSync(join(project, 'README.md'), 'utf8')).toContain('createdb -h 127.0.0.1 -U postgres shop');
    },
    SLOW,
  );

  it(
    'accepts an existing empty folder',
    async () => {
      mkdirSync(join(dir.path, 'empty'));
      const result = await core(['init', 'empty', '--no-install'], { cwd: dir.path });
      expect(result.code).toBe(0);
      expect(existsSync(join(dir.path, 'empty', 'src', 'main.ts'))).toBe(true);
    },
    SLOW,
  );

  it('refuses a folder that is not empty and writes nothing', async () => {
    mkdirSync(join(dir.path, 'taken'));
    writeFileSync(join(dir.path, 'taken', 'notes.txt'), 'mine\n');
    const before = snapshot(dir.path);
    const result = await core(['init', 'taken', '--no-install'], { cwd: dir.path });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      'core: ./taken already exists and is not empty; choose another name or remove that folder',
    ]);
    expect(snapshot(dir.path)).toEqual(before);
  });

  it.each([
    ['Demo', /invalid project name "Demo"/],
    ['1app', /invalid project name "1app"/],
    ['my app', /invalid project name "my app"/],
    ['a--b', /invalid project name "a--b"/],
    ['../escape', /invalid project name "..\/escape"/],
    ['node_modules', /invalid project name "node_modules"/],
    ['x'.repeat(64), /at most 63 characters/],
  ])('refuses the name %j with one line and writes nothing', async (name, message) => {
    const before = snapshot(dir.path);
    const result = await core(['init', name, '--no-install'], { cwd: dir.path });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(message);
    expect(snapshot(dir.path)).toEqual(before);
  });

  it('refuses an unknown --db', async () => {
    const result = await core(['init', 'x', '--db', 'mysql', '--no-install'], { cwd: dir.path });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/argument 'mysql' is invalid. Allowed choices are sqlite, postgres/),
    ]);
    expect(existsSync(join(dir.path, 'x'))).toBe(false);
  });
});
