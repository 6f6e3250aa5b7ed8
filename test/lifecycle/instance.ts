/**
 * The fixture task app started the way production starts it, as a child process of the lifecycle
 * tests: `node --import tsx test/lifecycle/instance.ts` runs `fixtures/apps/tasks/src/main.ts` as the
 * entry point, so its own `listenWithLifecycle(app, settings)` call runs, with settings from the
 * environment (`DATABASE_URL`, `PORT=0`, `SHUTDOWN_*`, `DATABASE_*`…). Two plugins are added to the
 * app's kernel for the tests to watch:
 *
 * - `probe-first`, and `probe-second` which depends on it. On shutdown each prints one JSON line,
 *   `{ "probe": "stopped", "plugin": <name>, "db": "ok" | <error>, "time": <ms> }` (whether the
 *   database still answered at that moment), so the order of the lines is the order they stopped in.
 *   (The app's own log lines are buffered by pino, so compare their `time` with these, not positions.)
 * - routes of `probe-first`: `GET /_probe/slow?ms=` waits, then reads the database;
 *   `GET /_probe/active` counts the slow requests in flight; `GET /_probe/sleep-read?s=` and
 *   `GET /_probe/sleep-write?s=` hold a connection of the read pool or of the ORM's pool with
 *   `pg_sleep` (PostgreSQL).
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { appExceptionHandler, dbManager, Kernel, Plugin } from '@core/runtime';

const MAIN = realpathSync(fileURLToPath(new URL('../../fixtures/apps/tasks/src/main.ts', import.meta.url)));

let active = 0;

class ProbePlugin extends Plugin {
  readonly version = '1.0.0';

  constructor(
    readonly name: string,
    override readonly dependencies: readonly string[] = [],
  ) {
    super();
  }

  override async setup(app: FastifyInstance): Promise<void> {
    if (this.name !== 'probe-first') return;
    app.get<{ Querystring: { ms?: string } }>('/_probe/slow', async (request) => {
      active++;
      try {
        await new Promise((resolve) => setTimeout(resolve, Number(request.query.ms ?? 1000)));
        const rows = await dbManager.db.select<{ one: number }>('select 1 as one');
        return { ok: rows.length === 1 };
      } finally {
        active--;
      }
    });
    app.get('/_probe/active', async () => ({ active }));
    // With Core's error handler, as Core's own routes carry it: database errors answer as they would there.
    await app.register(async (scope) => {
      scope.setErrorHandler(appExceptionHandler);
      scope.get<{ Querystring: { s?: string } }>('/_probe/sleep-read', async (request) => {
        await dbManager.db.select('select pg_sleep(?)', [Number(request.query.s ?? 1)]);
        return { slept: true };
      });
      scope.get<{ Querystring: { s?: string } }>('/_probe/sleep-write', async (request) => {
        await dbManager.db.connection.execute('select pg_sleep(?)', [Number(request.query.s ?? 1)]);
        return { slept: true };
      });
    });
  }

  override async onShutdown(): Promise<void> {
    let db = 'ok';
    try {
      await dbManager.db.select('select 1 as one');
    } catch (err) {
      db = (err as Error).message;
    }
    process.stdout.write(`${JSON.stringify({ probe: 'stopped', plugin: this.name, db, time: Date.now() })}\n`);
  }
}

// buildApp keeps its kernel to itself: add the probes when it sets the plugins up.
const setup = Kernel.prototype.setup;
Kernel.prototype.setup = function (this: Kernel, app: FastifyInstance) {
  this.addPlugin(new ProbePlugin('probe-first')).addPlugin(new ProbePlugin('probe-second', ['probe-first']));
  return setup.call(this, app);
};

// main.ts starts the server only when it is the process's entry point.
process.argv[1] = MAIN;
await import(MAIN);
