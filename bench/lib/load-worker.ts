/**
 * The load generator's process: the bench sends it one run at a time over IPC, it runs autocannon
 * and answers the figures. Kept out of the bench's own process so the orchestration (sampling /proc,
 * logging, JSON) never competes with the load for the same event loop, and it is the same process
 * for every server.
 */
import autocannon from 'autocannon';
import type { LoadResult, LoadRun } from './load.js';

process.on('message', (message: LoadRun) => {
  void run(message).then(
    (result) => process.send?.({ ok: true, result }),
    (error: Error) => process.send?.({ ok: false, error: error.stack ?? error.message }),
  );
});

async function run(spec: LoadRun): Promise<LoadResult> {
  const result = await autocannon({
    url: spec.baseUrl,
    // Each connection cycles through the list; autocannon builds every request's bytes once, up front.
    requests: spec.requests.map((r) => ({
      method: r.method,
      path: r.path,
      headers: r.headers,
      ...(r.body !== undefined ? { body: r.body } : {}),
    })),
    connections: spec.connections,
    pipelining: 1,
    duration: spec.seconds,
    timeout: 10,
  });
  const seconds = result.duration > 0 ? result.duration : spec.seconds;
  return {
    rps: result['2xx'] / seconds,
    seconds,
    responses: result['2xx'],
    p99Ms: result.latency.p99,
    p50Ms: result.latency.p50,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}
