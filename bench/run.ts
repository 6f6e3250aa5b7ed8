/**
 * `npm run bench`: Core vs a raw Fastify + better-sqlite3 server vs hand-written Fastify + MikroORM,
 * on the same 100,000-row SQLite file, 10 connections, servers interleaved, 3 repetitions, medians.
 * Prints the table and the issue's targets, writes bench/results/latest.json.
 *
 *   npm run bench                       full run (about 12 minutes)
 *   npm run bench -- --quick            1-second runs (about 2 minutes; noisier)
 *   npm run bench -- --only by_id,list  some endpoints only
 *   npm run bench -- --profile          CPU profiles of Core and raw (by id, list, search, create), grouped by layer
 *
 * Options: --reps N, --duration S (per measured run), --warmup S (per server and endpoint, once).
 * See docs/performance.md for the method and the latest numbers.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { signToken } from '@core/runtime';
import { measureColdStart } from './lib/cold-start.js';
import { measureGenerator } from './lib/generate.js';
import { RESULTS_DIR, SECRET_KEY, SERVER_NAMES, type ServerName } from './lib/config.js';
import { deepCursorPath, ENDPOINTS, type EndpointInputs } from './lib/endpoints.js';
import { runLoad } from './lib/load.js';
import { runProfiles } from './lib/profile.js';
import { checkTargets, formatTable, formatTargets, median, summarize, type Results, type Sample } from './lib/report.js';
import { seedDatabase } from './lib/seed.js';
import { memoryOf, prepareServers, startServer, type RunningServer } from './lib/servers.js';
import { verifyServers } from './lib/verify.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    reps: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    only: { type: 'string' },
  },
});

const quick = args.quick ?? false;
const reps = Number(args.reps ?? 3);
const duration = Number(args.duration ?? (quick ? 1 : 8));
const warmup = Number(args.warmup ?? (quick ? 0.5 : 3));
const only = args.only ? new Set(args.only.split(',')) : null;
const endpoints = ENDPOINTS.filter((e) => !only || only.has(e.name));
if (only && endpoints.length !== only.size) {
  throw new Error(`--only: unknown endpoint name(s); known: ${ENDPOINTS.map((e) => e.name).join(', ')}`);
}

const tokens = {
  admin: signToken({ sub: 'bench-admin', roles: ['admin'], expiresIn: '12h' }, SECRET_KEY),
  viewer: signToken({ sub: 'bench-viewer', roles: ['viewer'], expiresIn: '12h' }, SECRET_KEY),
};

const log = (line: string): void => void process.stdout.write(`${line}\n`);
const work = mkdtempSync(join(tmpdir(), 'core-bench-'));
const servers: Partial<Record<ServerName, RunningServer>> = {};

async function main(): Promise<void> {
  const started = performance.now();
  log(`Seeding ${work}/seed.db …`);
  const seed = await seedDatabase(join(work, 'seed.db'));
  log(`  ${seed.rows.toLocaleString('en-US')} rows in ${seed.ms} ms`);
  const specs = await prepareServers();

  if (args.profile) {
    await runProfiles(specs.core, specs.raw, join(work, 'seed.db'), work, seed.sampleId, tokens, { duration: Number(args.duration ?? 10), warmup: Number(args.warmup ?? 3) });
    return;
  }

  const inputs = {} as Record<ServerName, EndpointInputs>;
  for (const name of SERVER_NAMES) {
    const dbPath = join(work, `${name}.db`);
    copyFileSync(join(work, 'seed.db'), dbPath);
    const server = await startServer(specs[name], { dbPath });
    servers[name] = server;
    const res = await fetch(server.baseUrl + deepCursorPath(), { headers: { authorization: `Bearer ${tokens.admin}` } });
    const body = (await res.json()) as { meta?: { next_cursor?: string } };
    const deepCursor = body.meta?.next_cursor;
    if (!deepCursor) throw new Error(`${name}: no next_cursor from ${deepCursorPath()} (status ${res.status})`);
    inputs[name] = { sampleId: seed.sampleId, deepCursor };
  }
  const running = SERVER_NAMES.map((name) => ({ name, server: servers[name]! }));

  const problems = await verifyServers(running.map(({ name, server }) => ({ name, baseUrl: server.baseUrl, inputs: inputs[name] })), tokens);
  if (problems.length > 0) throw new Error(`The servers disagree, so their numbers would not be comparable:\n  ${problems.join('\n  ')}`);
  log('Consistency check: the three servers return the same data for every endpoint.');

  log(`Warm-up: ${warmup}s per server and endpoint …`);
  for (const endpoint of endpoints) {
    for (const { name, server } of running) await runLoad(server.baseUrl, endpoint, inputs[name], tokens[endpoint.role], warmup);
  }

  const samples: Sample[] = [];
  for (let rep = 0; rep < reps; rep++) {
    // Rotate the order each repetition so no server always runs first (or right after a write run).
    const order = SERVER_NAMES.map((_, i) => SERVER_NAMES[(i + rep) % SERVER_NAMES.length]!);
    for (const endpoint of endpoints) {
      const parts: string[] = [];
      for (const name of order) {
        const server = servers[name]!;
        const result = await runLoad(server.baseUrl, endpoint, inputs[name], tokens[endpoint.role], duration);
        const rssMb = name === 'core' ? (memoryOf(server.pid)?.rssMb ?? null) : null;
        samples.push({ ...result, rep, server: name, endpoint: endpoint.name, rssMb });
        parts.push(`${name} ${Math.round(result.rps).toLocaleString('en-US')}${result.failures ? ` (${result.failures} failed)` : ''}`);
      }
      log(`  rep ${rep + 1}/${reps}  ${endpoint.name.padEnd(17)} ${parts.join('  ')} req/s`);
    }
  }

  const peakRssMb = memoryOf(servers.core!.pid)?.peakRssMb ?? null;
  // The baselines' peaks, for context: what the same stack costs without Core.
  const peakRssByServer = Object.fromEntries(SERVER_NAMES.map((name) => [name, Math.round((memoryOf(servers[name]!.pid)?.peakRssMb ?? NaN) * 10) / 10]));
  for (const name of SERVER_NAMES) await servers[name]?.stop();

  const coldRuns: number[] = [];
  for (let i = 0; i < 3; i++) coldRuns.push(await measureColdStart(specs.core, join(work, 'core.db'), `/tasks/${seed.sampleId}`, tokens.admin));
  const coldStartMs = Math.round(median(coldRuns));

  log('  generator: core generate on 30 resources, core startapp');
  const generator = measureGenerator();

  const summary = summarize(samples);
  const results: Results = {
    endpoints: summary,
    cold_start_ms: coldStartMs,
    peak_rss_mb: peakRssMb === null ? null : Math.round(peakRssMb * 10) / 10,
    generate_30_ms: generator.generate_30_ms,
    startapp_ms: generator.startapp_ms,
    targets: checkTargets(samples, summary, coldStartMs, peakRssMb, generator),
    run: {
      date: new Date().toISOString(),
      mode: quick ? 'quick' : 'full',
      repetitions: reps,
      duration_s: duration,
      warmup_s: warmup,
      connections: 10,
      node: process.version,
      load_average_at_end: loadavg().map((n) => Math.round(n * 100) / 100),
      cold_start_runs_ms: coldRuns.map(Math.round),
      peak_rss_mb_by_server: peakRssByServer,
      wall_s: Math.round((performance.now() - started) / 1000),
      samples,
    },
  };

  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  log('');
  log(formatTable(results));
  log('');
  log(`cold start ${coldStartMs} ms (runs: ${coldRuns.map((n) => Math.round(n)).join(', ')}), peak RSS ${results.peak_rss_mb} MB (raw ${peakRssByServer['raw']} MB, MikroORM ${peakRssByServer['mikro']} MB)`);
  log('');
  log(formatTargets(results.targets));
  log(`\nWrote bench/results/latest.json (${results.run['wall_s']} s). Load average: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
}

try {
  await main();
} finally {
  for (const name of SERVER_NAMES) await servers[name]?.stop().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}
