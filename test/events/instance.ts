/**
 * One instance of the fixture task app for the multi-instance tests and `npm run drill:events`, run as
 * a child process (`node --import tsx test/events/instance.ts`): the app's own `buildApp()`, settings
 * from the environment (`DATABASE_URL`, `EVENTS_URL`, `PROJECT_NAME`, `EVENTS_*`), plus
 *
 * - two named handlers, `audit` and `notify`, on `tasks.created`, that append one JSON line per
 *   delivery (`{ handler, id, pid }`) to `DRILL_LOG` (appended synchronously, so a SIGKILL loses none);
 *   `DRILL_HANDLER_DELAY_MS` makes them slower;
 * - `GET /_drill/stats`: the event broker's stats (relay publish attempts, duplicate acks, handlers).
 *
 * Prints `{"port":…}` on stdout once it listens; exits 0 on SIGTERM after closing the app.
 */
import { appendFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { eventBrokerOf, Kernel } from '@core/runtime';

const log = process.env.DRILL_LOG;
const delay = Number(process.env.DRILL_HANDLER_DELAY_MS ?? 0);

// buildApp keeps its kernel to itself: subscribe the handlers when it sets the plugins up.
const setup = Kernel.prototype.setup;
let kernel: Kernel | undefined;
Kernel.prototype.setup = async function (this: Kernel, app: FastifyInstance) {
  kernel = this;
  for (const handler of ['audit', 'notify']) {
    this.dispatcher.subscribe(
      'tasks.created',
      async (event) => {
        if (log) appendFileSync(log, `${JSON.stringify({ handler, id: event.id, pid: process.pid })}\n`);
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      },
      { name: handler },
    );
  }
  return setup.call(this, app);
};

const { buildApp } = await import('../../fixtures/apps/tasks/src/main.js');
const app = await buildApp();
app.get('/_drill/stats', async () => (kernel ? (eventBrokerOf(kernel.dispatcher)?.stats() ?? null) : null));
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : null })}\n`);

process.once('SIGTERM', () => {
  void app.close().finally(() => process.exit(0));
});
