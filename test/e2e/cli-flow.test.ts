/**
 * The whole flow a newcomer goes through, with the real `core` command in a temporary folder:
 * `core init demo` (one real npm install), `core startapp tasks --template`, the project's type check
 * and its own tests (smoke + the generated endpoint tests), `core run` serving the seven endpoints over
 * real HTTP to tokens from `core token` (admin, viewer, and an editor role whose `assignee_email` is
 * restricted); the development loop with the project's own CLI: while `core run` serves, a field added
 * to the manifest and `npx core generate` (the server answers on the new column without a restart by
 * hand, never with an error in between), then the field removed again, which stops before losing its
 * values until `npx core migrate`; then a manifest edit (a field and a relation to a new app), a hand
 * edit in services.ts, `core generate`, the type check again, and a restarted server that serves the
 * new field and `project_id` with the old rows intact.
 *
 * Needs the npm registry (one install, a few minutes: better-sqlite3 is compiled). Every child process
 * is stopped at the end, also when a step fails.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORE_BIN, core, lines, tempDir, withoutNpmNotices } from '../helpers/cli.js';

const INSTALL_TIMEOUT = 15 * 60_000;
const STEP_TIMEOUT = 180_000;
const dir = tempDir('core-flow-');
const project = join(dir.path, 'demo');
const servers = new Set<ChildProcess>();
/** What each server printed, stdout and stderr. */
const outputs = new WeakMap<ChildProcess, () => string>();
const timings: Record<string, number> = {};
let init: Awaited<ReturnType<typeof core>>;

beforeAll(async () => {
  init = await timed('core init demo (npm install)', () =>
    core(['init', 'demo'], { cwd: dir.path, timeoutMs: INSTALL_TIMEOUT }),
  );
}, INSTALL_TIMEOUT);

afterAll(async () => {
  for (const server of servers) await stop(server);
  dir.remove();
  process.stdout.write(
    `cli-flow timings: ${Object.entries(timings)
      .map(([step, ms]) => `${step} ${(ms / 1000).toFixed(1)} s`)
      .join(', ')}\n`,
  );
}, 120_000); // removing an installed project is tens of thousands of files: slow on a busy disk

async function timed<T>(step: string, fn: () => Promise<T> | T): Promise<T> {
  const started = Date.now();
  try {
    return await fn();
  } finally {
    timings[step] = Date.now() - started;
  }
}

/** Runs a tool in the project (without this runner's VITEST_* variables, which would confuse the project's vitest). */
function inProject(command: string, args: string[]): { code: number; output: string } {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== 'SECRET_KEY'),
  );
  const result = spawnSync(command, args, { cwd: project, encoding: 'utf8', env: { ...env, NO_COLOR: '1' } });
  return { code: result.status ?? -1, output: `${result.stdout}\n${result.stderr}` };
}

const read = (file: string) => readFileSync(join(project, file), 'utf8');
const write = (file: string, text: string) => writeFileSync(join(project, file), text);

async function token(role: string): Promise<string> {
  const result = await core(['token', '--role', role], { cwd: project });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

/**
 * Runs a tool in the project without blocking this process (servers and polls go on meanwhile), in
 * the environment of a user's shell: without npm's variables from the `npm test` that runs this file,
 * which would make `npx` look for commands in this repository instead of the project.
 */
function inProjectAsync(command: string, args: string[]): Promise<{ code: number; output: string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(VITEST|npm_|SECRET_KEY$|INIT_CWD$)/i.test(key)),
  );
  const child = spawn(command, args, { cwd: project, env: { ...env, NO_COLOR: '1' } });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code: code ?? -1, output })));
}

/** The project's own `core` (`@core/cli`, installed from vendor/): what `npx core` runs there. */
const projectCore = () => join(project, 'node_modules/@core/cli/bin/core.js');

/** `core run --port <port>` as a child process (this repository's CLI, or `bin`); resolves once /health answers. */
async function serve(port: number, bin = CORE_BIN): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bin, 'run', '--port', String(port)], {
    cwd: project,
    env: { ...process.env, NO_COLOR: '1' },
  });
  servers.add(child);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  outputs.set(child, () => output);
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`core run exited with ${child.exitCode}:\n${output}`);
    const health = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.json() as Promise<unknown>,
      () => null,
    );
    if (health !== null) return child;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`core run did not answer /health within 60 s:\n${output}`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  servers.delete(child);
}

/** A free port: 18000–19999 picked at random, then checked by connecting. */
async function freePort(): Promise<number> {
  for (;;) {
    const port = 18_000 + Math.floor(Math.random() * 2000);
    const taken = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (!taken) return port;
  }
}

interface Answer {
  status: number;
  headers: Headers;
  body: { success: boolean; message: string; data: unknown; meta?: unknown; error?: { code: string } };
}

function http(port: number, auth: string | undefined) {
  return async (method: string, path: string, payload?: unknown): Promise<Answer> => {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Bearer ${auth}`;
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers,
      ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
  };
}

type Row = Record<string, unknown>;

describe('core init → startapp --template → run → generate → run again', () => {
  let firstTaskId: string;

  it('core init demo installs the project', () => {
    expect(init.stderr).toMatch(/Dependencies installed in \d+ s\./);
    expect(init.code).toBe(0);
  });

  it(
    'core startapp tasks --template writes the app, its test, the registration, the migration and the typed client',
    async () => {
      const result = await timed('core startapp tasks --template', () =>
        core(['startapp', 'tasks', '--template'], { cwd: project, timeoutMs: STEP_TIMEOUT }),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(lines(result.stdout).filter((line) => line.startsWith('CREATE') || line.startsWith('UPDATE'))).toEqual([
        'CREATE    src/apps/resource.schema.json',
        'CREATE    src/apps/tasks/config.ts',
        'CREATE    src/apps/tasks/models.ts',
        'CREATE    src/apps/tasks/plugin.ts',
        'CREATE    src/apps/tasks/repositories.ts',
        'CREATE    src/apps/tasks/routers.ts',
        'CREATE    src/apps/tasks/schemas.ts',
        'CREATE    src/apps/tasks/services.ts',
        'CREATE    src/apps/tasks/tasks.resource.json',
        'UPDATE    src/main.ts',
        'CREATE    test/apps/tasks.test.ts',
        // The client the test calls the app through, written after the migration.
        'CREATE src/client/openapi.json',
        'CREATE src/client/schema.d.ts',
        'CREATE src/client/index.ts',
      ]);
      expect(readdirSync(join(project, 'migrations/sqlite')).filter((f) => f.endsWith('.ts'))).toHaveLength(1);
    },
    STEP_TIMEOUT,
  );

  it(
    'type-checks (npx tsc --noEmit)',
    async () => {
      const tsc = await timed('tsc --noEmit', () => inProject('npx', ['tsc', '--noEmit']));
      expect(withoutNpmNotices(tsc.output).trim()).toBe('');
      expect(tsc.code).toBe(0);
    },
    STEP_TIMEOUT,
  );

  it(
    "passes the project's own tests: the smoke test and the generated endpoint test",
    async () => {
      const test = await timed('npm test', () => inProject('npm', ['test']));
      expect(test.output).toMatch(/test\/apps\/tasks\.test\.ts \(8 tests\)/);
      expect(test.output).toMatch(/Tests\s+11 passed \(11\)/);
      expect(test.code).toBe(0);
    },
    STEP_TIMEOUT,
  );

  it(
    'core run serves the seven endpoints over HTTP, with restrictions per role',
    async () => {
      // A role that may write tasks but never sees or sets assignee_email.
      const policies = JSON.parse(read('src/policies.json')) as { roles: Record<string, unknown> };
      policies.roles.editor = { permissions: ['tasks:*'], restricted_fields: ['tasks.assignee_email'] };
      write('src/policies.json', `${JSON.stringify(policies, null, 2)}\n`);

      const port = await freePort();
      const server = await timed('core run (first start)', () => serve(port));
      try {
        await firstRun(port);
      } finally {
        await stop(server);
      }
    },
    STEP_TIMEOUT,
  );

  async function firstRun(port: number): Promise<void> {
    const [admin, viewer, editor] = await Promise.all([token('admin'), token('viewer'), token('editor')]).then((t) =>
      t.map((auth) => http(port, auth)),
    );

    // 1. create
    const created = await admin('POST', '/tasks/', {
      title: 'Write the docs',
      assignee_email: 'ada@example.com',
      priority: 'urgent',
    });
    expect(created.status).toBe(201);
    const task = created.body.data as Row;
    firstTaskId = String(task.id);
    expect(created.headers.get('location')).toBe(`/tasks/${firstTaskId}`);
    expect(task).toMatchObject({
      title: 'Write the docs',
      assignee_email: 'ada@example.com',
      priority: 'medium',
      is_completed: false,
    });
    // 2. view
    expect((await admin('GET', `/tasks/${firstTaskId}`)).body.data).toEqual(task);
    // 3. replace, 4. partial update
    const replaced = await admin('PUT', `/tasks/${firstTaskId}`, {
      title: 'Write the docs',
      assignee_email: 'ada@example.com',
      is_completed: false,
    });
    expect(replaced.status).toBe(200);
    const patched = await admin('PATCH', `/tasks/${firstTaskId}`, { description: 'All of them' });
    expect(patched.body.data).toMatchObject({
      title: 'Write the docs',
      description: 'All of them',
      assignee_email: 'ada@example.com',
    });
    // 6. list, 7. search
    const list = await admin('GET', '/tasks/');
    expect(list.status).toBe(200);
    expect((list.body.data as Row[]).map((row) => row.id)).toEqual([firstTaskId]);
    const search = await admin('POST', '/tasks/search', {
      filters: [{ field: 'title', op: 'startswith', value: 'Write' }],
    });
    expect((search.body.data as Row[]).map((row) => row.id)).toEqual([firstTaskId]);
    // 5. delete (a second task)
    const doomed = (await admin('POST', '/tasks/', { title: 'Delete me' })).body.data as Row;
    const deleted = await admin('DELETE', `/tasks/${String(doomed.id)}`);
    expect(deleted).toMatchObject({ status: 200, body: { success: true, data: null } });
    expect((await admin('GET', `/tasks/${String(doomed.id)}`)).status).toBe(404);

    // The viewer reads without assignee_email (and the answer varies by credentials), and cannot write.
    const seen = await viewer('GET', `/tasks/${firstTaskId}`);
    expect(seen.status).toBe(200);
    expect(seen.body.data).not.toHaveProperty('assignee_email');
    expect(seen.headers.get('vary')).toMatch(/Authorization, Cookie/);
    expect((await viewer('POST', '/tasks/', { title: 'Nope' })).body.error?.code).toBe('FORBIDDEN');

    // The editor writes, but assignee_email is pruned from its input and masked from its output…
    const edited = await editor('POST', '/tasks/', { title: 'From the editor', assignee_email: 'eve@example.com' });
    expect(edited.status).toBe(201);
    expect(edited.body.data).not.toHaveProperty('assignee_email');
    expect(
      ((await admin('GET', `/tasks/${String((edited.body.data as Row).id)}`)).body.data as Row).assignee_email,
    ).toBeNull();
    // …removed from introspection, and forbidden in search.
    const schema = await editor('POST', '/tasks/?schema=true', {});
    expect(schema.body).toMatchObject({
      message: 'Schema generated successfully',
      data: { title: 'TaskCreate' },
      meta: { restricted_fields: ['tasks.assignee_email'] },
    });
    expect(Object.keys((schema.body.data as { properties: Row }).properties)).toEqual([
      'title',
      'description',
      'priority',
    ]);
    const forbidden = await editor('POST', '/tasks/search', {
      filters: [{ field: 'assignee_email', op: 'eq', value: 'ada@example.com' }],
    });
    expect(forbidden).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
  }

  it(
    'while core run serves, npx core generate applies the migration before the new code answers',
    async () => {
      const port = await freePort();
      const server = await timed("core run (the project's CLI)", () => serve(port, projectCore()));
      try {
        const admin = http(port, await token('admin'));
        const manifestFile = 'src/apps/tasks/tasks.resource.json';
        const original = read(manifestFile);
        const manifest = JSON.parse(original) as { fields: Row };
        manifest.fields.estimate = { type: 'integer', nullable: true };
        write(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);

        // A search on the new field, over and over while the command runs: the old code refuses the field
        // (422), the server is away while the project changes, and then the new code answers 200; never a
        // 500 from code that runs ahead of its schema.
        const generating = timed('npx core generate (served)', () => inProjectAsync('npx', ['core', 'generate']));
        const search = { filters: [{ field: 'estimate', op: 'eq', value: 3 }] };
        const seen: number[] = [];
        for (const deadline = Date.now() + STEP_TIMEOUT - 30_000; Date.now() < deadline && seen.at(-1) !== 200; ) {
          const answer = await admin('POST', '/tasks/search', search).catch(() => null);
          if (answer) seen.push(answer.status);
          await new Promise((r) => setTimeout(r, 200));
        }
        const generate = await generating;
        expect(generate.code, generate.output).toBe(0);
        expect(generate.output).toMatch(/^Applied Migration\d{14}$/m);
        expect(seen.at(-1), outputs.get(server)!()).toBe(200);
        expect(seen.filter((status) => status >= 500)).toEqual([]);
        expect(outputs.get(server)!()).toContain('Waiting for core generate to finish');
        const created = await admin('POST', '/tasks/', { title: 'Estimate me', estimate: 3 });
        expect(created.status).toBe(201);
        expect(created.body.data).toMatchObject({ title: 'Estimate me', estimate: 3 });
        const id = String((created.body.data as Row).id);

        // Removing the field would drop a column that holds a value: written, not applied, and said so.
        write(manifestFile, original);
        const dropping = await timed('npx core generate (refused)', () => inProjectAsync('npx', ['core', 'generate']));
        expect(dropping.code, dropping.output).toBe(3);
        expect(dropping.output).toContain('tasks.estimate: column dropped; 1 row holds a value');
        expect(dropping.output).toContain('to let the data go, run `core migrate`');
        expect(lines(dropping.output).at(-1)).toBe(
          'core: not applied: a pending migration would lose data (listed above)',
        );

        // The user lets it go: the server comes back on the migrated schema.
        const migrate = await timed('npx core migrate', () => inProjectAsync('npx', ['core', 'migrate']));
        expect(migrate.code, migrate.output).toBe(0);
        let after: Answer | null = null;
        for (let i = 0; i < 300 && after?.status !== 200; i++) {
          after = await admin('GET', `/tasks/${id}`).catch(() => null);
          if (after?.status !== 200) await new Promise((r) => setTimeout(r, 200));
        }
        expect(after?.body.data).toMatchObject({ id, title: 'Estimate me' });
        expect(after?.body.data).not.toHaveProperty('estimate');
        expect((await admin('DELETE', `/tasks/${id}`)).status).toBe(200); // the rows of the next steps stay as they were
      } finally {
        await stop(server);
      }
    },
    2 * STEP_TIMEOUT,
  );

  it(
    'core generate after a manifest edit keeps the hand edit, type-checks, and a restarted server serves the change',
    async () => {
      const projects = await timed('core startapp projects', () =>
        core(['startapp', 'projects'], { cwd: project, timeoutMs: STEP_TIMEOUT }),
      );
      expect(projects.code, projects.stderr).toBe(0);

      const manifestFile = 'src/apps/tasks/tasks.resource.json';
      const manifest = JSON.parse(read(manifestFile)) as { fields: Row; relations?: Row };
      manifest.fields.due_on = { type: 'date', nullable: true };
      manifest.relations = { project: { kind: 'many-to-one', target: 'projects', nullable: true, inverse: 'tasks' } };
      write(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
      const handEdit = '  // Hand edit: tasks are reviewed weekly.\n';
      write(
        'src/apps/tasks/services.ts',
        read('src/apps/tasks/services.ts').replace('  constructor(', `${handEdit}  constructor(`),
      );

      const generate = await timed('core generate', () =>
        core(['generate'], { cwd: project, timeoutMs: STEP_TIMEOUT }),
      );
      expect(generate.code, generate.stderr).toBe(0);
      expect(lines(generate.stdout)).toEqual(
        expect.arrayContaining([
          'UPDATE    src/apps/projects/models.ts',
          'UPDATE    src/apps/projects/schemas.ts',
          'UPDATE    src/apps/tasks/models.ts',
          'UPDATE    src/apps/tasks/schemas.ts',
          'UNCHANGED src/apps/tasks/services.ts',
          'UPDATE    test/apps/tasks.test.ts',
        ]),
      );
      expect(read('src/apps/tasks/services.ts')).toContain(handEdit);
      const migrations = readdirSync(join(project, 'migrations/sqlite'))
        .filter((f) => f.endsWith('.ts'))
        .sort();
      expect(migrations).toHaveLength(5); // tasks, estimate added and dropped, projects, this change
      // MikroORM 6.6.16 puts the foreign key of a column added to an existing SQLite table on the first
      // column added in the same migration (here due_on): a MikroORM bug, not Core's. Soft, so
      // the rest of the flow is still checked.
      const migration = read(`migrations/sqlite/${migrations.at(-1)!}`);
      expect
        .soft(migration, 'the foreign key belongs to project_id (MikroORM SqliteTableCompiler bug)')
        .toMatch(/add column \\`project_id\\` text null constraint/);

      const tsc = await timed('tsc --noEmit (after generate)', () => inProject('npx', ['tsc', '--noEmit']));
      expect(withoutNpmNotices(tsc.output).trim()).toBe('');
      expect(tsc.code).toBe(0);
      const again = await core(['generate'], { cwd: project });
      expect(lines(again.stdout).every((line) => line.startsWith('UNCHANGED') || / unchanged$/.test(line))).toBe(true);

      const port = await freePort();
      const server = await timed('core run (restart)', () => serve(port));
      try {
        await secondRun(port);
      } finally {
        await stop(server);
      }

      const test = await timed('npm test (after generate)', () => inProject('npm', ['test']));
      expect(test.output).toMatch(/Tests\s+19 passed \(19\)/);
      expect(test.code).toBe(0);
    },
    2 * STEP_TIMEOUT,
  );

  async function secondRun(port: number): Promise<void> {
    const admin = http(port, await token('admin'));
    const old = await admin('GET', `/tasks/${firstTaskId}`);
    expect(old.status).toBe(200);
    expect(old.body.data).toMatchObject({
      id: firstTaskId,
      title: 'Write the docs',
      description: 'All of them',
      due_on: null,
      project_id: null,
    });

    const projectRow = (await admin('POST', '/projects/', {})).body.data as Row;
    const moved = await admin('PATCH', `/tasks/${firstTaskId}`, { project_id: projectRow.id });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ title: 'Write the docs', due_on: null, project_id: projectRow.id });
    const dated = await admin('PATCH', `/tasks/${firstTaskId}`, { due_on: '2026-12-24' });
    expect
      .soft(dated.status, 'due_on is writable (fails while the migration puts the foreign key on due_on)')
      .toBe(200);
    const included = await admin('GET', `/tasks/${firstTaskId}?include=project`);
    expect((included.body.data as Row).project).toEqual({ id: projectRow.id });
    const inverse = await admin('GET', `/projects/${String(projectRow.id)}?include=tasks`);
    expect(((inverse.body.data as Row).tasks as Row[]).map((t) => t.id)).toEqual([firstTaskId]);
    expect(((await admin('GET', '/tasks/')).body.data as Row[]).length).toBe(2); // the rows written before the migration
  }

  it('stopped every server it started', () => {
    expect([...servers].map((server) => server.pid)).toEqual([]);
  });
});
