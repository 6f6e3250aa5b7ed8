/**
 * A private NATS JetStream server per test file: `nats-server -js` on a free port with a temporary
 * store folder, started and stopped by the test (and only those). `CORE_TEST_NATS_SERVER` names
 * another binary. Free of vitest, so `npm run drill:events` uses it too; `nats.ts` has the suites' rule.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';

export const NATS_SERVER_BIN = process.env.CORE_TEST_NATS_SERVER ?? '/usr/sbin/nats-server';

/** Null when a nats-server binary is there; otherwise why the suites skip (or fail, in CI). */
export const natsUnavailable: string | null = existsSync(NATS_SERVER_BIN)
  ? null
  : `nats-server not found at ${NATS_SERVER_BIN} (install it, or set CORE_TEST_NATS_SERVER)`;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
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

export interface NatsServer {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  /** Stops the server (SIGTERM) and waits for it; the store is kept for `start()`. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same store. */
  start(): Promise<void>;
  /** Stops it and deletes its store. */
  destroy(): Promise<void>;
}

/** Starts `nats-server -js` on a free port with a fresh store folder. */
export async function startNats(): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'core-nats-'));
  let child: ChildProcess | undefined;
  let log = '';

  const start = async (): Promise<void> => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    log = '';
    const proc = spawn(NATS_SERVER_BIN, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    proc.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child = proc;
    for (let i = 0; i < 100; i++) {
      if (proc.exitCode !== null) throw new Error(`nats-server exited (${proc.exitCode}): ${log}`);
      if (await portOpen(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`nats-server did not listen on ${port}: ${log}`);
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/** One message of a stream, as the tests inspect it. */
export interface StoredMessage {
  readonly seq: number;
  readonly subject: string;
  readonly msgId: string | undefined;
  readonly headers: Record<string, string>;
  readonly body: { id: string; name: string; occurred_at: string; payload: unknown };
}

/** A connection for inspecting streams from the test. */
export async function inspector(url: string): Promise<{
  nc: NatsConnection;
  jsm: JetStreamManager;
  messages(stream: string): Promise<StoredMessage[]>;
  close(): Promise<void>;
}> {
  const nc = await connect({ servers: url });
  const jsm = await nc.jetstreamManager();
  return {
    nc,
    jsm,
    async messages(stream) {
      let info: Awaited<ReturnType<typeof jsm.streams.info>>;
      try {
        info = await jsm.streams.info(stream);
      } catch {
        return [];
      }
      const out: StoredMessage[] = [];
      if (info.state.messages === 0) return out;
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
        const m = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
        if (!m) continue;
        const headers: Record<string, string> = {};
        for (const [key, values] of m.header ?? []) headers[key] = values.join(',');
        out.push({
          seq,
          subject: m.subject,
          msgId: m.header?.get('Nats-Msg-Id') || undefined,
          headers,
          body: m.json(),
        });
      }
      return out;
    },
    async close() {
      await nc.close();
    },
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
