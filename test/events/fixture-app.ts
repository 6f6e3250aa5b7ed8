/**
 * The fixture task app (`fixtures/apps/tasks/src/main.ts`, the `src/main.ts` every project has) with
 * `EVENTS_URL` set in the environment, as a deployment would set it: the app's wiring is unchanged,
 * `registerDbEventDispatcher` attaches the event broker and the kernel's lifespan starts it.
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { vi } from 'vitest';
import { dbManager, eventBrokerOf, Kernel, loadSettings, signToken, type Database } from '@core/runtime';
import type { EventBroker } from '../../runtime/src/outbox/event-broker.js';
import { buildApp } from '../../fixtures/apps/tasks/src/main.js';

const SECRET = 'k'.repeat(48);

export interface EventsApp {
  readonly app: FastifyInstance;
  readonly kernel: Kernel;
  readonly db: Database;
  readonly broker: EventBroker;
  /** `app.inject` as admin, JSON payloads. */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * Builds and readies the app on `databaseUrl` with `env` (EVENTS_URL, PROJECT_NAME, EVENTS_*) in the
 * environment while it is built. `beforeReady` runs before the kernel starts (subscribe handlers).
 */
export async function startEventsApp(
  databaseUrl: string,
  env: Record<string, string>,
  beforeReady?: (kernel: Kernel, db: Database) => void | Promise<void>,
): Promise<EventsApp> {
  const settings = loadSettings({
    env: { DATABASE_URL: databaseUrl, ENVIRONMENT: 'test', SECRET_KEY: SECRET, LOG_LEVEL: 'silent', ...env },
  });
  const setup = vi.spyOn(Kernel.prototype, 'setup');
  vi.stubEnv('SECRET_KEY', SECRET);
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  let app: FastifyInstance;
  let kernel: unknown;
  try {
    app = await buildApp({ settings });
    kernel = setup.mock.contexts.at(-1);
  } finally {
    setup.mockRestore();
    vi.unstubAllEnvs();
  }
  if (!(kernel instanceof Kernel)) throw new Error('buildApp did not call kernel.setup(app)');
  const db = dbManager.db;
  await db.resetSchema();
  await beforeReady?.(kernel, db);
  await app.ready();
  const broker = eventBrokerOf(kernel.dispatcher);
  if (!broker) throw new Error('EVENTS_URL was set but no event broker is attached to the kernel dispatcher');
  const token = signToken({ sub: 'tester', roles: ['admin'] }, SECRET);
  return {
    app,
    kernel,
    db,
    broker,
    request(options) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        ...(options.headers as Record<string, string> | undefined),
      };
      if (options.payload !== undefined) headers['content-type'] ??= 'application/json';
      return app.inject({ ...options, headers });
    },
    async close() {
      await app.close();
    },
  };
}
