/**
 * The `core_outbox` line: Core with `EVENTS_URL` set, so every create also writes its `tasks.created`
 * event to `core_outbox` in its transaction and the relay publishes it to NATS JetStream after the
 * commit. This file starts the private broker that line talks to (`nats-server -js` on a free port,
 * its store in a temporary folder, stopped by run.ts's cleanup), waits until the server has reached it,
 * and afterwards checks that the events really went through: a line measured against a broken broker
 * (rows piling up unpublished) would look faster than the real thing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { connect } from 'nats';
import pg from 'pg';
import { brokerNames } from '@core/runtime';
import type { DatabaseKind } from './config.js';
import { freePort } from './servers.js';

/** `CORE_BENCH_NATS_SERVER`, then the test suites' `CORE_TEST_NATS_SERVER`, then the Debian package's path, then PATH. */
const NATS_SERVER_BIN =
  process.env['CORE_BENCH_NATS_SERVER'] ??
  process.env['CORE_TEST_NATS_SERVER'] ??
  (existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server');

export interface BenchNats {
  /** `nats://127.0.0.1:<port>`: the `EVENTS_URL` of the outbox line. */
  readonly url: string;
  /** `nats-server: v2.x.y`, for latest.json. */
  readonly version: string;
  /** Stops the server and deletes its store; safe to call twice. */
  stop(): Promise<void>;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts a private `nats-server -js` with its store in a new folder under `parentDir`. Returns the
 * reason as a string when it cannot, so the caller can skip the outbox line (or fail, in CI).
 */
export async function startBenchNats(parentDir: string): Promise<BenchNats | string> {
  const probe = spawnSync(NATS_SERVER_BIN, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error || probe.status !== 0) {
    return `cannot run ${NATS_SERVER_BIN} (${probe.error?.message ?? `exit ${probe.status}: ${probe.stderr.trim()}`}); install nats-server or set CORE_BENCH_NATS_SERVER`;
  }
  const version = probe.stdout.trim();
  const port = await freePort();
  const storeDir = mkdtempSync(join(parentDir, 'nats-'));
  let log = '';
  const child: ChildProcess = spawn(NATS_SERVER_BIN, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keepLog = (chunk: Buffer): void => void (log = (log + chunk.toString('utf8')).slice(-4096));
  child.stdout!.on('data', keepLog);
  child.stderr!.on('data', keepLog);
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null && !spawnError) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(storeDir, { recursive: true, force: true });
    })();
    return stopping;
  };

  const deadline = Date.now() + 10_000;
  for (;;) {
    if (spawnError || child.exitCode !== null) {
      await stop();
      return `${NATS_SERVER_BIN} -js on port ${port} did not start (${spawnError?.message ?? `exit ${child.exitCode}`}): ${log.trim().slice(-500)}`;
    }
    if (await portOpen(port)) break;
    if (Date.now() > deadline) {
      await stop();
      return `${NATS_SERVER_BIN} -js did not listen on port ${port} within 10 s: ${log.trim().slice(-500)}`;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `nats://127.0.0.1:${port}`, version, stop };
}

/** The `PROJECT_NAME` of the outbox line on `database`: one stream per database, so each part counts only its own events. */
export function outboxProjectName(database: DatabaseKind): string {
  return `bench_${database}`;
}

/**
 * Waits until the server's event broker is connected, with its stream set up (`/ready` reports
 * `events: "connected"`): until then its events would only pile up in the outbox.
 */
export async function waitForBroker(baseUrl: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    try {
      const res = await fetch(`${baseUrl}/ready`);
      const body = (await res.json()) as { events?: string };
      if (body.events === 'connected') return;
      last = `events: ${body.events ?? 'absent'}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline)
      throw new Error(
        `the outbox server at ${baseUrl} did not reach the broker within ${timeoutMs / 1000} s (/ready: ${last})`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Runs `count(*) as n` queries on the outbox line's own database (SQLite file or PostgreSQL copy), in
 * one read transaction: a create that commits meanwhile is in all the counts or in none.
 */
async function countRows<K extends string>(
  databaseUrl: string,
  queries: Record<K, string>,
): Promise<Record<K, number>> {
  const out = {} as Record<K, number>;
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      db.transaction(() => {
        for (const key of Object.keys(queries) as K[])
          out[key] = Number((db.prepare(queries[key]).get() as { n: number | bigint }).n);
      })();
    } finally {
      db.close();
    }
    return out;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('begin transaction isolation level repeatable read read only');
    for (const key of Object.keys(queries) as K[])
      out[key] = Number((await client.query<{ n: string }>(queries[key])).rows[0]!.n);
    await client.query('commit');
  } finally {
    await client.end();
  }
  return out;
}

const COUNT_TASKS = 'select count(*) as n from tasks';
const COUNT_OUTBOX = 'select count(*) as n from core_outbox';

/** Rows in `tasks` before the outbox line took any request: the seeded data. */
export async function tasksBefore(databaseUrl: string): Promise<number> {
  return (await countRows(databaseUrl, { tasks: COUNT_TASKS })).tasks;
}

/**
 * The events one create raises, from the creates made so far (the consistency check's): the app decides
 * (the task app raises its own `tasks.created` domain event besides the entity's), so it is counted, not assumed.
 */
export async function eventsPerCreate(databaseUrl: string, tasksBeforeCount: number): Promise<number> {
  const { tasks, outbox } = await countRows(databaseUrl, { tasks: COUNT_TASKS, outbox: COUNT_OUTBOX });
  const created = tasks - tasksBeforeCount;
  if (created < 1 || outbox < 1 || outbox % created !== 0) {
    throw new Error(`the outbox line wrote ${outbox} outbox rows for ${created} creates: its events cannot be checked`);
  }
  return outbox / created;
}

/** latest.json's `outbox.events`: whether every create's event reached the stream. */
export interface OutboxEventsCheck {
  ok: boolean;
  /** The JetStream stream the line published to. */
  stream: string;
  /** Tasks the line created (rows beyond the seeded data). */
  created: number;
  /** Events one create raises (counted on the consistency check's create): entity and domain events. */
  events_per_create: number;
  /**
   * 201s the load generator and the consistency check counted. Up to one create per connection in
   * flight when a slice ends commits without being counted, so this may be a little under `created`.
   */
  responses_201: number;
  /** Rows in `core_outbox` (none is pruned within a run). */
  outbox_rows: number;
  /** Rows not yet published when the check ended. */
  pending: number;
  /** Messages in the stream. */
  messages: number;
  /** How long the check waited for the relay to drain the outbox (ms). */
  waited_ms: number;
  /** What is wrong, when `ok` is false. */
  problem?: string;
}

/**
 * After the last create: waits (up to `timeoutMs`) for the relay to publish every row, then checks
 * that every create wrote its events to the outbox, that the stream holds one message per outbox row
 * (so `events_per_create` per create), and that no counted 201 lacks its row.
 */
export async function checkOutboxEvents(options: {
  database: DatabaseKind;
  databaseUrl: string;
  natsUrl: string;
  tasksBefore: number;
  eventsPerCreate: number;
  responses201: number;
  timeoutMs?: number;
}): Promise<OutboxEventsCheck> {
  const stream = brokerNames(outboxProjectName(options.database)).eventsStream;
  const nc = await connect({ servers: options.natsUrl, timeout: 5000 });
  const started = performance.now();
  try {
    const jsm = await nc.jetstreamManager();
    const messagesIn = async (): Promise<number> => {
      try {
        return (await jsm.streams.info(stream)).state.messages;
      } catch {
        return 0; // no stream: the server never set it up
      }
    };
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    let counts: { tasks: number; outbox: number; pending: number } | undefined;
    let messages: number;
    for (;;) {
      const previous = counts;
      counts = await countRows(options.databaseUrl, {
        tasks: COUNT_TASKS,
        outbox: COUNT_OUTBOX,
        pending: 'select count(*) as n from core_outbox where published_at is null',
      });
      messages = await messagesIn();
      // The load's last requests may still be committing when it stops: done once two reads agree.
      const settled = previous?.tasks === counts.tasks && previous.outbox === counts.outbox;
      if ((settled && counts.pending === 0 && messages === counts.outbox) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const created = counts.tasks - options.tasksBefore;
    const problems: string[] = [];
    if (created <= 0) problems.push('no task was created');
    const expected = created * options.eventsPerCreate;
    if (counts.outbox !== expected)
      problems.push(`${counts.outbox} outbox rows for ${created} tasks created × ${options.eventsPerCreate} events`);
    if (counts.pending > 0) problems.push(`${counts.pending} outbox rows still unpublished`);
    if (messages !== counts.outbox) problems.push(`${messages} messages in ${stream} for ${counts.outbox} outbox rows`);
    if (options.responses201 > created)
      problems.push(`${options.responses201} creates answered 201 but only ${created} tasks exist`);
    return {
      ok: problems.length === 0,
      stream,
      created,
      events_per_create: options.eventsPerCreate,
      responses_201: options.responses201,
      outbox_rows: counts.outbox,
      pending: counts.pending,
      messages,
      waited_ms: Math.round(performance.now() - started),
      ...(problems.length ? { problem: problems.join('; ') } : {}),
    };
  } finally {
    await nc.close();
  }
}
