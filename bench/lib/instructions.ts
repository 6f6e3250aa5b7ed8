/**
 * `npm run bench -- --instructions`: how many machine instructions one request executes, in Core and in
 * the floor, counted by Valgrind's callgrind on the server's main thread (SQLite; GET by id, list,
 * keyset page and search, or those `--only` names).
 *
 * Unlike CPU time, the count does not depend on what else the machine does: two runs of one build
 * agree to a fraction of a per cent, so a change of 2 % can be seen on a machine whose speed moves by
 * 40 % (docs/performance.md, Method, Instructions). Each server runs under
 * `valgrind --tool=callgrind` with `node --perf-basic-prof`; after a warm-up, counting is switched on
 * (`callgrind_control -i on`), the load runs for `duration` seconds and the counts are dumped. The
 * total of the main thread divided by the 2xx responses is the figure; its functions are named through
 * V8's perf map and grouped by the layers of `--profile`. V8's builtins (inline caches, property
 * lookups, calls) count with the function that called them; other native code (V8's runtime, SQLite,
 * crypto, GC, …) in a group of its own.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESULTS_DIR } from './config.js';
import { classify, SourceResolver } from './cpu-profile.js';
import type { Endpoint } from './endpoints.js';
import { cycleAsMeasured, measureEach, type Inspection } from './inspect.js';
import { startServer, type ServerSpec } from './servers.js';

/** Counted unless `--only` names others. */
const COUNTED = ['by_id', 'list', 'keyset_90k', 'search'];
const OUT_DIR = join(RESULTS_DIR, 'instructions');

/** Why the counts cannot be taken here, or null when valgrind and callgrind_control are installed. */
export function instructionsUnavailable(): string | null {
  for (const command of ['valgrind', 'callgrind_control']) {
    const probe = spawnSync(command, ['--version'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) return `${command} is not installed (Debian: apt-get install valgrind)`;
  }
  return null;
}

export interface CountedRun {
  server: string;
  endpoint: string;
  requests: number;
  /** Instructions of the server's main thread per 2xx response. */
  perRequest: number;
  byGroup: { group: string; perRequest: number; pct: number }[];
  top: { name: string; group: string; perRequest: number }[];
}

/**
 * Self cost per function of one callgrind output file, in its first event (instructions), and the
 * inclusive cost of each call edge (`callers`: callee → caller → cost).
 */
export function selfCosts(text: string): {
  total: number;
  byFunction: Map<string, number>;
  callers: Map<string, Map<string, number>>;
} {
  const names = new Map<string, string>();
  const byFunction = new Map<string, number>();
  const callers = new Map<string, Map<string, number>>();
  let fn = '';
  let callee: string | null = null;
  let afterCalls = false;
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) {
      fn = nameOf(line.slice(3), names);
      afterCalls = false;
    } else if (line.startsWith('cfn=')) {
      callee = nameOf(line.slice(4), names);
    } else if (line.startsWith('calls=')) {
      afterCalls = true;
    } else if (/^[+\-*\d]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0);
      // The line after `calls=` is the call's inclusive cost, already in the callee's own lines.
      if (afterCalls) {
        afterCalls = false;
        if (callee !== null) {
          let of = callers.get(callee);
          if (!of) callers.set(callee, (of = new Map()));
          of.set(fn, (of.get(fn) ?? 0) + cost);
        }
        continue;
      }
      total += cost;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + cost);
    }
  }
  return { total, byFunction, callers };
}

/**
 * Charges the own cost of V8's builtins (inline caches, property lookups, string concatenation, calls)
 * to the functions that called them, in proportion to each call's cost, so that a layer's JavaScript
 * carries the property access it causes. Totals do not change.
 */
export function chargeBuiltinsToCallers(
  byFunction: Map<string, number>,
  callers: Map<string, Map<string, number>>,
): Map<string, number> {
  const charged = new Map(byFunction);
  // Twice: a trampoline builtin passes its share on to the function that called it.
  for (let round = 0; round < 2; round++) {
    for (const [fn, cost] of [...charged]) {
      if (!/^(?:\?\?\?:)?Builtins_/.test(fn) || cost === 0) continue;
      const of = [...(callers.get(fn) ?? [])].filter(([caller]) => caller !== fn);
      const weight = of.reduce((sum, [, c]) => sum + c, 0);
      if (weight === 0) continue;
      charged.set(fn, 0);
      for (const [caller, c] of of) charged.set(caller, (charged.get(caller) ?? 0) + (cost * c) / weight);
    }
  }
  return charged;
}

/** `(12) name` defines name 12, `(12)` refers to it (callgrind's name compression). */
function nameOf(spec: string, names: Map<string, string>): string {
  const m = /^\((\d+)\)(?: (.*))?$/.exec(spec);
  if (!m) return spec;
  if (m[2] !== undefined) names.set(m[1]!, m[2]);
  return names.get(m[1]!) ?? spec;
}

interface PerfSymbol {
  start: number;
  end: number;
  name: string;
}

/** V8's `/tmp/perf-<pid>.map`: `<start> <size> <name>` per JIT-compiled function, hex. */
function readPerfMap(path: string): PerfSymbol[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [start, size, ...name] = line.split(' ');
      const from = Number.parseInt(start!, 16);
      return { start: from, end: from + Number.parseInt(size!, 16), name: name.join(' ') };
    })
    .sort((a, b) => a.start - b.start);
}

function symbolAt(symbols: readonly PerfSymbol[], address: number): string | undefined {
  let lo = 0;
  let hi = symbols.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (symbols[mid]!.start <= address) lo = mid + 1;
    else hi = mid - 1;
  }
  const found = symbols[hi];
  return found && address < found.end ? found.name : undefined;
}

/** The group of a native function, by its name. */
function nativeGroup(name: string): string {
  if (/^Builtins_/.test(name)) return 'V8 builtins (property access, calls, strings)';
  if (/^sqlite3|^(yy|walIndex|btree|pager|vdbe)/i.test(name)) return 'SQLite (native)';
  if (/sha256|^EVP_|^HMAC|^SHA|node::crypto/.test(name)) return 'crypto (native)';
  if (
    /v8::internal::(Heap|Scavenger|MarkCompact|Sweeper|RootScavenge|IterateObjectCache|ConcurrentMarking|MemoryAllocator)|Evacuat|Scaveng/.test(
      name,
    )
  )
    return 'GC';
  if (/v8::internal::compiler|Turbofan|Maglev|OptimizedCompilation/.test(name)) return 'V8 compiler';
  if (/^v8::|^v8::internal::/.test(name)) return 'V8 runtime (objects, strings, JSON)';
  if (/^node::|^uv_|^uv__|llhttp/.test(name)) return 'Node C++, libuv, HTTP parser';
  return 'libc and other native code';
}

/** Groups a dump's self costs: JavaScript through the perf map and the source maps, natives by name. */
function group(
  byFunction: Map<string, number>,
  symbols: readonly PerfSymbol[],
  resolver: SourceResolver,
): Map<string, { group: string; cost: number }> {
  const named = new Map<string, { group: string; cost: number }>();
  for (const [fn, cost] of byFunction) {
    const address = /^(?:\?\?\?:)?0x([0-9a-f]+)/.exec(fn);
    const symbol = address ? symbolAt(symbols, Number.parseInt(address[1]!, 16)) : undefined;
    let name = fn.replace(/^\?\?\?:/, '').replace(/\(.*$/, '');
    let layer: string;
    const js = symbol && /^JS:[*^~+]?(\S*) (file:\/\/\S+|node:\S+|\/\S+):(\d+):(\d+)$/.exec(symbol);
    if (js) {
      const source = resolver.resolve({
        functionName: js[1]!,
        url: js[2]!,
        lineNumber: Number(js[3]) - 1,
        columnNumber: Number(js[4]) - 1,
      });
      name = `${js[1] || '(anonymous)'} (${source})`;
      layer = classify(source, js[1]!) ?? 'generated code (serializers, validators), node:crypto';
    } else if (symbol) {
      name = symbol;
      layer = symbol.startsWith('RegExp:')
        ? 'regular expressions'
        : 'generated code (serializers, validators), node:crypto';
    } else {
      layer = nativeGroup(name);
    }
    const entry = named.get(name);
    if (entry) entry.cost += cost;
    else named.set(name, { group: layer, cost });
  }
  return named;
}

async function countOne(spec: ServerSpec, endpoint: Endpoint, inspection: Inspection): Promise<CountedRun> {
  const { seedDb, workDir, load, options } = inspection;
  const dbPath = join(workDir, `instructions-${spec.name}-${endpoint.name}.db`);
  copyFileSync(seedDb, dbPath);
  const base = join(OUT_DIR, `${spec.name}-${endpoint.name}`);
  for (const file of readdirSync(OUT_DIR))
    if (file.startsWith(`${spec.name}-${endpoint.name}.`)) rmSync(join(OUT_DIR, file));
  const server = await startServer(spec, {
    databaseUrl: `sqlite:${dbPath}`,
    nodeFlags: ['--perf-basic-prof'],
    wrapper: [
      'valgrind',
      '--tool=callgrind',
      // V8 writes and rewrites machine code: callgrind must notice it.
      '--smc-check=all-non-file',
      '--instr-atstart=no',
      // V8's compiler threads apart: the main thread's count is the one that repeats.
      '--separate-threads=yes',
      `--callgrind-out-file=${base}.%p.out`,
    ],
    readyTimeoutMs: 180_000,
  });
  // callgrind_control finds the process by the USER and HOST it was started with.
  const control = (...args: string[]): void => {
    const env: Record<string, string> = { PATH: process.env['PATH'] ?? '', HOST: spec.env['HOST'] ?? '' };
    const done = spawnSync('callgrind_control', [...args, String(server.pid)], { env, encoding: 'utf8' });
    if (done.status !== 0) throw new Error(`callgrind_control ${args.join(' ')} failed: ${done.stderr}${done.stdout}`);
  };
  let requests: number;
  try {
    const cycle = await cycleAsMeasured(server.baseUrl, endpoint, spec, inspection);
    await load.run(server.baseUrl, cycle, options.warmup);
    control('-i', 'on');
    const result = await load.run(server.baseUrl, cycle, options.duration);
    control('-d', 'measured');
    control('-i', 'off');
    if (result.failures > 0) throw new Error(`${spec.name} ${endpoint.name}: ${result.failures} failed requests`);
    requests = result.responses;
  } finally {
    await server.stop();
  }
  const main = `${base}.${server.pid}.out.1-01`;
  if (!existsSync(main)) throw new Error(`${spec.name} wrote no callgrind dump at ${main}:\n${server.stderr()}`);
  const { total, byFunction, callers } = selfCosts(readFileSync(main, 'utf8'));
  // The JIT's names stay beside the dumps, so two dumps can be compared function by function later.
  const perfMap = `${base}.${server.pid}.perf.map`;
  const jitMap = `/tmp/perf-${server.pid}.map`;
  if (existsSync(jitMap)) {
    copyFileSync(jitMap, perfMap);
    rmSync(jitMap);
  }
  const named = group(chargeBuiltinsToCallers(byFunction, callers), readPerfMap(perfMap), new SourceResolver());
  const groups = new Map<string, number>();
  for (const { group: g, cost } of named.values()) groups.set(g, (groups.get(g) ?? 0) + cost);
  const perRequest = (cost: number): number => Math.round(cost / requests);
  return {
    server: spec.name,
    endpoint: endpoint.name,
    requests,
    perRequest: perRequest(total),
    byGroup: [...groups]
      .sort((a, b) => b[1] - a[1])
      .map(([g, cost]) => ({ group: g, perRequest: perRequest(cost), pct: Math.round((1000 * cost) / total) / 10 })),
    top: [...named]
      .sort((a, b) => b[1].cost - a[1].cost)
      .slice(0, 25)
      .map(([name, { group: g, cost }]) => ({ name, group: g, perRequest: perRequest(cost) })),
  };
}

function print(core: CountedRun, floor: CountedRun | undefined): void {
  const out = process.stdout;
  const n = (v: number): string => v.toLocaleString('en-US').padStart(10);
  out.write(`\n=== ${core.endpoint}: Core ${n(core.perRequest).trim()} instructions per request`);
  out.write(
    floor
      ? `, floor ${floor.perRequest.toLocaleString('en-US')} (Core ÷ floor ${(core.perRequest / floor.perRequest).toFixed(2)}); ${core.requests} and ${floor.requests} requests counted\n`
      : `; ${core.requests} requests counted\n`,
  );
  const floorBy = new Map(floor?.byGroup.map((g) => [g.group, g.perRequest]));
  out.write(`  ${'group'.padEnd(58)} ${'Core'.padStart(10)} ${'floor'.padStart(10)}\n`);
  for (const g of core.byGroup) {
    out.write(`  ${g.group.slice(0, 58).padEnd(58)} ${n(g.perRequest)} ${floor ? n(floorBy.get(g.group) ?? 0) : ''}\n`);
  }
  out.write(`  top functions of Core${' '.repeat(37)} ${'Core'.padStart(10)}\n`);
  for (const f of core.top.slice(0, 15)) out.write(`  ${f.name.slice(0, 58).padEnd(58)} ${n(f.perRequest)}\n`);
}

export async function runInstructions(inspection: Inspection): Promise<void> {
  mkdirSync(OUT_DIR, { recursive: true });
  const runs = await measureEach(inspection, COUNTED, (spec, endpoint) => countOne(spec, endpoint, inspection), print);
  const { options } = inspection;
  writeFileSync(
    join(RESULTS_DIR, 'instructions-summary.json'),
    `${JSON.stringify({ date: new Date().toISOString(), options, runs }, null, 2)}\n`,
  );
  process.stdout.write(
    '\nWrote bench/results/instructions-summary.json; the callgrind dumps are in bench/results/instructions/.\n',
  );
}
