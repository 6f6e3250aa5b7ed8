/**
 * Load: `CONNECTIONS` keep-alive connections, no pipelining, for a fixed duration, from autocannon in
 * a process of its own (load-worker.ts, bundled like the servers and started once per bench run).
 * req/s counts only responses with the expected 2xx status, over the measured time.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUILD_DIR, CONNECTIONS, ROOT, type ServerName } from './config.js';
import { deepCursorPath, type Endpoint, type EndpointInputs } from './endpoints.js';

export interface LoadResult {
  rps: number;
  /** How long the run measured (s). */
  seconds: number;
  /** Responses with the expected 2xx status. */
  responses: number;
  p99Ms: number;
  p50Ms: number;
  /** Responses that were not 2xx, plus socket errors and timeouts: must be 0 for a valid run. */
  failures: number;
}

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** One run, as sent to the load generator's process. */
export interface LoadRun {
  baseUrl: string;
  requests: LoadRequest[];
  connections: number;
  seconds: number;
}

/** The tokens the endpoints send: one per role, and `SAMPLE_COUNT` distinct admin tokens. */
export interface Tokens {
  admin: string;
  viewer: string;
  member: string;
  many: readonly string[];
}

/**
 * The requests `server` gets for `endpoint`, cycled by every connection: the endpoint's paths (or
 * Platformatic DB's spelling of them), each with its token. Every server gets the same headers, the
 * unauthenticated ones included, so each parses the same bytes.
 */
export function requestsFor(
  endpoint: Endpoint,
  server: ServerName,
  inputs: EndpointInputs,
  tokens: Tokens,
): LoadRequest[] {
  const peer = server === 'platformatic' ? endpoint.platformatic : undefined;
  if (server === 'platformatic' && !peer) throw new Error(`Platformatic DB does not serve ${endpoint.name}`);
  const method = peer?.method ?? endpoint.method;
  const paths = (peer ?? endpoint).paths(inputs);
  const body = peer ? peer.body : endpoint.body;
  const tokenList = endpoint.manyTokens ? tokens.many : [tokens[endpoint.role]];
  const count = Math.max(paths.length, tokenList.length);
  return Array.from({ length: count }, (_, i) => {
    const headers: Record<string, string> = { authorization: `Bearer ${tokenList[i % tokenList.length]!}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return {
      method,
      path: paths[i % paths.length]!,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    };
  });
}

/**
 * `requestsFor` on SQLite, for one server started on its own copy of the data (`--profile`,
 * `--instructions`): the keyset page's cursor after row 90,000 is asked of that server (one request).
 */
export async function sqliteRequestsFor(
  baseUrl: string,
  endpoint: Endpoint,
  server: ServerName,
  sampleIds: readonly string[],
  tokens: Tokens,
): Promise<LoadRequest[]> {
  const res = await fetch(baseUrl + deepCursorPath(), { headers: { authorization: `Bearer ${tokens.admin}` } });
  const deepCursor = ((await res.json()) as { meta: { next_cursor: string } }).meta.next_cursor;
  return requestsFor(endpoint, server, { database: 'sqlite', sampleIds, deepCursor }, tokens);
}

type Reply = { ok: true; result: LoadResult } | { ok: false; error: string };

/** The load generator's process; one run at a time. */
export class LoadGenerator {
  private pending: { resolve(r: LoadResult): void; reject(e: Error): void } | undefined;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: Reply) => {
      const pending = this.pending;
      this.pending = undefined;
      if (reply.ok) pending?.resolve(reply.result);
      else pending?.reject(new Error(`load generator: ${reply.error}`));
    });
    child.once('exit', (code) => {
      this.pending?.reject(new Error(`the load generator exited (code ${code})`));
      this.pending = undefined;
    });
  }

  /** Bundles load-worker.ts (autocannon stays external, from the repository's node_modules) and starts it. */
  static async start(): Promise<LoadGenerator> {
    const dir = join(BUILD_DIR, 'load');
    mkdirSync(dir, { recursive: true });
    const entry = join(dir, 'load-worker.mjs');
    await build({
      entryPoints: [join(ROOT, 'bench/lib/load-worker.ts')],
      outfile: entry,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['autocannon'],
      tsconfig: join(ROOT, 'tsconfig.json'),
      logLevel: 'error',
    });
    return new LoadGenerator(fork(entry, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  }

  /** `seconds` of load on `baseUrl` with `requests`. */
  run(baseUrl: string, requests: LoadRequest[], seconds: number): Promise<LoadResult> {
    if (this.pending) throw new Error('the load generator runs one load at a time');
    return new Promise<LoadResult>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.send({ baseUrl, requests, connections: CONNECTIONS, seconds } satisfies LoadRun);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    await exited;
  }
}
