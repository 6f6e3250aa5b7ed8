/**
 * `npm run drill:events [-- N]`: the multi-instance test's drill at full size (default N = 1,000):
 * two instances of the fixture app on one throwaway PostgreSQL database and a private nats-server;
 * N creates over both, then N more with the second instance SIGKILLed half-way. Prints each phase's
 * counts (events, messages, distinct ids, handler calls, the relays' publish attempts and duplicate
 * acks) and exits 1 if any event is missing or stored twice, or a handler missed one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import '../../fixtures/apps/tasks/src/main.js';
import { createPgDatabase } from '../helpers/databases.js';
import { startNats } from '../helpers/nats-server.js';
import { drillEnv, runPhase, startInstance, type DrillReport, type Instance } from './drill.js';
import { DatabaseManager } from '../../runtime/src/db/database.js';

const n = Number(process.argv[2] ?? 1000);
if (!Number.isInteger(n) || n < 2)
  throw new Error(`usage: npm run drill:events [-- <creates per phase, default 1000>]`);

const nats = await startNats();
const database = await createPgDatabase();
const workDir = mkdtempSync(join(tmpdir(), 'core-drill-'));
const instances: Instance[] = [];
let failed = false;
try {
  const manager = new DatabaseManager();
  await (await manager.initApp(database.url)).resetSchema();
  await manager.close();
  const project = 'drill';
  const log = join(workDir, 'deliveries.jsonl');
  const env = drillEnv({ databaseUrl: database.url, natsUrl: nats.url, project, log });
  instances.push(...(await Promise.all([startInstance('A', env), startInstance('B', env)])));
  for (const kill of [false, true]) {
    const report = await runPhase({ instances, n, databaseUrl: database.url, natsUrl: nats.url, project, log, kill });
    print(kill ? `${n} creates, B SIGKILLed half-way` : `${n} creates over A and B`, report);
    const handlersOk = Object.values(report.handlers).every((h) => h.distinctEvents === report.events);
    if (
      report.messages !== report.events ||
      report.distinctMessageIds !== report.events ||
      report.missing !== 0 ||
      !handlersOk
    )
      failed = true;
  }
} finally {
  await Promise.all(instances.map((i) => i.stop()));
  await nats.destroy();
  await database.drop();
  rmSync(workDir, { recursive: true, force: true });
}
console.log(
  failed
    ? 'FAILED: an event is missing, stored twice, or unhandled'
    : 'OK: every event stored once and seen by each handler',
);
process.exit(failed ? 1 : 0);

function print(label: string, r: DrillReport): void {
  console.log(`\n${label} (${r.seconds.toFixed(1)} s)`);
  console.log(
    `  rows ${r.rows} (201s: ${r.created}), events ${r.events}, messages ${r.messages}, distinct Nats-Msg-Id ${r.distinctMessageIds}, missing ${r.missing}`,
  );
  for (const [name, h] of Object.entries(r.handlers))
    console.log(
      `  handler ${name}: ${h.invocations} calls, ${h.distinctEvents} distinct events, ${h.redeliveries} redeliveries`,
    );
  for (const [name, relay] of Object.entries(r.relays)) {
    console.log(
      `  relay ${name}: ${relay.publishAttempts} publish attempts, ${relay.published} acked, ${relay.duplicates} duplicate acks, ${relay.failures} failures`,
    );
  }
  if (r.killed) console.log(`  (${r.killed}'s relay counts died with it)`);
}
