/**
 * Cold start: from `spawn()` of a fresh server process to the first 200 of an authenticated GET by id
 * (so it includes Node's boot, module loading, ORM discovery, route compilation and the first
 * request's lazy compilation of context, shape and serializer). Polled every 5 ms on new connections.
 *
 * Core's start script saves V8's code cache next to the bundle when the process exits and loads it on
 * later starts (the project's scripts/build.mjs); `removeCodeCache` makes the next start a build's first.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { freePort, serverEnvironment, type ServerSpec } from './servers.js';

function getStatus(url: string, token: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', () => resolve(0));
    req.end();
  });
}

/** One measurement in ms; the process is stopped before returning. */
export async function measureColdStart(
  spec: ServerSpec,
  databaseUrl: string,
  path: string,
  token: string,
): Promise<number> {
  const port = await freePort();
  const devNull = openSync('/dev/null', 'w');
  const started = performance.now();
  const child = spawn(process.execPath, [...(spec.nodeFlags ?? []), spec.entry], {
    cwd: spec.cwd,
    env: serverEnvironment(spec, port, databaseUrl),
    stdio: ['ignore', devNull, 'ignore'],
  });
  closeSync(devNull);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const deadline = started + 30_000;
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`the ${spec.name} server exited with code ${child.exitCode} during the cold-start measurement`);
      if ((await getStatus(`http://127.0.0.1:${port}${path}`, token)) === 200) return performance.now() - started;
      if (performance.now() > deadline) throw new Error(`the ${spec.name} server gave no 200 within 30 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** Removes the code cache Core's start script saved next to its bundle (`server-<hash>.cache`). */
export function removeCodeCache(spec: ServerSpec): void {
  for (const name of readdirSync(spec.cwd))
    if (/^server-.*\.cache$/.test(name)) rmSync(join(spec.cwd, name), { force: true });
}
