/**
 * Instances of the fixture app as child processes (`instance.ts`), and the two-instance drill that
 * the multi-instance test runs with a CI-sized N and `npm run drill:events` with N = 1,000.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { signToken } from '@core/runtime';
import { eventually, inspector } from '../helpers/nats-server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INSTANCE = fileURLToPath(new URL('./instance.ts', import.meta.url));
export const DRILL_SECRET = 'd'.repeat(48);
const TOKEN = signToken({ sub: 'drill', roles: ['admin'] }, DRILL_SECRET);

export interface Instance {
  readonly name: string;
  readonly pid: number;
  readonly baseUrl: string;
  /** The broker's stats (`GET /_drill/stats`). */
  stats(): Promise<InstanceStats>;
  /** SIGKILL: no shutdown of any kind. */
  kill(): Promise<void>;
  /** SIGTERM: the app closes (consumers, relay, connection), then exits. */
  stop(): Promise<void>;
  /** What it wrote on stderr (its logs), for failure messages. */
  output(): string;
  readonly alive: boolean;
}

export interface InstanceStats {
  ready: boolean;
  relay: { publishAttempts: number; published: number; duplicates: number; failures: number; pruned: number };
  handlers: Record<string, { delivered: number; handled: number; retried: number; deadLettered: number }>;
}

/** Starts one instance with `env` on top of the drill's defaults; resolves once it listens. */
export async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', INSTANCE], {
    cwd: ROOT,
    env: { ...process.env, ENVIRONMENT: 'test', SECRET_KEY: DRILL_SECRET, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`instance ${name} exited (${child.exitCode}): ${stderr}`);
      const line = stdout.split('\n').find((l) => l.startsWith('{"port"'));
      return line ? (JSON.parse(line) as { port: number }).port : undefined;
    },
    60_000,
    `instance ${name} to listen`,
  ).catch((err: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${err.message}\n${stderr}`);
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    name,
    pid: child.pid!,
    baseUrl,
    async stats() {
      return (await (await fetch(`${baseUrl}/_drill/stats`)).json()) as InstanceStats;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
    output: () => stderr,
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
  };
}

/** Waits until every instance's broker is ready. */
export async function whenReady(instances: readonly Instance[]): Promise<void> {
  for (const instance of instances) {
    await eventually(
      async () => ((await instance.stats())?.ready ? true : undefined),
      20_000,
      `${instance.name}'s broker to be ready`,
    );
  }
}

/**
 * `n` creates over `targets` (round robin, `concurrency` in flight). A create whose instance is gone
 * (refused, reset) is sent to the next live one. `onProgress(done)` may kill an instance.
 */
export async function createTasks(
  targets: readonly Instance[],
  n: number,
  options: { concurrency?: number; label?: string; onProgress?: (done: number) => Promise<void> | void } = {},
): Promise<{ created: number; failedSends: number }> {
  let next = 0;
  let done = 0;
  let failedSends = 0;
  const send = async (i: number): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      const live = targets.filter((t) => t.alive);
      const target = live[(i + attempt) % live.length]!;
      try {
        const res = await fetch(`${target.baseUrl}/tasks/`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ title: `${options.label ?? 'drill'} ${i}` }),
        });
        if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
        return;
      } catch (err) {
        failedSends++;
        if (attempt > 20) throw err;
      }
    }
  };
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      await send(i);
      done++;
      await options.onProgress?.(done);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  return { created: done, failedSends };
}

/** The handlers' delivery log: one `{ handler, id, pid }` per line. */
export function readDeliveries(path: string): { handler: string; id: string; pid: number }[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { handler: string; id: string; pid: number });
}

export interface DrillReport {
  /** Creates answered 201. */
  readonly created: number;
  /** Rows the creates committed (more than `created` when a killed instance committed before answering). */
  readonly rows: number;
  /** Events raised (rows of `core_outbox`): two per row, the entity event and the service's domain event. */
  readonly events: number;
  /** Messages the stream gained. */
  readonly messages: number;
  readonly distinctMessageIds: number;
  /** Events of this phase that are not in the stream. */
  readonly missing: number;
  readonly handlers: Record<string, { invocations: number; distinctEvents: number; redeliveries: number }>;
  /** Per instance still alive at the end, during this phase; a killed instance's counts died with it. */
  readonly relays: Record<string, InstanceStats['relay']>;
  readonly killed: string | null;
  readonly seconds: number;
}

export interface DrillPhase {
  /** Instances started with `drillEnv` of the same project; the last one is SIGKILLed half-way with `kill`. */
  readonly instances: readonly Instance[];
  readonly n: number;
  readonly databaseUrl: string;
  readonly natsUrl: string;
  readonly project: string;
  /** The handlers' delivery log (`drillEnv`'s `DRILL_LOG`). */
  readonly log: string;
  readonly kill: boolean;
  readonly concurrency?: number;
}

/** The environment of a drill instance. */
export function drillEnv(options: {
  databaseUrl: string;
  natsUrl: string;
  project: string;
  log: string;
}): Record<string, string> {
  return {
    DATABASE_URL: options.databaseUrl,
    EVENTS_URL: options.natsUrl,
    PROJECT_NAME: options.project,
    // A delivery held by a killed instance comes back after this.
    EVENTS_ACK_WAIT_S: '2',
    EVENTS_RELAY_INTERVAL_S: '0.5',
    DRILL_LOG: options.log,
    DRILL_HANDLER_DELAY_MS: '5',
  };
}

/**
 * `n` creates spread over the instances (the last one SIGKILLed half-way with `kill`); waits until the
 * stream holds every event the phase committed and both handlers have seen each of them; reports.
 */
export async function runPhase(options: DrillPhase): Promise<DrillReport> {
  const started = Date.now();
  const { instances } = options;
  const db = new pg.Client({ connectionString: options.databaseUrl });
  await db.connect();
  const look = await inspector(options.natsUrl);
  const stream = `${options.project.toUpperCase()}_EVENTS`;
  try {
    await whenReady(instances.filter((i) => i.alive));
    const seqBefore = Number((await db.query('select coalesce(max(seq), 0) as s from core_outbox')).rows[0].s);
    const rowsBefore = Number((await db.query('select count(*) as n from tasks')).rows[0].n);
    const streamBefore = (await look.messages(stream)).at(-1)?.seq ?? 0;
    const relaysBefore = new Map<string, InstanceStats['relay']>();
    for (const instance of instances)
      if (instance.alive) relaysBefore.set(instance.name, (await instance.stats()).relay);
    let killed: string | null = null;
    const victim = instances.at(-1)!;
    const { created } = await createTasks(instances, options.n, {
      concurrency: options.concurrency,
      label: options.project,
      onProgress: async (done) => {
        if (options.kill && killed === null && done >= options.n / 2) {
          killed = victim.name;
          await victim.kill();
        }
      },
    });
    const rows = Number((await db.query('select count(*) as n from tasks')).rows[0].n) - rowsBefore;
    const ids: string[] = (await db.query('select id from core_outbox where seq > $1', [seqBefore])).rows.map(
      (r: { id: string }) => r.id,
    );
    const phaseIds = new Set(ids);
    await eventually(
      async () => {
        const all = (await look.messages(stream)).filter((m) => m.seq > streamBefore);
        return all.length >= ids.length ? all : undefined;
      },
      120_000,
      `${ids.length} new messages in ${stream}`,
    );
    const deliveriesOf = (handler: string) =>
      readDeliveries(options.log).filter((d) => d.handler === handler && phaseIds.has(d.id));
    await eventually(
      () =>
        ['audit', 'notify'].every((h) => new Set(deliveriesOf(h).map((d) => d.id)).size >= ids.length)
          ? true
          : undefined,
      120_000,
      'both handlers to see every event',
    );
    // Late redeliveries, or a stray second publish, would show up in this time.
    await new Promise((r) => setTimeout(r, 500));
    const finalMessages = (await look.messages(stream)).filter((m) => m.seq > streamBefore);
    const inStream = new Set(finalMessages.map((m) => m.msgId));
    const handlers: DrillReport['handlers'] = {};
    for (const handler of ['audit', 'notify']) {
      const mine = deliveriesOf(handler);
      const distinct = new Set(mine.map((d) => d.id)).size;
      handlers[handler] = { invocations: mine.length, distinctEvents: distinct, redeliveries: mine.length - distinct };
    }
    const relays: DrillReport['relays'] = {};
    for (const instance of instances) {
      if (!instance.alive) continue;
      const now = (await instance.stats()).relay;
      const before = relaysBefore.get(instance.name);
      relays[instance.name] = Object.fromEntries(
        Object.entries(now).map(([key, value]) => [key, value - (before?.[key as keyof typeof now] ?? 0)]),
      ) as InstanceStats['relay'];
    }
    return {
      created,
      rows,
      events: ids.length,
      messages: finalMessages.length,
      distinctMessageIds: inStream.size,
      missing: ids.filter((id) => !inStream.has(id)).length,
      handlers,
      relays,
      killed,
      seconds: (Date.now() - started) / 1000,
    };
  } catch (err) {
    const logs = instances.map((i) => `--- ${i.name}\n${i.output().slice(-4000)}`).join('\n');
    throw new Error(`${(err as Error).message}\n${logs}`, { cause: err });
  } finally {
    await look.close();
    await db.end();
  }
}
