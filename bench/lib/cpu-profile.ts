/**
 * Reads a V8 `.cpuprofile` (from `node --cpu-prof`) and says where the time went during the measured
 * window only (not startup or warm-up): self time per function, and per *layer* of the stack.
 *
 * Bundled code is mapped back to its source file through the bundle's source map. A frame that says
 * nothing about its layer by itself — a native builtin (`JSON.stringify`, HMAC, `Map.get`), code made
 * by `new Function` (fast-json-stringify, Ajv), `node:crypto` — is charged to the layer of its caller:
 * `JSON.stringify` called by the envelope is serialization, the HMAC called by fast-jwt is JWT.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './config.js';
import { PROJECT_NAME } from './project.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionCost {
  name: string;
  source: string;
  layer: string;
  ms: number;
  pct: number;
}

export interface ProfileSummary {
  /** Sampled time in the window that was not idle. */
  busyMs: number;
  idleMs: number;
  byLayer: { layer: string; ms: number; pct: number }[];
  top: FunctionCost[];
}

/** Layers, first match wins; `source` is a repo-relative path, a `node:` module or a package path. */
const LAYERS: [string, RegExp][] = [
  ['JWT', /^runtime\/src\/auth\/(jwt|token-cache)\.ts|node_modules\/fast-jwt\//],
  [
    'context (auth → CoreContext, ALS)',
    /^runtime\/src\/(auth|context)\/|^node:(async_hooks|internal\/async_hooks|internal\/async_local_storage)/,
  ],
  ['DI scope', /^runtime\/src\/container\//],
  ['mapping (rows → objects)', /^runtime\/src\/(search\/row-loader|model\/codecs)\.ts/],
  [
    'read path (Core search: analyze, compile, bind, cursor)',
    /^runtime\/src\/(search|model)\/|^runtime\/src\/data\/(repository|service|repository-input)\.ts/,
  ],
  ['unit of work (writes)', /^runtime\/src\/(uow|events|outbox)\//],
  [
    'SQL (SQLite execution, Database.select, pool, ORM)',
    /^runtime\/src\/db\/|node_modules\/(better-sqlite3|knex|tarn|@mikro-orm)\//,
  ],
  [
    'serialization (schema serializer, envelope)',
    /^runtime\/src\/schema\/|^runtime\/src\/http\/core-json-response\.ts|node_modules\/fast-json-stringify\//,
  ],
  // The generated project's own files (its routers, plugin, main.ts) count with Core's HTTP layer.
  [
    'Core HTTP (CoreAPIRoute guard, Vary, body parser, errors)',
    new RegExp(`^runtime/src/(http|kernel)/|^fixtures/|(^|/)${PROJECT_NAME}/src/`),
  ],
  [
    'logging (pino, request line)',
    /^runtime\/src\/logging\/|node_modules\/(pino|pino-std-serializers|sonic-boom|fast-redact|@pinojs|quick-format-unescaped|thread-stream|on-exit-leak-free|fast-safe-stringify)\//,
  ],
  [
    'Fastify (routing, hooks, validation, reply)',
    /node_modules\/(fastify|find-my-way|avvio|@fastify|ajv|ajv-formats|fast-querystring|fast-uri|secure-json-parse|light-my-request|toad-cache|process-warning|rfdc|abstract-logging|ret|safe-regex2|fast-decode-uri-component|json-schema-ref-resolver|fastify-plugin)\//,
  ],
  [
    'Node HTTP, net, streams, event loop',
    /^node:(_http|http|net|stream|events|internal\/(http|streams|stream_base_commons|timers|process\/task_queues|net|dns|url|validators|errors|util|buffer|event_target|perf))/,
  ],
  ['Node HTTP, net, streams, event loop', /^node:(buffer|util|url|timers)$/],
  // The baseline servers' own code; their better-sqlite3 calls are native frames charged here too.
  ['baseline handlers (JS + SQLite)', /^bench\/servers\//],
];

/** `node:crypto`, lodash (a knex helper) and anonymous/native frames carry no layer of their own. */
const INHERITS = /^(node:internal\/crypto|node:crypto|node_modules\/lodash\/|$)/;

export function classify(source: string, functionName: string): string | null {
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'V8 / native (program)';
  if (INHERITS.test(source)) return null;
  for (const [layer, pattern] of LAYERS) if (pattern.test(source)) return layer;
  return source.startsWith('node:') ? 'Node (other internals)' : 'other';
}

/** Maps `file:///…/bundle.mjs` positions back to repo-relative source files via `bundle.mjs.map`. */
export class SourceResolver {
  private readonly maps = new Map<string, { map: SourceMap; dir: string } | null>();

  resolve(frame: CallFrame): string {
    const { url } = frame;
    if (url === '') return '';
    if (url.startsWith('node:')) return url;
    // A file:// URL (an ES module), or a plain path: a CommonJS bundle compiled through `vm.Script`, as
    // the Core server's start script does to use V8's code cache.
    const path = url.startsWith('file://') ? fileURLToPath(url) : url.startsWith('/') ? url : undefined;
    if (path === undefined) return url;
    let entry = this.maps.get(path);
    if (entry === undefined) {
      try {
        entry = { map: new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')) as never), dir: dirname(path) };
      } catch {
        entry = null;
      }
      this.maps.set(path, entry);
    }
    if (entry) {
      const found = entry.map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string };
      if (found.originalSource)
        return relative(ROOT, resolve(entry.dir, found.originalSource.replace(/^file:\/\//, '')));
    }
    return relative(ROOT, path);
  }
}

/** Window bounds are in microseconds of the monotonic clock (`process.hrtime` / V8's profile clock). */
export function summarizeProfile(
  profile: CpuProfile,
  windowStartUs: number,
  windowEndUs: number,
  topN = 25,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);

  const resolver = new SourceResolver();
  const sourceOf = new Map<number, string>();
  const layerOf = new Map<number, string>();
  const layer = (id: number): string => {
    const known = layerOf.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const source = resolver.resolve(node.callFrame);
    sourceOf.set(id, source);
    const parent = parentOf.get(id);
    let result = classify(source, node.callFrame.functionName);
    if (result === null)
      result = parent !== undefined && byId.get(parent)!.callFrame.functionName !== '(root)' ? layer(parent) : 'other';
    layerOf.set(id, result);
    return result;
  };

  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  let idleUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    if (t < windowStartUs || t > windowEndUs) continue;
    // A sample's weight is the time until the next one (the interval it stands for).
    const weight = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i]!;
    if (byId.get(id)!.callFrame.functionName === '(idle)') {
      idleUs += weight;
      continue;
    }
    selfUs.set(id, (selfUs.get(id) ?? 0) + weight);
  }

  const busyUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const layers = new Map<string, number>();
  const functions = new Map<string, FunctionCost>();
  for (const [id, us] of selfUs) {
    const name = layer(id);
    layers.set(name, (layers.get(name) ?? 0) + us);
    const frame = byId.get(id)!.callFrame;
    const source = sourceOf.get(id) ?? '';
    const fn = frame.functionName || '(anonymous)';
    const key = `${fn}@${source}`;
    const entry = functions.get(key) ?? {
      name: fn,
      source: source || '(native / generated)',
      layer: name,
      ms: 0,
      pct: 0,
    };
    entry.ms += us / 1000;
    functions.set(key, entry);
  }
  const pct = (us: number): number => Math.round((1000 * us) / busyUs) / 10;
  return {
    busyMs: Math.round(busyUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    byLayer: [...layers]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ layer: name, ms: Math.round(us / 1000), pct: pct(us) })),
    top: [...functions.values()]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, topN)
      .map((f) => ({ ...f, ms: Math.round(f.ms), pct: pct(f.ms * 1000) })),
  };
}
