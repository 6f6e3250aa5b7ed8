/**
 * A production server's life: listen, and on a stop signal drain instead of dropping requests.
 *
 * ```ts
 * const settings = loadSettings();
 * const app = await buildApp();
 * await listenWithLifecycle(app, settings);   // host, port and `SHUTDOWN_*` from the settings
 * ```
 *
 * On SIGTERM or SIGINT, in this order:
 * 1. draining: `/ready` answers 503 at once, so load balancers take the instance out of rotation;
 *    everything else is still served for `SHUTDOWN_DELAY_MS`, with `Connection: close` so clients
 *    open their next connection elsewhere;
 * 2. closing: the server stops accepting connections; a request that still arrives on an open one is
 *    answered 503 (the error envelope, `Connection: close`); the requests in flight finish, for at
 *    most `SHUTDOWN_GRACE_MS` (then their connections are cut);
 * 3. `app.close()`: the kernel stops the event broker (its relay publishes what is pending) and the
 *    plugins, last started first; then the database closes (the `onClose` hooks of `main.ts`);
 * 4. the process exits with 0 (1 if closing failed or took longer than `CLOSE_TIMEOUT_MS`). The same
 *    signal again (Ctrl+C twice) exits at once; another one is ignored, since a terminal's Ctrl+C
 *    reaches both a supervisor such as `core run` and this process, and the supervisor then sends
 *    SIGTERM as well.
 *
 * Fastify's own `close()` waits for connections too, but it drops idle keep-alive connections the
 * moment it starts (a request already on its way on one is reset), and waits for connections that
 * become idle afterwards until their keep-alive timeout (72 s); and its refusals are a bare body.
 */
import { Server as NetServer } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { ServiceUnavailableError } from '../errors.js';
import type { ShutdownSettings } from '../settings/lifecycle-settings.js';
import { toErrorResponse } from './error-handler.js';

export type LifecyclePhase = 'serving' | 'draining' | 'closing' | 'closed';

/** How long `app.close()` (plugins, broker, database) may take before the process exits anyway. */
export const CLOSE_TIMEOUT_MS = 10_000;

interface LifecycleState {
  phase: LifecyclePhase;
  /** Responses not finished yet, so closing can ask for `Connection: close` on each and wait for them. */
  readonly inFlight: Set<ServerResponse>;
  /** Called when the last response in flight finishes. */
  onIdle: (() => void) | undefined;
  /** Requests answered 503 because the server was closing. */
  refused: number;
}

const states = new WeakMap<object, LifecycleState>();

/** Where `app` is in its shutdown; `serving` unless `listenWithLifecycle` or `shutDownGracefully` runs it. */
export function lifecyclePhase(app: FastifyInstance): LifecyclePhase {
  return states.get(app.server)?.phase ?? 'serving';
}

export interface ListenWithLifecycleOptions {
  /** The signals that start the shutdown; default SIGINT and SIGTERM. */
  signals?: readonly NodeJS.Signals[];
  /** Ends the process once shut down; default `process.exit`. */
  exit?: (code: number) => void;
}

/**
 * `app.listen({ host, port })`, with the shutdown described above on a stop signal. Resolves to the
 * address the server listens on.
 */
export async function listenWithLifecycle(
  app: FastifyInstance,
  settings: { readonly host: string; readonly port: number; readonly shutdown: ShutdownSettings },
  options: ListenWithLifecycleOptions = {},
): Promise<string> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  let stopping: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping !== undefined) {
      if (signal !== stopping) return;
      app.log.warn({ signal }, 'stop signal again: exiting now');
      exit(1);
      return;
    }
    stopping = signal;
    app.log.info(
      { signal, delayMs: settings.shutdown.delayMs, graceMs: settings.shutdown.graceMs },
      'stop signal: shutting down',
    );
    shutDownGracefully(app, settings.shutdown).then(
      () => exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
  track(app);
  return app.listen({ host: settings.host, port: settings.port });
}

/**
 * Steps 1–3 of the shutdown (see the top of this file), for a server started some other way than
 * `listenWithLifecycle`. Resolves once the app is closed; rejects if `app.close()` failed or took
 * longer than `CLOSE_TIMEOUT_MS`.
 */
export async function shutDownGracefully(app: FastifyInstance, shutdown: ShutdownSettings): Promise<void> {
  const state = track(app);
  if (state.phase !== 'serving') throw new Error('shutDownGracefully: the app is already shutting down');
  const server = app.server as Server;

  state.phase = 'draining';
  for (const res of state.inFlight) askToClose(res);
  if (shutdown.delayMs > 0) await sleep(shutdown.delayMs);

  state.phase = 'closing';
  for (const res of state.inFlight) askToClose(res);
  // The listening socket only: `server.close()` would also reset idle keep-alive connections, and with
  // them a request that is already on its way. Those get an answer instead (see `track`).
  if (server.listening) NetServer.prototype.close.call(server);
  const finished = await allFinished(state, shutdown.graceMs);
  if (!finished) {
    app.log.warn(
      { requests: state.inFlight.size, graceMs: shutdown.graceMs },
      'shutdown grace over: cutting the requests still in flight',
    );
    server.closeAllConnections();
  }
  server.closeIdleConnections();
  state.phase = 'closed';

  let timer: NodeJS.Timeout | undefined;
  const tooLong = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`closing the app took longer than ${CLOSE_TIMEOUT_MS} ms`)),
      CLOSE_TIMEOUT_MS,
    );
    timer.unref();
  });
  try {
    await Promise.race([app.close(), tooLong]);
  } finally {
    clearTimeout(timer);
  }
  app.log.info({ refused: state.refused }, 'shut down');
}

/**
 * Puts Core's request listener in front of Fastify's on the app's HTTP server (once): it counts the
 * responses in flight and, once the server is closing, answers 503 itself. At the Node.js level
 * rather than in a Fastify hook, so it covers every route whatever plugin registered it, and 404s.
 */
function track(app: FastifyInstance): LifecycleState {
  const server = app.server as Server;
  const known = states.get(server);
  if (known) return known;
  const state: LifecycleState = { phase: 'serving', inFlight: new Set(), onIdle: undefined, refused: 0 };
  states.set(server, state);
  type Listener = (req: IncomingMessage, res: ServerResponse) => void;
  const listeners = server.listeners('request') as Listener[];
  server.removeAllListeners('request');
  const forward: Listener =
    listeners.length === 1
      ? listeners[0]!.bind(server)
      : (req, res) => {
          for (const listener of listeners) listener.call(server, req, res);
        };
  // One function for every response (a response emits 'close' once, finished or cut): nothing is
  // allocated per request but the set's entry.
  const finished = function (this: ServerResponse): void {
    state.inFlight.delete(this);
    if (state.inFlight.size === 0) state.onIdle?.();
  };
  const refusal = refusalBody();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (state.phase === 'closing' || state.phase === 'closed') {
      state.refused++;
      refuse(req, res, refusal);
      return;
    }
    if (state.phase === 'draining') askToClose(res);
    state.inFlight.add(res);
    res.on('close', finished);
    forward(req, res);
  });
  return state;
}

/** Resolves true once no response is in flight, false when `graceMs` ran out first. */
function allFinished(state: LifecycleState, graceMs: number): Promise<boolean> {
  if (state.inFlight.size === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      state.onIdle = undefined;
      resolve(false);
    }, graceMs);
    state.onIdle = () => {
      clearTimeout(timer);
      state.onIdle = undefined;
      resolve(true);
    };
  });
}

/** Node closes a connection after a response that says `Connection: close`; headers already sent cannot say it any more. */
function askToClose(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
}

interface Refusal {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

function refusalBody(): Refusal {
  const message = 'The server is shutting down; send the request again.';
  const { status, body, headers } = toErrorResponse(
    new ServiceUnavailableError(message, [{ path: '', message, reason: 'shutting_down' }]),
  );
  const text = JSON.stringify(body);
  return {
    status,
    body: text,
    headers: {
      ...headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      connection: 'close',
    },
  };
}

function refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal): void {
  req.resume(); // a body nobody reads would hold the connection open
  res.writeHead(refusal.status, refusal.headers);
  res.end(req.method === 'HEAD' ? undefined : refusal.body);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
