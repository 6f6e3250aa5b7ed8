/**
 * One real project, installed from the npm registry: `core init demo` with its `npm install`
 * (compiling better-sqlite3 takes a minute or two), then the checks only an installed project
 * allows — one copy of the ORM and of Fastify, the project's own smoke test and type check, the
 * migration runner, the dev server, and the production build (`npm run build`, then
 * `node dist/main.js`). Needs network access to the registry. Slow: one install only.
 */
import { isAscii } from 'node:buffer';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORE_BIN, core, lines, tempDir, withoutNpmNotices } from '../helpers/cli.js';
import { CLIENT_FLOW } from './client-flow.js';

const INSTALL_TIMEOUT = 15 * 60_000;
/** tsc, tsx and esbuild runs: seconds on a quiet machine, more than vitest's default 30 s on a busy one. */
const TOOL_TIMEOUT = 180_000;
const dir = tempDir('core-e2e-');
const project = join(dir.path, 'demo');
let init: Awaited<ReturnType<typeof core>>;

beforeAll(async () => {
  init = await core(['init', 'demo'], { cwd: dir.path, timeoutMs: INSTALL_TIMEOUT });
}, INSTALL_TIMEOUT);
afterAll(() => dir.remove(), 120_000); // an installed project: tens of thousands of files

/** Runs a tool in the project and returns its exit code and output. */
function inProject(
  command: string,
  args: string[],
  extraEnv: Record<string, string> = {},
): { code: number; output: string } {
  // Without this runner's own VITEST_* variables, which would confuse the project's vitest.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== 'SECRET_KEY'),
  );
  const result = spawnSync(command, args, {
    cwd: project,
    encoding: 'utf8',
    env: { ...env, NO_COLOR: '1', ...extraEnv },
  });
  return { code: result.status ?? -1, output: `${result.stdout}\n${result.stderr}` };
}

/** Every installed copy of a package, found on disk (a nested copy would be a second instance). */
function copiesOf(name: string, root = join(project, 'node_modules')): string[] {
  const found: string[] = [];
  const visit = (modules: string) => {
    if (!existsSync(modules)) return;
    if (existsSync(join(modules, name, 'package.json'))) found.push(join(modules, name));
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const packages = entry.name.startsWith('@')
        ? readdirSync(join(modules, entry.name)).map((p) => join(modules, entry.name, p))
        : [join(modules, entry.name)];
      for (const pkg of packages) visit(join(pkg, 'node_modules'));
    }
  };
  visit(root);
  return found;
}

describe('core init demo (real npm install)', () => {
  it('installs with visible progress and exits 0', () => {
    expect(init.stderr).toContain('Installing dependencies (npm install in ./demo');
    expect(init.stderr).toMatch(/Dependencies installed in \d+ s\./);
    expect(init.code).toBe(0);
    expect(existsSync(join(project, 'package-lock.json'))).toBe(true);
  });

  it('installs the versions Core is tested with: no engine warning from npm on this Node', () => {
    // npm prints `npm warn EBADENGINE Unsupported engine` for a package whose `engines` exclude this Node.
    expect(`${init.stdout}\n${init.stderr}`).not.toContain('EBADENGINE');
  });

  it('gives the project its own core command (npx core, from vendor/)', () => {
    // A user's shell: none of the npm variables of the `npm test` running this file.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !/^(VITEST|npm_|INIT_CWD$)/i.test(key)),
    );
    const version = spawnSync('npx', ['--no-install', 'core', '--version'], { cwd: project, encoding: 'utf8', env });
    expect(version.stdout.trim(), version.stderr).toBe('0.1.0');
    expect(readFileSync(join(project, 'node_modules/.bin/core'), 'utf8')).toContain("await import('../dist/core.mjs')");
    expect(readFileSync(join(project, 'README.md'), 'utf8')).toContain('npx core generate');
  });

  it('has exactly one @mikro-orm/core and one fastify (npm ls and on disk)', () => {
    const ls = inProject('npm', ['ls', '@mikro-orm/core', 'fastify', '--all', '--parseable']);
    expect(ls.code).toBe(0);
    const paths = new Set(lines(ls.output).filter((line) => line.startsWith('/')));
    expect([...paths].filter((p) => p.endsWith('/@mikro-orm/core'))).toHaveLength(1);
    expect([...paths].filter((p) => p.endsWith('/fastify'))).toHaveLength(1);
    expect(copiesOf('@mikro-orm/core')).toEqual([join(project, 'node_modules/@mikro-orm/core')]);
    expect(copiesOf('fastify')).toEqual([join(project, 'node_modules/fastify')]);
  });

  it(
    "passes the project's own smoke test (npm test)",
    () => {
      const test = inProject('npm', ['test']);
      expect(test.output).toMatch(/Tests\s+3 passed/);
      expect(test.code).toBe(0);
    },
    TOOL_TIMEOUT,
  );

  it(
    'writes, applies and then finds no migration through the runner shipped in the runtime',
    async () => {
      // A hand-written model (independent of the app generator): the runner loads it through src/main.ts.
      writeFileSync(
        join(project, 'src/note.ts'),
        `import { randomUUID } from 'node:crypto';
import { p } from '@mikro-orm/core';
import { Base, defineModel } from '@core/runtime';

export class Note extends Base {
  static override readonly tableName = 'notes';
  declare id: string;
  declare text: string;
}

export const NoteSchema = defineModel(Note, {
  id: p.uuid().primary().onCreate(() => randomUUID()),
  text: p.string().length(500),
});
`,
      );
      const main = readFileSync(join(project, 'src/main.ts'), 'utf8');
      writeFileSync(
        join(project, 'src/main.ts'),
        main.replace("import policies from './policies.json' with { type: 'json' };", "$&\nimport './note.js';"),
      );

      const make = await core(['makemigrations'], { cwd: project });
      expect(make.code).toBe(0);
      expect(make.stdout).toMatch(/^Created migrations\/sqlite\/Migration\d{14}\.ts \(1 statement\)$/m);
      const files = readdirSync(join(project, 'migrations/sqlite'));
      expect(files.filter((f) => f.endsWith('.ts'))).toHaveLength(1);
      expect(files).toContain('.snapshot.json');

      const again = await core(['makemigrations'], { cwd: project });
      expect(again).toMatchObject({
        code: 0,
        stdout: 'No changes in the models since the last migration: no migration written.\n',
      });
      expect(readdirSync(join(project, 'migrations/sqlite'))).toEqual(files);

      const up = await core(['migrate'], { cwd: project });
      expect(up.code).toBe(0);
      expect(up.stdout).toMatch(/^Applied Migration\d{14}$/m);
      const upAgain = inProject('npm', ['run', '-s', 'migrate']);
      expect(upAgain.output).toContain('No pending migrations: the database is up to date.');
      expect(upAgain.code).toBe(0);
    },
    TOOL_TIMEOUT,
  );

  it(
    'type-checks (npx tsc --noEmit), migrations included',
    () => {
      const tsc = inProject('npx', ['tsc', '--noEmit']);
      expect(withoutNpmNotices(tsc.output).trim()).toBe('');
      expect(tsc.code).toBe(0);
    },
    TOOL_TIMEOUT,
  );

  it('core run serves the app, prints its URLs and leaves no process behind on SIGTERM', async () => {
    const port = 18_000 + Math.floor(Math.random() * 2000);
    const child = spawn(process.execPath, [CORE_BIN, 'run', '--port', String(port)], {
      cwd: project,
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.resume();
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      let health: unknown = null;
      for (let i = 0; i < 100 && health === null; i++) {
        await new Promise((r) => setTimeout(r, 200));
        health = await fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.json() as Promise<unknown>,
          () => null,
        );
      }
      expect(health).toEqual({ status: 'ok' });
      expect(stdout).toContain(`API   http://127.0.0.1:${port}/`);
      expect(stdout).toContain(`Docs  http://127.0.0.1:${port}/docs`);
      const descendants = descendantsOf(child.pid!);
      expect(descendants.length).toBeGreaterThan(0);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      for (let i = 0; i < 50 && descendants.some(isAlive); i++) await new Promise((r) => setTimeout(r, 100));
      expect(descendants.filter(isAlive)).toEqual([]);
      expect(
        await fetch(`http://127.0.0.1:${port}/health`).then(
          () => 'up',
          () => 'down',
        ),
      ).toBe('down');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);

  describe("production build (npm run build, then npm start's command line)", () => {
    let startapp: Awaited<ReturnType<typeof core>>;
    beforeAll(async () => {
      // A real app with writes: the template task app, its migration applied to dev.db, its test and typed client.
      startapp = await core(['startapp', 'tasks', '--template'], { cwd: project });
      expect(startapp.code, startapp.stderr).toBe(0);
    }, 120_000);

    it(
      "writes the app's test with the typed client it calls the app through; npm test checks the client, then passes",
      () => {
        expect(startapp.stdout).toContain('CREATE    test/apps/tasks.test.ts');
        for (const file of ['openapi.json', 'schema.d.ts', 'index.ts'])
          expect(startapp.stdout).toContain(`CREATE src/client/${file}`);
        const test = inProject('npm', ['test']);
        // `pretest`: the client on disk is what `core client` would write.
        expect(test.output).toContain('CURRENT src/client/schema.d.ts');
        expect(test.output).toMatch(/test\/apps\/tasks\.test\.ts \(8 tests\)/);
        expect(test.output).toMatch(/Tests\s+11 passed \(11\)/);
        expect(test.code).toBe(0);
      },
      TOOL_TIMEOUT,
    );

    it(
      'type-checks src/ and bundles it, the ORM included, into dist/server.cjs with its start script dist/main.js',
      () => {
        const build = inProject('npm', ['run', 'build']);
        expect(build.code, build.output).toBe(0);
        expect(build.output).toContain('tsc -p tsconfig.build.json && node scripts/build.mjs');
        // No code cache yet: the first start saves it.
        expect(readdirSync(join(project, 'dist')).sort()).toEqual(['main.js', 'server.cjs', 'server.cjs.map']);
        const bundle = readFileSync(join(project, 'dist/server.cjs'), 'utf8');
        // Native drivers and pino are loaded from node_modules.
        for (const external of ['better-sqlite3', 'pino']) expect(bundle).toContain(`require("${external}")`);
        // The Swagger UI stays external too, imported on the first /docs request only (swaggerUiOnDemand).
        expect(bundle).toContain('import("@fastify/swagger-ui")');
        // Fastify, TypeBox, the runtime and MikroORM (one copy of @mikro-orm/core) are inside the bundle.
        for (const bundled of [
          'fastify',
          'typebox',
          '@core/runtime',
          '@mikro-orm/core',
          '@mikro-orm/better-sqlite',
          'knex',
        ])
          expect(bundle).not.toMatch(new RegExp(`from "${bundled}"|require\\("${bundled}"\\)`));
        // keepNames' helper leaves a name that is already right alone (scripts/build.mjs).
        expect(bundle).toContain('var __name = (target, value) => target.name === value ? target : __defProp(');
        // The packages' comments escaped, the bundle is ASCII and the start script reads it as latin1.
        expect(isAscii(readFileSync(join(project, 'dist/server.cjs')))).toBe(true);
        expect(readFileSync(join(project, 'dist/main.js'), 'utf8')).toContain("source.toString('latin1', 0, end)");
      },
      TOOL_TIMEOUT,
    );

    it(
      'leaves the migration runner working from the sources (npm run migrate)',
      () => {
        // `core startapp` applied the app's migration already (development).
        const up = inProject('npm', ['run', '-s', 'migrate']);
        expect(up.output).toContain('No pending migrations: the database is up to date.');
        expect(up.code).toBe(0);
      },
      TOOL_TIMEOUT,
    );

    it('serves in production: a create (one @mikro-orm/core), a read, the docs, JSON logs, exit 0 on SIGTERM', async () => {
      const token = (await core(['token', '--role', 'admin'], { cwd: project })).stdout.trim();
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      // SECRET_KEY comes from .env; the real environment's ENVIRONMENT wins over its `development`.
      // The docs are opt-in in production (DOCS_ENABLED): on here, to check the bundle serves the UI.
      const server = await startBuilt({ ENVIRONMENT: 'production', DOCS_ENABLED: 'true' });
      try {
        const created = await fetch(`${server.baseUrl}/tasks/`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ title: 'Ship it' }),
        });
        const body = (await created.json()) as { data: { id: string; title: string } };
        expect(created.status, JSON.stringify(body)).toBe(201);
        const read = await fetch(`${server.baseUrl}/tasks/${body.data.id}`, { headers });
        expect(read.status).toBe(200);
        expect(((await read.json()) as { data: unknown }).data).toMatchObject({ id: body.data.id, title: 'Ship it' });
        // Production skips Ajv's meta-schema check of the route schemas; the schemas still validate.
        const invalid = await fetch(`${server.baseUrl}/tasks/`, { method: 'POST', headers, body: '{"title": 5}' });
        expect(invalid.status).toBe(422);
        expect(await invalid.json()).toMatchObject({
          error: { code: 'VALIDATION_ERROR', details: [expect.objectContaining({ path: 'title' })] },
        });
        const badId = await fetch(`${server.baseUrl}/tasks/not-a-uuid`, { headers });
        expect(badId.status).toBe(422);
        // The Swagger UI serves its page from its own package folder (external).
        expect((await fetch(`${server.baseUrl}/docs/static/index.html`)).status).toBe(200);
        expect((await fetch(`${server.baseUrl}/docs/json`)).status).toBe(200);
        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
        // On its way out the first start saved V8's code cache for the next ones.
        expect(readdirSync(join(project, 'dist')).filter((name) => name.endsWith('.cache'))).toEqual([
          expect.stringMatching(/^server-[0-9a-f]{16}\.cache$/),
        ]);
        const logLine = server
          .output()
          .split('\n')
          .find((line) => line.includes('Server listening'));
        expect(JSON.parse(logLine!)).toMatchObject({ level: 30, msg: expect.stringContaining('Server listening') });
      } finally {
        if (server.child.exitCode === null) server.child.kill('SIGKILL');
      }
    }, 60_000);

    it('serves in development too (pretty logs through pino-pretty in a worker thread)', async () => {
      // This start loads the code cache the one above saved.
      const cacheFile = () => {
        const name = readdirSync(join(project, 'dist')).find((file) => file.endsWith('.cache'))!;
        return statSync(join(project, 'dist', name));
      };
      const cacheBefore = cacheFile();
      const server = await startBuilt({});
      try {
        // The worker thread writes a moment later than the server answers.
        for (let i = 0; i < 50 && !server.output().includes('Server listening'); i++)
          await new Promise((r) => setTimeout(r, 100));
        expect(server.output()).toMatch(/INFO.*Server listening/);
        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
        // V8 took the cache: the start script saves one only when it had none or V8 rejected it.
        expect(cacheFile()).toMatchObject({ ino: cacheBefore.ino, mtimeMs: cacheBefore.mtimeMs });
      } finally {
        if (server.child.exitCode === null) server.child.kill('SIGKILL');
      }
    }, 60_000);

    it("starts through Node's own loader when source maps are on (stack traces in TypeScript)", async () => {
      const server = await startBuilt({ ENVIRONMENT: 'production', NODE_OPTIONS: '--enable-source-maps' });
      try {
        expect((await fetch(`${server.baseUrl}/tasks/`)).status).toBe(401);
        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
      } finally {
        if (server.child.exitCode === null) server.child.kill('SIGKILL');
      }
    }, 60_000);

    it(
      'core client finds the client startapp wrote current; core generate refreshes it; a script using it type-checks and runs green',
      async () => {
        const client = await core(['client'], { cwd: project });
        expect(client.code, client.stderr).toBe(0);
        for (const file of ['openapi.json', 'schema.d.ts', 'index.ts'])
          expect(client.stdout).toContain(`UNCHANGED src/client/${file}`);

        // A second resource and a relation to it: the client follows the regenerated routes.
        expect((await core(['startapp', 'projects'], { cwd: project })).code).toBe(0);
        const manifestPath = (module: string): string => join(project, `src/apps/${module}/${module}.resource.json`);
        const edit = (module: string, change: (manifest: Record<string, Record<string, unknown>>) => void): void => {
          const manifest = JSON.parse(readFileSync(manifestPath(module), 'utf8')) as Record<
            string,
            Record<string, unknown>
          >;
          change(manifest);
          writeFileSync(manifestPath(module), `${JSON.stringify(manifest, null, 2)}\n`);
        };
        edit('projects', (m) => (m['fields']!['name'] = { type: 'string', max_length: 120 }));
        edit(
          'tasks',
          (m) =>
            (m['relations'] = {
              project: { kind: 'many-to-one', target: 'projects', nullable: true, on_delete: 'set null' },
            }),
        );
        const generate = await core(['generate'], { cwd: project });
        expect(generate.code, generate.stderr).toBe(0);
        expect(generate.stdout).toContain('UPDATE src/client/schema.d.ts');
        expect(readFileSync(join(project, 'src/client/schema.d.ts'), 'utf8')).toContain('ProjectOut');

        writeFileSync(join(project, 'test/client-flow.ts'), CLIENT_FLOW);
        const tsc = inProject('npx', ['tsc', '--noEmit']);
        expect(withoutNpmNotices(tsc.output).trim()).toBe('');
        expect(tsc.code).toBe(0);

        const token = (await core(['token', '--role', 'admin'], { cwd: project })).stdout.trim();
        const server = await startSource();
        try {
          const flow = inProject(process.execPath, ['--import', 'tsx', 'test/client-flow.ts'], {
            API_URL: server.baseUrl,
            API_TOKEN: token,
          });
          expect(flow.output).toContain('client flow: ok');
          expect(flow.code).toBe(0);
        } finally {
          server.child.kill('SIGTERM');
          await server.exited;
        }

        // The regenerated tests of both apps, through the refreshed client: the smoke test's 3, then 8 each.
        const tests = inProject('npm', ['test']);
        expect(tests.output).toMatch(/test\/apps\/projects\.test\.ts \(8 tests\)/);
        expect(tests.output).toMatch(/Tests\s+19 passed \(19\)/);
        expect(tests.code).toBe(0);
      },
      2 * TOOL_TIMEOUT,
    );
  });
});

/** A server started from the production build, answering on `baseUrl`. */
interface BuiltServer {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/**
 * The project's `npm start` command line (`node <flags> dist/main.js`) with `env` on top of the runner's,
 * once it answers GET /health. Node is started directly, not through npm, so signals reach it.
 */
async function startBuilt(env: Record<string, string>): Promise<BuiltServer> {
  const port = 20_000 + Math.floor(Math.random() * 2000);
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith('VITEST') && key !== 'SECRET_KEY' && key !== 'ENVIRONMENT',
    ),
  );
  const start = (
    JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start.split(' ');
  expect(start[0]).toBe('node');
  const child = spawn(process.execPath, start.slice(1), {
    cwd: project,
    env: { ...base, NO_COLOR: '1', PORT: String(port), ...env },
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) break;
    const status = await fetch(`${baseUrl}/health`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return { child, baseUrl, output: () => output, exited };
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`node dist/main.js did not answer GET /health:\n${output}`);
}

/** The app from its sources (`src/main.ts` with the project's tsx), once it answers GET /health. */
async function startSource(): Promise<BuiltServer> {
  const port = 22_000 + Math.floor(Math.random() * 2000);
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== 'SECRET_KEY'),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: project,
    env: { ...base, NO_COLOR: '1', PORT: String(port), LOG_LEVEL: 'warn' },
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 150 && child.exitCode === null; i++) {
    if (
      (await fetch(`${baseUrl}/health`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      return { child, baseUrl, output: () => output, exited };
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`src/main.ts did not answer GET /health:\n${output}`);
}

/** PIDs of every process below `pid` (Linux /proc). */
function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) =>
    (children.get(p) ?? []).forEach((c) => {
      out.push(c);
      walk(c);
    });
  walk(pid);
  return out;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
