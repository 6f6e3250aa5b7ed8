/**
 * A pagination cursor is signed with a key derived from `SECRET_KEY`, so it keeps working on every
 * instance with the same settings and after a restart. Proven with real processes: the fixture app's
 * `src/main.ts` (which, like every project generated before this, does not hand its secret to
 * `dbManager.initApp`) started as servers from one folder and its `.env`, on one SQLite file and on
 * one PostgreSQL database. A cursor from the first server pages on a second one running beside it and
 * on the first one restarted; a server with another `SECRET_KEY` refuses it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signToken } from '@core/runtime';
import { DatabaseManager } from '../../runtime/src/db/database.js';
import { TaskSchema } from '../../fixtures/apps/tasks/src/apps/tasks/models.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { describePerDatabase } from '../helpers/databases.js';

const TSX = join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs');
const MAIN = join(REPO_ROOT, 'fixtures/apps/tasks/src/main.ts');
/** Starting a server transpiles the runtime from source: seconds each, more on a busy machine. */
const START_TIMEOUT = 90_000;

interface Server {
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** `src/main.ts` run the way `npm run dev` runs it, in `cwd` (its `.env`), on a port of its own. */
async function startServer(cwd: string, env: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', NO_COLOR: '1' };
  // Only the folder's .env decides these (a SECRET_KEY in this runner's environment would win over it).
  for (const name of ['SECRET_KEY', 'DATABASE_URL', 'ENVIRONMENT'] as const) if (!(name in env)) delete childEnv[name];
  for (const name of Object.keys(childEnv)) if (name.startsWith('VITEST')) delete childEnv[name];
  const child = spawn(process.execPath, [TSX, '--tsconfig', join(REPO_ROOT, 'tsconfig.json'), MAIN], {
    cwd,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output}`);
    const up = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { url, child, output: () => output };
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`the server did not answer /health within ${START_TIMEOUT / 1000} s:\n${output}`);
}

async function stopServer(server: Server | undefined): Promise<void> {
  const child = server?.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await closed;
  clearTimeout(timer);
}

describePerDatabase('cursors across processes', ({ name, url }) => {
  let dir: ReturnType<typeof tempDir>;
  const secret = randomBytes(32).toString('hex');
  const token = signToken({ sub: 'admin', roles: ['admin'] }, secret);
  const servers: Server[] = [];
  let first: Server;
  let second: Server;

  const call = async (server: Server, method: string, path: string, body?: unknown) => {
    const res = await fetch(server.url + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as {
        data: { title: string }[];
        meta: { next_cursor: string | null };
        error?: { code: string };
      },
    };
  };
  const titles = (body: { data: { title: string }[] }) => body.data.map((t) => t.title);

  beforeAll(async () => {
    dir = tempDir(`core-cursor-${name}-`);
    const databaseUrl = name === 'sqlite' ? `sqlite:${join(dir.path, 'app.db')}` : url();
    writeFileSync(
      join(dir.path, '.env'),
      `SECRET_KEY=${secret}\nDATABASE_URL=${databaseUrl}\nENVIRONMENT=production\nLOG_LEVEL=warn\n`,
    );
    // The schema, as `core migrate` would leave it.
    const manager = new DatabaseManager();
    const db = await manager.initApp(databaseUrl, false, { entities: [TaskSchema], cursorSecret: 'schema-setup-only' });
    await db.resetSchema();
    await manager.close();
    [first, second] = await Promise.all([startServer(dir.path), startServer(dir.path)]);
    servers.push(first, second);
    for (let i = 1; i <= 5; i++)
      expect((await call(first, 'POST', '/tasks/', { title: `task ${i}` })).status).toBe(201);
  }, 4 * START_TIMEOUT);

  afterAll(async () => {
    await Promise.all(servers.map(stopServer));
    dir?.remove();
  }, 30_000);

  it(
    'a list cursor from one server pages on another with the same .env, and on the first after a restart',
    async () => {
      const page1 = await call(first, 'GET', '/tasks/?limit=2');
      expect(page1.status).toBe(200);
      const cursor = page1.body.meta.next_cursor!;
      expect(cursor).toEqual(expect.any(String));
      const expected = await call(first, 'GET', `/tasks/?limit=2&cursor=${encodeURIComponent(cursor)}`);
      expect(expected.status).toBe(200);
      expect(expected.body.data).toHaveLength(2);
      expect(titles(expected.body)).not.toEqual(expect.arrayContaining(titles(page1.body)));

      const elsewhere = await call(second, 'GET', `/tasks/?limit=2&cursor=${encodeURIComponent(cursor)}`);
      expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
      expect(titles(elsewhere.body)).toEqual(titles(expected.body));

      await stopServer(first);
      const restarted = await startServer(dir.path);
      servers.push(restarted);
      const after = await call(restarted, 'GET', `/tasks/?limit=2&cursor=${encodeURIComponent(cursor)}`);
      expect(after.status, JSON.stringify(after.body)).toBe(200);
      expect(titles(after.body)).toEqual(titles(expected.body));
      first = restarted;
    },
    2 * START_TIMEOUT,
  );

  it(
    'a search cursor pages on another server too, and a server with another SECRET_KEY refuses it',
    async () => {
      const search = { sort: [{ field: 'title', order: 'desc' }], limit: 3 };
      const page1 = await call(first, 'POST', '/tasks/search', search);
      expect(titles(page1.body)).toEqual(['task 5', 'task 4', 'task 3']);
      const cursor = page1.body.meta.next_cursor!;
      const page2 = await call(second, 'POST', '/tasks/search', { ...search, cursor });
      expect(page2.status, JSON.stringify(page2.body)).toBe(200);
      expect(titles(page2.body)).toEqual(['task 2', 'task 1']);

      // The same folder with another key (and tokens signed with it): the cursor is refused, so it is
      // bound to SECRET_KEY, not merely well-formed.
      const otherSecret = randomBytes(32).toString('hex');
      const stranger = await startServer(dir.path, { SECRET_KEY: otherSecret });
      servers.push(stranger);
      const refused = await fetch(`${stranger.url}/tasks/search`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${signToken({ sub: 'admin', roles: ['admin'] }, otherSecret)}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ ...search, cursor }),
      });
      const body = (await refused.json()) as { error: { code: string; details: { path: string }[] } };
      expect(refused.status).toBe(422);
      expect(body.error.code).toBe('VALIDATION_ERROR');
      expect(body.error.details[0]!.path).toBe('cursor');
    },
    2 * START_TIMEOUT,
  );
});
