/**
 * Real processes for the lifecycle tests: the fixture app started as production starts it
 * (`instance.ts`), plain HTTP/1.1 clients that control which connection a request goes on, and a TCP
 * proxy in front of PostgreSQL that can play "the database is down".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { signToken } from '@core/runtime';
import { applyCoreMigrations } from '../../runtime/src/migrations/core-migrations.js';
import { DatabaseManager } from '../../runtime/src/db/database.js';
// Registers the fixture app's models, so `prepareDatabase` creates its tables.
import '../../fixtures/apps/tasks/src/main.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INSTANCE = fileURLToPath(new URL('./instance.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
export const SECRET = 'l'.repeat(48);
export const ADMIN = { authorization: `Bearer ${signToken({ sub: 'lifecycle', roles: ['admin'] }, SECRET)}` };

/** The fixture app's tables and Core's own, on a fresh database: what `core migrate` leaves behind. */
export async function prepareDatabase(url: string): Promise<void> {
  const manager = new DatabaseManager();
  const db = await manager.initApp(url, false, { cursorSecret: SECRET });
  try {
    await db.resetSchema();
    await applyCoreMigrations(db);
  } finally {
    await manager.close();
  }
}

export interface Instance {
  readonly port: number;
  readonly pid: number;
  /** Resolves when the process has exited: its code and when (`Date.now()`). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** stdout so far, one entry per line: the app's JSON log lines and the probes' lines. */
  lines(): string[];
  /** stdout and stderr, for failure messages. */
  output(): string;
  signal(signal: NodeJS.Signals): void;
}

const running = new Set<ChildProcess>();

/** Kills what a failed test left running. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/**
 * Starts the fixture app (`instance.ts`) in `cwd` with production settings, `env` on top; resolves
 * once it listens. Logs are JSON lines at info level on stdout.
 */
export async function startInstance(env: Record<string, string>, cwd = ROOT): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', TSX, INSTANCE], {
    cwd,
    env: {
      ...process.env,
      // tsx finds the `@core/runtime` path mapping here even when started in another folder.
      TSX_TSCONFIG_PATH: `${ROOT}tsconfig.json`,
      ENVIRONMENT: 'production',
      SECRET_KEY: SECRET,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      SHUTDOWN_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, at: Date.now() });
    });
  });
  const deadline = Date.now() + 90_000;
  for (;;) {
    const port = /"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/.exec(stdout)?.[1];
    if (port !== undefined) {
      return {
        port: Number(port),
        pid: child.pid!,
        exited,
        lines: () => stdout.split('\n').filter((line) => line !== ''),
        output: () => `${stdout}\n${stderr}`,
        signal: (signal) => child.kill(signal),
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the fixture app did not start (exit ${child.exitCode}):\n${stdout}\n${stderr}`);
    }
    await sleep(50);
  }
}

export interface Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON the server sent
  json(): any;
}

/** One request on a connection of its own (no keep-alive pool shared with other requests). */
export function get(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The error code of a request that got no response at all (`ECONNREFUSED`…), or `answered`. */
export function failureOf(port: number, path: string): Promise<string> {
  return get(port, path).then(
    () => 'answered',
    (err: NodeJS.ErrnoException) => err.code ?? err.message,
  );
}

/**
 * A keep-alive HTTP/1.1 connection driven by hand, so a test knows which requests share it: `send`
 * writes one GET and resolves with its response; `closed` resolves when the server closes it.
 */
export async function openConnection(
  port: number,
): Promise<{ send(path: string): Promise<Response>; closed: Promise<void>; destroy(): void }> {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let buffer = Buffer.alloc(0);
  let waiting: ((res: Response) => void) | undefined;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0 || !waiting) return;
    const [statusLine, ...headerLines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: IncomingHttpHeaders = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (buffer.length < end + 4 + length) return;
    const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    buffer = buffer.subarray(end + 4 + length);
    const done = waiting;
    waiting = undefined;
    done({ status: Number(statusLine!.split(' ')[1]), headers, body, json: () => JSON.parse(body) });
  });
  return {
    send(path) {
      return new Promise((resolve) => {
        waiting = resolve;
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      });
    },
    closed,
    destroy: () => socket.destroy(),
  };
}

/** A TCP proxy to `target` (`host:port`): `down()` drops every connection and refuses new ones until `up()`. */
export async function tcpProxy(
  targetHost: string,
  targetPort: number,
): Promise<{ port: number; down(): Promise<void>; up(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = (): Promise<void> =>
    new Promise((resolve) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('error', () => undefined);
          socket.on('close', () => {
            sockets.delete(socket);
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const down = async (): Promise<void> => {
    const current = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (current) await new Promise((resolve) => current.close(resolve));
  };
  await listen();
  return { port, down, up: listen, close: down };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` until it returns something other than undefined, for at most `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
