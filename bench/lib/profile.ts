/**
 * `npm run bench -- --profile`: CPU profiles of the Core server under load on SQLite, one fresh process
 * per endpoint (GET by id, list, keyset page, search, create, or those `--only` names), with the floor
 * server (no auth, no logging) profiled the same way.
 *
 * Each server runs with `node --cpu-prof` (500 µs sampling) and a preload that turns SIGTERM into a
 * normal exit so the profile is written. After a warm-up, one load run is the measured window;
 * only samples inside it count (V8's profile clock and `process.hrtime` are both CLOCK_MONOTONIC).
 * Output: a per-layer table and the top self-time functions per endpoint, in CPU µs per request, and
 * bench/results/profile-summary.json; the raw `.cpuprofile` files stay in bench/results/profiles/
 * (open them in Chrome DevTools or speedscope).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILD_DIR, RESULTS_DIR } from './config.js';
import { summarizeProfile, type CpuProfile, type ProfileSummary } from './cpu-profile.js';
import type { Endpoint } from './endpoints.js';
import { cycleAsMeasured, measureEach, type Inspection } from './inspect.js';
import { startServer, type ServerSpec } from './servers.js';

/** Profiled unless `--only` names others. */
const PROFILED = ['by_id', 'list', 'keyset_90k', 'search', 'create'];
const PROFILE_DIR = join(RESULTS_DIR, 'profiles');

interface ProfiledRun {
  server: string;
  endpoint: string;
  rps: number;
  requests: number;
  /** Busy (non-idle) CPU µs of the server's main thread per request. */
  cpuUsPerRequest: number;
  /** The `.cpuprofile` (in bench/results/profiles/) and the measured window, to re-run the analysis. */
  profile: { file: string; windowStartUs: number; windowEndUs: number };
  summary: ProfileSummary;
}

async function profileOne(spec: ServerSpec, endpoint: Endpoint, inspection: Inspection): Promise<ProfiledRun> {
  const { seedDb, workDir, load, options } = inspection;
  const dbPath = join(workDir, `profile-${spec.name}-${endpoint.name}.db`);
  copyFileSync(seedDb, dbPath);
  const file = `${spec.name}-${endpoint.name}.cpuprofile`;
  rmSync(join(PROFILE_DIR, file), { force: true });
  const server = await startServer(spec, {
    databaseUrl: `sqlite:${dbPath}`,
    nodeFlags: [
      '--cpu-prof',
      `--cpu-prof-dir=${PROFILE_DIR}`,
      `--cpu-prof-name=${file}`,
      '--cpu-prof-interval=500',
      '--import',
      pathToFileURL(join(BUILD_DIR, 'exit-on-sigterm.mjs')).href,
    ],
  });
  try {
    const cycle = await cycleAsMeasured(server.baseUrl, endpoint, spec, inspection);
    await load.run(server.baseUrl, cycle, options.warmup);
    const startUs = Number(process.hrtime.bigint() / 1000n);
    const result = await load.run(server.baseUrl, cycle, options.duration);
    const endUs = Number(process.hrtime.bigint() / 1000n);
    await server.stop();
    const path = join(PROFILE_DIR, file);
    if (!existsSync(path)) throw new Error(`${spec.name} wrote no profile at ${path}:\n${server.stderr()}`);
    const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
    if (profile.startTime > endUs || profile.endTime < startUs) {
      throw new Error('the profile clock does not match process.hrtime; cannot cut the measured window');
    }
    const summary = summarizeProfile(profile, startUs, endUs);
    const requests = Math.round(result.rps * options.duration);
    return {
      server: spec.name,
      endpoint: endpoint.name,
      rps: Math.round(result.rps),
      requests,
      cpuUsPerRequest: Math.round((summary.busyMs * 1000) / requests),
      profile: { file, windowStartUs: startUs, windowEndUs: endUs },
      summary,
    };
  } finally {
    await server.stop();
  }
}

function print(run: ProfiledRun, floor: ProfiledRun | undefined): void {
  const perReq = (ms: number): string => ((ms * 1000) / run.requests).toFixed(1).padStart(7);
  const out = process.stdout;
  out.write(
    `\n=== ${run.server} ${run.endpoint}: ${run.rps.toLocaleString('en-US')} req/s, ${run.cpuUsPerRequest} CPU µs/request`,
  );
  out.write(
    floor ? ` (floor: ${floor.cpuUsPerRequest} µs/request at ${floor.rps.toLocaleString('en-US')} req/s)\n` : '\n',
  );
  out.write('  layer                                                     µs/req   share\n');
  for (const l of run.summary.byLayer)
    out.write(`  ${l.layer.padEnd(56)} ${perReq(l.ms)}  ${String(l.pct).padStart(5)}%\n`);
  out.write('  top self time                                              µs/req   share  layer\n');
  for (const f of run.summary.top.slice(0, 20)) {
    out.write(
      `  ${`${f.name} (${f.source})`.slice(0, 56).padEnd(56)} ${perReq(f.ms)}  ${String(f.pct).padStart(5)}%  ${f.layer}\n`,
    );
  }
}

export async function runProfiles(inspection: Inspection): Promise<void> {
  mkdirSync(PROFILE_DIR, { recursive: true });
  const runs = await measureEach(
    inspection,
    PROFILED,
    (spec, endpoint) => profileOne(spec, endpoint, inspection),
    (core, floor) => {
      print(core, floor);
      if (floor) print(floor, undefined);
    },
  );
  const { options } = inspection;
  writeFileSync(
    join(RESULTS_DIR, 'profile-summary.json'),
    `${JSON.stringify({ date: new Date().toISOString(), options, runs }, null, 2)}\n`,
  );
  process.stdout.write(`\nWrote bench/results/profile-summary.json; raw profiles in bench/results/profiles/.\n`);
}
