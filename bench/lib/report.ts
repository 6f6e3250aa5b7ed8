/**
 * Turns the interleaved runs into the table and `latest.json`.
 *
 * req/s per server is the median over repetitions. Ratios are the median of the per-repetition ratios:
 * the servers of one repetition ran in the same stretch of time, so their ratio cancels most of the
 * noise from other work on the machine; a ratio therefore need not equal the quotient of the printed
 * medians. "× floor" and "× Platformatic" divide by that peer's req/s on the same request, or, for a
 * request whose only difference is the caller (a restricted role, a thousand tokens), on the endpoint
 * it stands for (`peerEndpoint`): the peers do not authenticate.
 */
import { SERVER_LABELS, SERVER_NAMES, type ServerName } from './config.js';
import { ENDPOINTS, type Endpoint } from './endpoints.js';
import type { LoadResult } from './load.js';
import type { OutboxEventsCheck } from './outbox.js';

export interface Sample extends LoadResult {
  rep: number;
  server: ServerName;
  endpoint: string;
  /** The server's RSS right after the run (MB). */
  rssMb: number | null;
  /** The server process's CPU time per 2xx response during the run (µs); null where /proc is unreadable. */
  cpuUs: number | null;
  /** req/s of each of the repetition's slices, in the order they ran (absent in files written before). */
  sliceRps?: number[];
}

/** One server's figures on one endpoint. */
export interface ServerLine {
  rps: number;
  ratio_floor: number | null;
  ratio_platformatic: number | null;
  /** Server process CPU µs per response, median over repetitions (PostgreSQL's own work not included). */
  cpu_us: number | null;
  p99_ms: number;
  failures: number;
}

/** latest.json's `endpoints.<name>`: Core (at the comparison's log level) against the peers, then every line. */
export interface EndpointSummary {
  core_rps: number | null;
  floor_rps: number | null;
  platformatic_rps: number | null;
  ratio_floor: number | null;
  ratio_platformatic: number | null;
  core_cpu_us: number | null;
  floor_cpu_us: number | null;
  platformatic_cpu_us: number | null;
  /** Core's p99 latency (ms). */
  p99_ms: number | null;
  /** Core's highest RSS after a slice of this endpoint (MB). */
  rss_mb: number | null;
  failures: number;
  /** Every server that ran this endpoint (the peers' figures here are on the endpoint they stand in with). */
  servers: Partial<Record<ServerName, ServerLine>>;
}

export interface TargetCheck {
  target: string;
  value: number | null;
  goal: string;
  met: boolean | null;
  /** For ratios taken per repetition: the lowest and highest repetition, around the median `value`. */
  range?: [number, number];
  /** A figure reported with no goal (`met` is null). */
  informational?: boolean;
}

/**
 * latest.json's `outbox` (and `postgresql.outbox`): create with the transactional outbox and NATS
 * JetStream (`core_outbox`) against create with in-process events (`core`), in the same slices, and
 * whether the events really reached the stream. `{ skipped }` when the broker could not start.
 */
export interface OutboxSummary {
  endpoint: string;
  in_process_rps: number | null;
  outbox_rps: number | null;
  /** `core_outbox` ÷ `core` on the endpoint: the median of the per-repetition ratios. */
  ratio_outbox_over_in_process: number | null;
  range: [number, number] | null;
  outbox_cpu_us: number | null;
  in_process_cpu_us: number | null;
  events: OutboxEventsCheck | null;
}

export type OutboxResults = OutboxSummary | { skipped: string };

/** The PostgreSQL part of latest.json: the same endpoint keys as SQLite's. */
export interface PostgresResults {
  endpoints: Record<string, EndpointSummary>;
  peak_rss_mb: number | null;
  /** The ratio and RSS goals, evaluated on PostgreSQL for information (they are stated for SQLite). */
  targets: TargetCheck[];
  outbox?: OutboxResults;
  run: Record<string, unknown>;
}

/**
 * latest.json. The top level is the SQLite run (empty `endpoints` and null measurements when only
 * PostgreSQL ran); `postgresql` is there when that part ran, or says why it was skipped.
 */
export interface Results {
  endpoints: Record<string, EndpointSummary>;
  cold_start_ms: number | null;
  peak_rss_mb: number | null;
  generate_30_ms: number | null;
  startapp_ms: number | null;
  targets: TargetCheck[];
  outbox?: OutboxResults;
  run: Record<string, unknown>;
  postgresql?: PostgresResults | { skipped: string };
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const round = (n: number, digits: number): number => (Number.isFinite(n) ? Number(n.toFixed(digits)) : n);
const orNull = (n: number, digits: number): number | null => (Number.isFinite(n) ? round(n, digits) : null);

/** `valueIn(that repetition's samples)` for each repetition; repetitions where it is undefined are left out. */
function valuesOverReps(samples: readonly Sample[], valueIn: (rep: readonly Sample[]) => number | undefined): number[] {
  const byRep = new Map<number, Sample[]>();
  for (const s of samples) {
    const rep = byRep.get(s.rep);
    if (rep) rep.push(s);
    else byRep.set(s.rep, [s]);
  }
  const values: number[] = [];
  for (const rep of byRep.values()) {
    const value = valueIn(rep);
    if (value !== undefined && Number.isFinite(value)) values.push(value);
  }
  return values;
}

/** The req/s of `server` on `endpoint` in one repetition's samples, if it served any. */
function rpsIn(rep: readonly Sample[], server: ServerName, endpoint: string): number | undefined {
  const rps = rep.find((s) => s.server === server && s.endpoint === endpoint)?.rps;
  return rps ? rps : undefined;
}

/** `server` on `endpoint` ÷ `peer` on the endpoint it is compared with, per repetition. */
function peerRatios(samples: readonly Sample[], server: ServerName, endpoint: Endpoint, peer: ServerName): number[] {
  const peerEndpoint = endpoint.peerEndpoint ?? endpoint.name;
  return valuesOverReps(samples, (rep) => {
    const [mine, theirs] = [rpsIn(rep, server, endpoint.name), rpsIn(rep, peer, peerEndpoint)];
    return mine && theirs ? mine / theirs : undefined;
  });
}

/**
 * `server` on `num` ÷ the same server on `den`, per repetition (restricted ÷ unrestricted, row-filtered ÷
 * equivalent search, deep ÷ first page).
 */
function selfRatios(samples: readonly Sample[], server: ServerName, num: string, den: string): number[] {
  return valuesOverReps(samples, (rep) => {
    const [a, b] = [rpsIn(rep, server, num), rpsIn(rep, server, den)];
    return a && b ? a / b : undefined;
  });
}

function cpuOf(samples: readonly Sample[]): number | null {
  const values = samples.map((s) => s.cpuUs).filter((v): v is number => v !== null);
  return values.length ? round(median(values), 0) : null;
}

/** One line per server per endpoint, and Core's figures against the peers on top. */
export function summarize(samples: readonly Sample[]): Record<string, EndpointSummary> {
  const out: Record<string, EndpointSummary> = {};
  for (const endpoint of ENDPOINTS) {
    const mine = samples.filter((s) => s.endpoint === endpoint.name);
    if (mine.length === 0) continue;
    const servers: Partial<Record<ServerName, ServerLine>> = {};
    for (const server of SERVER_NAMES) {
      const of = mine.filter((s) => s.server === server);
      if (of.length === 0) continue;
      servers[server] = {
        rps: round(median(of.map((s) => s.rps)), 0),
        ratio_floor: server === 'floor' ? 1 : orNull(median(peerRatios(samples, server, endpoint, 'floor')), 3),
        ratio_platformatic:
          server === 'platformatic' ? 1 : orNull(median(peerRatios(samples, server, endpoint, 'platformatic')), 3),
        cpu_us: cpuOf(of),
        p99_ms: round(median(of.map((s) => s.p99Ms)), 1),
        failures: of.reduce((n, s) => n + s.failures, 0),
      };
    }
    // The peers' figures on the endpoint they stand in with (their own line where they ran this one).
    const peerFigures = (peer: ServerName): { rps: number; cpu_us: number | null } | undefined => {
      const on = samples.filter((s) => s.endpoint === (endpoint.peerEndpoint ?? endpoint.name) && s.server === peer);
      return on.length ? { rps: round(median(on.map((s) => s.rps)), 0), cpu_us: cpuOf(on) } : undefined;
    };
    const [core, floor, platformatic] = [servers.core, peerFigures('floor'), peerFigures('platformatic')];
    const rss = mine
      .filter((s) => s.server === 'core')
      .map((s) => s.rssMb)
      .filter((v): v is number => v !== null);
    out[endpoint.name] = {
      core_rps: core?.rps ?? null,
      floor_rps: floor?.rps ?? null,
      platformatic_rps: platformatic?.rps ?? null,
      ratio_floor: core?.ratio_floor ?? null,
      ratio_platformatic: core?.ratio_platformatic ?? null,
      core_cpu_us: core?.cpu_us ?? null,
      floor_cpu_us: floor?.cpu_us ?? null,
      platformatic_cpu_us: platformatic?.cpu_us ?? null,
      p99_ms: core?.p99_ms ?? null,
      rss_mb: rss.length ? round(Math.max(...rss), 1) : null,
      failures: mine.reduce((n, s) => n + s.failures, 0),
      servers,
    };
  }
  return out;
}

/** The goals, evaluated on Core at the comparison's log level. */
export function checkTargets(
  samples: readonly Sample[],
  summary: Record<string, EndpointSummary>,
  coldStartMs: number | null,
  peakRssMb: number | null,
  generator?: { generate_30_ms: number },
): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const atLeast = (target: string, value: number | undefined | null, goal: number, unit = '×') =>
    checks.push({
      target,
      value: value ?? null,
      goal: `≥ ${goal}${unit}`,
      met: value === undefined || value === null || Number.isNaN(value) ? null : value >= goal,
    });
  /** A ratio taken per repetition: its median against the goal, with the lowest and highest repetition. */
  const atLeastOverReps = (target: string, values: number[], goal: number) => {
    atLeast(target, values.length ? round(median(values), 3) : null, goal);
    if (values.length) checks.at(-1)!.range = [round(Math.min(...values), 3), round(Math.max(...values), 3)];
  };
  const atMost = (target: string, value: number | null, goal: number, unit: string) =>
    checks.push({ target, value, goal: `≤ ${goal} ${unit}`, met: value === null ? null : value <= goal });
  const endpoint = (name: string): Endpoint => ENDPOINTS.find((e) => e.name === name)!;
  const vsPeer = (target: string, name: string, peer: ServerName, goal: number) => {
    if (summary[name]) atLeastOverReps(target, peerRatios(samples, 'core', endpoint(name), peer), goal);
  };

  vsPeer('list × floor', 'list', 'floor', 0.85);
  vsPeer('list × Platformatic', 'list', 'platformatic', 1.25);
  vsPeer('keyset × floor', 'keyset_90k', 'floor', 0.85);
  vsPeer('keyset × Platformatic', 'keyset_90k', 'platformatic', 1.25);
  vsPeer('search × floor', 'search', 'floor', 0.85);
  vsPeer('search × Platformatic', 'search', 'platformatic', 1.15);
  vsPeer('GET by id × floor', 'by_id', 'floor', 0.6);
  vsPeer('create × floor', 'create', 'floor', 0.55);
  vsPeer('create × Platformatic', 'create', 'platformatic', 1.3);
  vsPeer('include many-to-one × hand-written join', 'include_many_to_one', 'floor', 0.75);
  if (summary['by_id_restricted'] && summary['by_id'])
    atLeastOverReps('by id, restricted ÷ unrestricted', selfRatios(samples, 'core', 'by_id_restricted', 'by_id'), 0.95);
  if (summary['list_restricted'] && summary['list'])
    atLeastOverReps('list, restricted ÷ unrestricted', selfRatios(samples, 'core', 'list_restricted', 'list'), 0.95);
  // The same rows through the member's row filter and through a search that asks for them: what the filter adds.
  if (summary['list_row_filtered'] && summary['search_owner'])
    atLeastOverReps(
      'list, row-filtered ÷ equivalent search',
      selfRatios(samples, 'core', 'list_row_filtered', 'search_owner'),
      0.95,
    );
  if (summary['keyset_90k'] && summary['list'])
    atLeastOverReps('keyset at 90k ÷ first page', selfRatios(samples, 'core', 'keyset_90k', 'list'), 0.9);
  // What the transactional outbox costs a create: reported, with no goal set.
  if (summary['create']?.servers.core_outbox) {
    const values = peerRatios(samples, 'core_outbox', endpoint('create'), 'core');
    checks.push({
      target: 'create, outbox + NATS ÷ in-process events',
      value: values.length ? round(median(values), 3) : null,
      goal: 'none',
      met: null,
      informational: true,
      ...(values.length
        ? { range: [round(Math.min(...values), 3), round(Math.max(...values), 3)] as [number, number] }
        : {}),
    });
  }
  atMost('cold start (start → first 200)', coldStartMs, 450, 'ms');
  atMost('peak RSS under load', peakRssMb, 140, 'MB');
  atMost('core generate, 30 resources', generator?.generate_30_ms ?? null, 1000, 'ms');
  return checks;
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

const num = (n: number | null | undefined, digits = 0): string =>
  n === null || n === undefined || Number.isNaN(n)
    ? '–'
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/**
 * The table printed at the end of a run (also pasted into docs/performance.md); one per database.
 * One row per endpoint and server; a peer that stands in with another endpoint is shown in brackets.
 */
export function formatTable(endpoints: Record<string, EndpointSummary>): string {
  const header = ['endpoint', 'server', 'req/s', '× floor', '× Platformatic', 'CPU µs/req', 'p99 ms'];
  const widths = [36, 20, 8, 7, 14, 10, 7];
  const lines = [
    `| ${header.map((h, i) => pad(h, widths[i]!, i > 1)).join(' | ')} |`,
    `|${widths.map((w, i) => (i > 1 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`,
  ];
  for (const endpoint of ENDPOINTS) {
    const s = endpoints[endpoint.name];
    if (!s) continue;
    let first = true;
    for (const server of SERVER_NAMES) {
      const line = s.servers[server];
      if (!line) continue;
      const flag = line.failures > 0 ? ` (${line.failures} failed)` : '';
      const cells = [
        first ? endpoint.label : '',
        SERVER_LABELS[server] + flag,
        num(line.rps),
        num(line.ratio_floor, 2),
        num(line.ratio_platformatic, 2),
        num(line.cpu_us),
        num(line.p99_ms, 1),
      ];
      lines.push(`| ${cells.map((c, i) => pad(c, widths[i]!, i > 1)).join(' | ')} |`);
      first = false;
    }
    if (endpoint.peerEndpoint && (s.floor_rps !== null || s.platformatic_rps !== null)) {
      const cells = ['', `(peers: their ${endpoint.peerEndpoint})`, '', '', '', '', ''];
      lines.push(`| ${cells.map((c, i) => pad(c, widths[i]!, i > 1)).join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

export function formatTargets(checks: readonly TargetCheck[]): string {
  const lines = ['| target | measured | goal | | repetitions, lowest–highest |', '|---|---:|---:|---|---|'];
  for (const c of checks) {
    const value =
      c.value === null ? '–' : c.goal.endsWith('×') || c.informational ? `${c.value.toFixed(2)}×` : `${num(c.value)}`;
    const range = c.range ? `${c.range[0].toFixed(2)}–${c.range[1].toFixed(2)}` : '';
    const status = c.informational ? 'reported' : c.met === null ? 'not measured' : c.met ? 'met' : '**not met**';
    lines.push(`| ${c.target} | ${value} | ${c.informational ? '–' : c.goal} | ${status} | ${range} |`);
  }
  return lines.join('\n');
}

/** The outbox line's figures on `create`, from the samples and the check of its events. */
export function summarizeOutbox(samples: readonly Sample[], events: OutboxEventsCheck | null): OutboxSummary {
  const endpoint = ENDPOINTS.find((e) => e.events)!;
  const of = (server: ServerName): Sample[] =>
    samples.filter((s) => s.endpoint === endpoint.name && s.server === server);
  const rpsOf = (server: ServerName): number | null => orNull(median(of(server).map((s) => s.rps)), 0);
  const values = peerRatios(samples, 'core_outbox', endpoint, 'core');
  return {
    endpoint: endpoint.name,
    in_process_rps: rpsOf('core'),
    outbox_rps: rpsOf('core_outbox'),
    ratio_outbox_over_in_process: values.length ? round(median(values), 3) : null,
    range: values.length ? [round(Math.min(...values), 3), round(Math.max(...values), 3)] : null,
    outbox_cpu_us: cpuOf(of('core_outbox')),
    in_process_cpu_us: cpuOf(of('core')),
    events,
  };
}

/** The lines printed under a database's table about the outbox line. */
export function formatOutbox(outbox: OutboxResults): string {
  if ('skipped' in outbox) return `create with the outbox + NATS: skipped (${outbox.skipped}).`;
  const ratio = outbox.ratio_outbox_over_in_process;
  const range = outbox.range ? ` (repetitions ${outbox.range[0].toFixed(2)}–${outbox.range[1].toFixed(2)})` : '';
  const lines = [
    `create with the outbox + NATS ÷ with in-process events: ${ratio === null ? '–' : `${ratio.toFixed(2)}×`}${range}; ` +
      `${num(outbox.outbox_rps)} against ${num(outbox.in_process_rps)} req/s, CPU ${num(outbox.outbox_cpu_us)} against ${num(outbox.in_process_cpu_us)} µs/req`,
  ];
  const e = outbox.events;
  if (!e) lines.push('!!! OUTBOX EVENTS NOT CHECKED: the line does not show that its events reached the broker');
  else if (e.ok) {
    lines.push(
      `events checked: ${num(e.created)} creates (${num(e.responses_201)} 201s counted) × ${e.events_per_create} events = ${num(e.outbox_rows)} outbox rows, ` +
        `${num(e.pending)} pending, ${num(e.messages)} messages in ${e.stream} (drained in ${num(e.waited_ms)} ms)`,
    );
  } else {
    lines.push(
      `!!! OUTBOX EVENTS MISMATCH: ${e.problem}. The outbox line does not measure a working outbox; its figure is not valid.`,
    );
  }
  return lines.join('\n');
}
