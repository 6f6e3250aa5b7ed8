/**
 * `/health` and `/ready` of the fixture app run as a real process: readiness follows the database
 * and the migrations; a database that goes away turns requests into 503s with `Retry-After` (never a
 * hang) and `/ready` into 503, and both recover when it is back.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { describePerDatabase } from '../helpers/databases.js';
import { ADMIN, eventually, get, killAll, prepareDatabase, SECRET, startInstance, tcpProxy } from './helpers.js';
import { DatabaseManager } from '../../runtime/src/db/database.js';

const PENDING = 'Migration20260101000000_probe';

describePerDatabase('/health and /ready', ({ name, url }) => {
  const dir = tempDir('core-ready-');
  let databaseUrl = '';

  beforeAll(async () => {
    databaseUrl = name === 'sqlite' ? `sqlite:${join(dir.path, 'app.db')}` : url();
    await prepareDatabase(databaseUrl);
  });
  afterEach(() => killAll());
  afterAll(() => dir.remove());

  it('/ready is 503 while a migration of the project is pending and 200 once it is applied; /health is 200 throughout', async () => {
    // The project folder the app runs in: its migrations folder holds one migration not applied yet.
    const project = join(dir.path, 'project');
    const folder = join(project, 'migrations', name);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `${PENDING}.ts`), 'export {};\n');
    writeFileSync(join(folder, '.snapshot.json'), '{}\n'); // not a migration
    const app = await startInstance({ DATABASE_URL: databaseUrl }, project);

    const pending = await get(app.port, '/ready');
    expect(pending.status).toBe(503);
    expect(pending.headers['cache-control']).toBe('no-store');
    expect(pending.json()).toEqual({ status: 'not_ready', database: 'ok', migrations: 'pending', events: 'off' });
    expect((await get(app.port, '/health')).json()).toEqual({ status: 'ok' });

    // Recorded as MikroORM's migrator records it once applied.
    const manager = new DatabaseManager();
    const db = await manager.initApp(databaseUrl, false, { cursorSecret: SECRET });
    try {
      await db.connection.execute(
        'create table if not exists mikro_orm_migrations (id integer primary key, name varchar(255), executed_at timestamp)',
      );
      await db.connection.execute('insert into mikro_orm_migrations (id, name) values (1, ?)', [PENDING]);
    } finally {
      await manager.close();
    }

    const ready = await get(app.port, '/ready');
    expect(ready.status).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', database: 'ok', migrations: 'ok', events: 'off' });
    expect((await get(app.port, '/health')).status).toBe(200);
    app.signal('SIGTERM');
    expect((await app.exited).code, app.output()).toBe(0);
  }, 120_000);

  it.runIf(name === 'sqlite')(
    'reports the event broker without failing on it: ready while the broker is unreachable',
    async () => {
      const app = await startInstance({ DATABASE_URL: databaseUrl, EVENTS_URL: 'nats://127.0.0.1:1' });
      const ready = await get(app.port, '/ready');
      expect(ready.json()).toEqual({ status: 'ready', database: 'ok', migrations: 'ok', events: 'disconnected' });
      expect(ready.status).toBe(200);
      app.signal('SIGTERM');
      expect((await app.exited).code, app.output()).toBe(0);
    },
    120_000,
  );

  it.runIf(name === 'postgresql')(
    'with the database down: /ready 503 and requests 503 with Retry-After within a bound; both recover when it is back',
    async () => {
      const target = new URL(databaseUrl);
      const proxy = await tcpProxy(target.hostname, Number(target.port || 5432));
      const viaProxy = new URL(databaseUrl);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      try {
        const app = await startInstance({ DATABASE_URL: viaProxy.toString(), DATABASE_POOL_TIMEOUT_MS: '1000' });
        expect((await get(app.port, '/ready')).status).toBe(200);
        expect((await get(app.port, '/tasks/', { headers: ADMIN })).status).toBe(200);

        await proxy.down();
        let started = Date.now();
        const notReady = await get(app.port, '/ready');
        expect(Date.now() - started).toBeLessThan(5000);
        expect(notReady.status).toBe(503);
        expect(notReady.json()).toMatchObject({ status: 'not_ready', migrations: 'unknown' });
        expect(notReady.json().database).not.toBe('ok');

        started = Date.now();
        const list = await get(app.port, '/tasks/', { headers: ADMIN });
        expect(Date.now() - started).toBeLessThan(5000);
        expect(list.status).toBe(503);
        expect(Number(list.headers['retry-after'])).toBeGreaterThan(0);
        expect(list.json()).toMatchObject({ success: false, data: null, error: { code: 'SERVICE_UNAVAILABLE' } });
        expect(['database_unreachable', 'database_busy']).toContain(list.json().error.details[0].reason);
        expect((await get(app.port, '/health')).status).toBe(200);

        await proxy.up();
        await eventually(
          async () => ((await get(app.port, '/ready')).status === 200 ? true : undefined),
          20_000,
          '/ready to recover',
        );
        expect((await get(app.port, '/tasks/', { headers: ADMIN })).status).toBe(200);
        app.signal('SIGTERM');
        expect((await app.exited).code, app.output()).toBe(0);
      } finally {
        await proxy.close();
      }
    },
    120_000,
  );
});
