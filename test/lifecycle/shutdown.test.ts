/**
 * A stop signal drains the server instead of dropping requests: the fixture app as a real process
 * (started as production starts it), real sockets, SIGTERM. On SQLite and PostgreSQL.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describePerDatabase } from '../helpers/databases.js';
import { tempDir } from '../helpers/cli.js';
import {
  ADMIN,
  eventually,
  failureOf,
  get,
  killAll,
  openConnection,
  prepareDatabase,
  sleep,
  startInstance,
} from './helpers.js';

const SLOW_REQUESTS = 50;

describePerDatabase('graceful shutdown', ({ name, url }) => {
  const dir = tempDir('core-lifecycle-');
  let databaseUrl = '';

  beforeAll(async () => {
    databaseUrl = name === 'sqlite' ? `sqlite:${join(dir.path, 'app.db')}` : url();
    await prepareDatabase(databaseUrl);
  });
  afterEach(() => killAll());
  afterAll(() => dir.remove());

  it(`SIGTERM with ${SLOW_REQUESTS} slow requests in flight: all of them succeed, new ones get the 503 envelope, plugins stop in reverse order, exit 0`, async () => {
    const app = await startInstance({ DATABASE_URL: databaseUrl, SHUTDOWN_GRACE_MS: '30000' });
    // A keep-alive connection that is idle when the signal comes.
    const idle = await openConnection(app.port);
    expect((await idle.send('/health')).status).toBe(200);

    const slow = Array.from({ length: SLOW_REQUESTS }, () => get(app.port, '/_probe/slow?ms=1500'));
    await eventually(
      async () => ((await get(app.port, '/_probe/active')).json().active === SLOW_REQUESTS ? true : undefined),
      20_000,
      'every slow request in flight',
    );
    app.signal('SIGTERM');
    await sleep(300);

    // A request on a connection that was open: the envelope, and the connection is closed after it.
    const refused = await idle.send('/tasks/');
    expect(refused.status).toBe(503);
    expect(refused.headers.connection).toBe('close');
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(refused.json()).toEqual({
      success: false,
      message: 'The server is shutting down; send the request again.',
      data: null,
      error: {
        code: 'SERVICE_UNAVAILABLE',
        details: [
          { path: '', message: 'The server is shutting down; send the request again.', reason: 'shutting_down' },
        ],
      },
    });
    await idle.closed;
    // A new connection is not accepted any more.
    expect(await failureOf(app.port, '/health')).toBe('ECONNREFUSED');

    const answers = await Promise.all(slow);
    expect(answers.map((res) => res.status)).toEqual(Array(SLOW_REQUESTS).fill(200));
    expect(answers.every((res) => res.json().ok === true)).toBe(true);
    // Answered with `Connection: close`, so no client keeps a connection to a server going away.
    expect(answers.every((res) => res.headers.connection === 'close')).toBe(true);

    const { code } = await app.exited;
    expect(code, app.output()).toBe(0);
    const lines = app.lines();
    const stops = lines
      .filter((line) => line.includes('"probe":"stopped"'))
      .map((line) => JSON.parse(line) as { plugin: string; db: string; time: number });
    // Reverse order of start (probe-second depends on probe-first), each while the database still answered.
    expect(stops.map(({ plugin, db }) => ({ plugin, db }))).toEqual([
      { plugin: 'probe-second', db: 'ok' },
      { plugin: 'probe-first', db: 'ok' },
    ]);
    // …and only once every slow request had completed.
    const slowDone = lines
      .filter((line) => line.includes('"path":"/_probe/slow"'))
      .map((line) => (JSON.parse(line) as { time: number }).time);
    expect(slowDone).toHaveLength(SLOW_REQUESTS);
    expect(stops[0]!.time).toBeGreaterThanOrEqual(Math.max(...slowDone));
    expect(lines.some((line) => line.includes('"msg":"shut down"'))).toBe(true);
  }, 120_000);

  it('keeps serving for SHUTDOWN_DELAY_MS while /ready answers 503, then stops accepting and exits 0', async () => {
    const app = await startInstance({ DATABASE_URL: databaseUrl, SHUTDOWN_DELAY_MS: '1500' });
    expect((await get(app.port, '/ready')).status).toBe(200);
    const signalled = Date.now();
    app.signal('SIGTERM');
    await sleep(200);

    const ready = await get(app.port, '/ready');
    expect(ready.status).toBe(503);
    expect(ready.json()).toMatchObject({ status: 'shutting_down' });
    const list = await get(app.port, '/tasks/', { headers: ADMIN });
    expect(list.status).toBe(200);
    expect(list.headers.connection).toBe('close');

    const { code, at } = await app.exited;
    expect(code, app.output()).toBe(0);
    expect(at - signalled).toBeGreaterThanOrEqual(1500);
    expect(await failureOf(app.port, '/health')).toBe('ECONNREFUSED');
  }, 120_000);

  it('an idle app exits well under a second after SIGTERM, with pooled database connections and a keep-alive client open', async () => {
    const app = await startInstance({ DATABASE_URL: databaseUrl });
    // Both pools hold connections: a write (the ORM's pool) and reads (Core's read pool on PostgreSQL).
    const created = await get(app.port, '/tasks/', {
      method: 'POST',
      headers: { ...ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'before the signal' }),
    });
    expect(created.status).toBe(201);
    expect((await get(app.port, '/tasks/', { headers: ADMIN })).status).toBe(200);
    const idle = await openConnection(app.port);
    expect((await idle.send('/ready')).status).toBe(200);

    const signalled = Date.now();
    app.signal('SIGTERM');
    const { code, at } = await app.exited;
    expect(code, app.output()).toBe(0);
    expect(at - signalled).toBeLessThan(1000);
    await idle.closed;
  }, 120_000);
});
