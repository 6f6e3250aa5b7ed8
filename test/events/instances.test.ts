/**
 * Events across instances, with real processes: instances of the fixture app (`instance.ts`) on one
 * PostgreSQL database and a private nats-server.
 *
 * (a) Creates spread over two instances: the stream holds every event exactly once (distinct
 *     `Nats-Msg-Id`), and each named handler sees each event once across both instances; again with
 *     the second instance SIGKILLed half-way (its unpublished rows and the deliveries it held are taken
 *     over by the first). The relays' publish attempts and `duplicate: true` acks are printed.
 * (b) Broker down while 100 creates commit (all 201), their instance SIGKILLed before it could publish:
 *     another instance starts (the broker still down), the broker returns, and all of their events are
 *     in the stream, none twice.
 *
 * `npm run drill:events` runs (a) with N = 1,000.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../fixtures/apps/tasks/src/main.js';
import { createPgDatabase, IN_CI, pgUnavailable } from '../helpers/databases.js';
import { describeWithNats, eventually, inspector, startNats, type NatsServer } from '../helpers/nats.js';
import { createTasks, drillEnv, runPhase, startInstance, whenReady, type DrillReport, type Instance } from './drill.js';
import { DatabaseManager } from '../../runtime/src/db/database.js';

/** CI-sized; `npm run drill:events` runs 1,000. */
const N = 200;

function describeOnPostgres(title: string, body: () => void): void {
  if (!pgUnavailable) {
    describe(title, body);
    return;
  }
  if (IN_CI) {
    describe(title, () =>
      it('needs PostgreSQL in CI', () => expect.fail(`${pgUnavailable} — CI must run the PostgreSQL suites`)),
    );
    return;
  }
  console.warn(`[skip] ${title}: ${pgUnavailable}`);
  describe.skip(title, body);
}

function summary(label: string, report: DrillReport): string {
  const relays = Object.entries(report.relays)
    .map(
      ([name, r]) =>
        `${name}: ${r.publishAttempts} publish attempts, ${r.duplicates} duplicate acks, ${r.failures} failures`,
    )
    .join('; ');
  const handlers = Object.entries(report.handlers)
    .map(([name, h]) => `${name} ${h.invocations} calls for ${h.distinctEvents} events`)
    .join(', ');
  return `[events drill] ${label}: ${report.rows} rows, ${report.messages} messages (${report.distinctMessageIds} distinct ids); ${handlers}; relays ${relays}; ${report.seconds.toFixed(1)} s`;
}

describeWithNats('events across instances', () => {
  describeOnPostgres('instances on one PostgreSQL database', () => {
    const project = 'drill';
    let nats: NatsServer;
    let database: { url: string; drop: () => Promise<void> };
    let workDir: string;
    let env: Record<string, string>;
    let log: string;
    let a: Instance;
    let b: Instance;
    let c: Instance | undefined;

    beforeAll(async () => {
      nats = await startNats();
      database = await createPgDatabase();
      workDir = mkdtempSync(join(tmpdir(), 'core-events-'));
      log = join(workDir, 'deliveries.jsonl');
      // The schema of the fixture's models; the instances add Core's tables when they start (both at once).
      const manager = new DatabaseManager();
      const db = await manager.initApp(database.url);
      await db.resetSchema();
      await manager.close();
      env = drillEnv({ databaseUrl: database.url, natsUrl: nats.url, project, log });
      [a, b] = await Promise.all([startInstance('A', env), startInstance('B', env)]);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([a, b, c].map((instance) => instance?.stop()));
      await nats?.destroy();
      await database?.drop();
      if (workDir) rmSync(workDir, { recursive: true, force: true });
    });

    const phase = (kill: boolean): Promise<DrillReport> =>
      runPhase({ instances: [a, b], n: N, databaseUrl: database.url, natsUrl: nats.url, project, log, kill });

    const expectExactlyOnce = (report: DrillReport): void => {
      expect(report.rows).toBeGreaterThanOrEqual(N);
      expect(report.events).toBe(2 * report.rows);
      expect({ messages: report.messages, distinct: report.distinctMessageIds, missing: report.missing }).toEqual({
        messages: report.events,
        distinct: report.events,
        missing: 0,
      });
      for (const handler of ['audit', 'notify']) expect(report.handlers[handler]!.distinctEvents).toBe(report.events);
    };

    it(`(a) ${N} creates over two instances: every event in the stream once, each handler sees each once`, async () => {
      const report = await phase(false);
      console.log(summary('two instances', report));
      expectExactlyOnce(report);
      expect(report.created).toBe(N);
      expect(report.rows).toBe(N);
      // Nobody died: not one redelivery, and no relay published a row twice.
      for (const handler of ['audit', 'notify']) expect(report.handlers[handler]!.redeliveries).toBe(0);
      for (const relay of Object.values(report.relays)) expect(relay.duplicates).toBe(0);
      const attempts = Object.values(report.relays).reduce((sum, r) => sum + r.publishAttempts, 0);
      expect(attempts).toBe(report.events);
    }, 120_000);

    it('(a) the same with the second instance SIGKILLed half-way: nothing lost, nothing stored twice', async () => {
      const report = await phase(true);
      console.log(summary('second instance SIGKILLed half-way', report));
      expect(report.killed).toBe('B');
      expectExactlyOnce(report);
      // At most the deliveries the killed instance was running come again (with their ids, to dedupe).
      for (const handler of ['audit', 'notify']) expect(report.handlers[handler]!.redeliveries).toBeLessThanOrEqual(2);
    }, 120_000);

    it('(b) broker down while 100 creates commit, their instance SIGKILLed: another instance publishes all of them once', async () => {
      const db = new pg.Client({ connectionString: database.url });
      await db.connect();
      try {
        const seqBefore = Number((await db.query('select coalesce(max(seq), 0) as s from core_outbox')).rows[0].s);
        const stream = `${project.toUpperCase()}_EVENTS`;
        const look = await inspector(nats.url);
        const streamBefore = (await look.messages(stream)).at(-1)?.seq ?? 0;
        await look.close();

        await nats.stop();
        const { created, failedSends } = await createTasks([a], 100, { label: 'outage' });
        expect({ created, failedSends }).toEqual({ created: 100, failedSends: 0 });
        await a.kill();
        const pending: string[] = (
          await db.query('select id from core_outbox where seq > $1 and published_at is null', [seqBefore])
        ).rows.map((r: { id: string }) => r.id);
        expect(pending).toHaveLength(200);

        // The next instance starts while the broker is still down (it serves, its relay waits), then the broker returns.
        c = await startInstance('C', env);
        expect((await c.stats()).ready).toBe(false);
        await nats.start();
        await whenReady([c]);
        const after = await inspector(nats.url);
        try {
          await eventually(
            async () =>
              (await after.messages(stream)).filter((m) => m.seq > streamBefore).length >= 200 ? true : undefined,
            30_000,
            '200 messages',
          );
          // A moment for a stray second publish to land, had there been one.
          await new Promise((r) => setTimeout(r, 1000));
          const messages = (await after.messages(stream)).filter((m) => m.seq > streamBefore);
          expect(messages).toHaveLength(200);
          expect(new Set(messages.map((m) => m.msgId))).toEqual(new Set(pending));
        } finally {
          await after.close();
        }
        const unpublished = await db.query(
          'select count(*) as n from core_outbox where seq > $1 and published_at is null',
          [seqBefore],
        );
        expect(Number(unpublished.rows[0].n)).toBe(0);
        const relay = (await c.stats()).relay;
        console.log(
          `[events drill] outage: 200 events published by the next instance; ${relay.publishAttempts} publish attempts, ${relay.duplicates} duplicate acks`,
        );
      } finally {
        await db.end();
        await nats.start();
      }
    }, 120_000);
  });
});
