/**
 * The fuzzing loop: fast-check draws request plans (caller, resource, route, values, at most one
 * fault) from a fixed seed; each plan becomes a request and an expectation (computed when it is
 * sent, since rows come and go), and the answer is judged. Violations are grouped by what went
 * wrong where, keeping the shortest request of each group, so a run reports every distinct defect
 * once instead of stopping at the first.
 *
 * `FUZZ_RUNS` (requests per app and database) and `FUZZ_SEED` change the run; `npm run fuzz` sets them.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describePerDatabase, type DatabaseName } from '../helpers/databases.js';
import { bodyArb, classifyBody, resolveBody } from './bodies.js';
import { readEnvelope } from './envelope.js';
import { Fuzzed, type HttpRequest, type HttpResponse } from './harness.js';
import { pathMatches, withCaller, JSON_HEADERS, type Case } from './oracle.js';
import { listPlanArb, prepareList, prepareSearch, searchPlanArb, type ListPlan, type SearchPlan } from './reads.js';
import type { FuzzTarget } from './targets.js';
import { prepareTransport, transportPlanArb, type TransportPlan } from './transport.js';
import { includeArb, prepareWrite, writePlanArb, type WritePlan } from './writes.js';

export const RUNS = Number(process.env.FUZZ_RUNS ?? 600);
export const SEED = Number(process.env.FUZZ_SEED ?? 20261127);

type Plan = WritePlan | ListPlan | SearchPlan | TransportPlan;

interface Violation {
  readonly rule: string;
  readonly message: string;
}

interface Group {
  count: number;
  example: { request: HttpRequest; caller: string; response: HttpResponse; expected: string; violations: Violation[] };
}

/** Distinct defects: one group per (rule, route, kind of request, status), with its shortest example. */
export class DefectLog {
  readonly groups = new Map<string, Group>();
  readonly statuses = new Map<number, number>();
  readonly labels = new Map<string, number>();
  cases = 0;

  record(c: Case, caller: string, res: HttpResponse, violations: Violation[]): void {
    this.cases += 1;
    const kind = `${c.label.replace(/\(.*?\)/g, '').trim()} → ${res.status}`;
    this.labels.set(kind, (this.labels.get(kind) ?? 0) + 1);
    this.statuses.set(res.status, (this.statuses.get(res.status) ?? 0) + 1);
    if (violations.length === 0) return;
    // One group per defect, not per resource or value: the route's shape and the first violation
    // with its quoted values and numbers blanked out.
    const shape = c.request.url
      .split('?')[0]!
      .replace(/^\/[^/]+/, '/<resource>')
      .replace(/^(\/<resource>)\/(?!search$)[^/]+/, '$1/{id}');
    const first = violations[0]!;
    const message =
      first.rule === 'status'
        ? `${c.label}${c.expect.tag ? ` [${c.expect.tag}]` : ''}: expected ${c.expect.status}, got ${res.status}`
        : first.message;
    const key = `${first.rule} | ${c.request.method} ${shape} | ${message.replace(/"(?:[^"\\]|\\.)*"|'[^']*'/g, '…').replace(/\d+/g, 'n')}`;
    const size = c.request.url.length + String(c.request.payload ?? '').length;
    const group = this.groups.get(key);
    const example = {
      request: c.request,
      caller,
      response: res,
      expected: `${c.expect.status} (${c.expect.why})`,
      violations,
    };
    if (!group) this.groups.set(key, { count: 1, example });
    else {
      group.count += 1;
      const old = group.example.request;
      if (size < old.url.length + String(old.payload ?? '').length) group.example = example;
    }
  }

  report(): string {
    const cut = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);
    return [...this.groups.entries()]
      .sort(([, a], [, b]) => b.count - a.count)
      .map(([key, { count, example: e }]) =>
        [
          `✗ ${key}  ×${count}`,
          `    as ${e.caller}: ${e.request.method} ${cut(e.request.url, 160)}${e.request.headers['content-type'] ? `  [${e.request.headers['content-type']}]` : ''}`,
          ...(e.request.payload !== undefined
            ? [`    body: ${cut(JSON.stringify(String(e.request.payload)).slice(1, -1), 300)}`]
            : []),
          `    expected ${e.expected}`,
          `    got ${e.response.status}: ${cut(e.response.text, 400)}`,
          ...e.violations.map((v) => `    - ${v.rule}: ${v.message}`),
        ].join('\n'),
      )
      .join('\n');
  }
}

/** Everything wrong with one answer. */
export async function judge(c: Case, res: HttpResponse): Promise<Violation[]> {
  const out: Violation[] = [];
  if (res.status >= 500) out.push({ rule: '5xx', message: `a server error answered a client request` });
  const read = readEnvelope(res.status, String(res.headers['content-type'] ?? ''), res.text);
  if ('problem' in read) out.push({ rule: 'envelope', message: read.problem });
  if (res.status !== c.expect.status) {
    out.push({ rule: 'status', message: `expected ${c.expect.status} (${c.expect.why}), got ${res.status}` });
    return out;
  }
  if (!('body' in read)) return out;
  const body = read.body;
  if (!body.success) {
    const details = body.error.details;
    const paths = c.expect.paths;
    if (paths) {
      const off = details.filter((d) => !paths.some((p) => pathMatches(d.path, p)));
      if (off.length)
        out.push({
          rule: 'detail path',
          message: `details name ${off.map((d) => JSON.stringify(d.path)).join(', ')}; expected ${paths.map((p) => JSON.stringify(p)).join(' or ')}`,
        });
    }
    const reasons = c.expect.reasons;
    if (reasons?.length && !details.some((d) => d.reason !== undefined && reasons.includes(d.reason))) {
      out.push({
        rule: 'reason',
        message: `reasons ${JSON.stringify(details.map((d) => d.reason ?? null))}; expected one of ${reasons.join(', ')}`,
      });
    }
  }
  if (c.expect.verify) for (const message of await c.expect.verify(res, body)) out.push({ rule: 'verify', message });
  return out;
}

function planArb(fz: Fuzzed): fc.Arbitrary<Plan> {
  const callers = fz.callers;
  const caller = fc.oneof(
    ...callers.map((c) => ({ weight: Math.max(1, Math.round(c.weight * 5)), arbitrary: fc.constant(c.name) })),
  );
  const perResource = [...fz.resources.values()].map((resource) =>
    fc.oneof(
      { weight: 15, arbitrary: writePlanArb(fz, resource, caller) as fc.Arbitrary<Plan> },
      { weight: 3, arbitrary: listPlanArb(resource, caller, includeArb(fz, resource)) },
      { weight: 5, arbitrary: searchPlanArb(fz, resource, caller) },
      { weight: 2, arbitrary: transportPlanArb(resource, caller) },
    ),
  );
  return fc.oneof(...perResource);
}

async function prepare(fz: Fuzzed, plan: Plan): Promise<Case> {
  switch (plan.op) {
    case 'list':
      return prepareList(fz, plan);
    case 'search':
      return prepareSearch(fz, plan);
    case 'transport':
      return prepareTransport(fz, plan);
    default:
      return prepareWrite(fz, plan);
  }
}

/** A few rows of every resource, created as admin through the API, related rows first where needed. */
async function seed(fz: Fuzzed, perResource: number): Promise<void> {
  const admin = fz.caller('admin');
  for (let round = 0; round < 4; round++) {
    for (const resource of fz.resources.values()) {
      if ((await fz.count(resource)) >= perResource) continue;
      const bodies = fc.sample(
        bodyArb(fz, resource, 'create').filter((b) => b.fault === undefined),
        { seed: SEED + round, numRuns: perResource * 3 },
      );
      for (const spec of bodies) {
        const body = await resolveBody(fz, resource, spec);
        if (classifyBody(fz, resource, 'create', admin, body).problems.size) continue;
        await fz.inject({
          method: 'POST',
          url: `${resource.prefix}/`,
          headers: withCaller(admin, JSON_HEADERS),
          payload: JSON.stringify(body),
        });
        if ((await fz.count(resource)) >= perResource) break;
      }
    }
  }
}

/** Sends `runs` fuzzed requests drawn from `seed` and returns what was wrong with the answers. */
export async function runFuzz(fz: Fuzzed, runs: number, seed: number): Promise<DefectLog> {
  const log = new DefectLog();
  await fc.assert(
    fc.asyncProperty(planArb(fz), async (plan) => {
      const c = await prepare(fz, plan);
      if (process.env.FUZZ_TRACE)
        console.info(
          `[fuzz] ${c.label}: ${c.request.method} ${c.request.url.slice(0, 200)} ${String(c.request.payload ?? '').slice(0, 300)}`,
        );
      const res = await fz.inject(c.request);
      log.record(c, plan.caller, res, await judge(c, res));
    }),
    // The property records instead of failing: every distinct defect is reported, not just the first.
    { seed, numRuns: runs, endOnFailure: true },
  );
  return log;
}

/** Fuzzed with a few rows of every resource in place. */
export async function startFuzzed(target: FuzzTarget, dbName: DatabaseName, url: string): Promise<Fuzzed> {
  const fz = await Fuzzed.start(target, dbName, url);
  await seed(fz, 4);
  return fz;
}

/** The fuzz suite of one app, on SQLite and PostgreSQL. */
export function describeFuzz(target: FuzzTarget): void {
  describePerDatabase(`fuzz: ${target.title}`, ({ name, url }) => {
    let fz: Fuzzed;
    beforeAll(async () => {
      fz = await startFuzzed(target, name, url());
    });
    afterAll(async () => {
      await fz?.close();
    });

    it(`${RUNS} requests (seed ${SEED}): no 5xx, every answer the envelope, every answer the one expected`, {
      timeout: 60_000 + RUNS * 100,
    }, async () => {
      const started = Date.now();
      const log = await runFuzz(fz, RUNS, SEED);
      const statuses = [...log.statuses.entries()]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ');
      console.info(
        `[fuzz] ${target.title} [${name}]: ${log.cases} cases, ${fz.sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; ${statuses}; ${log.groups.size} distinct violations`,
      );
      if (process.env.FUZZ_VERBOSE)
        console.info(
          [...log.labels.entries()]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, n]) => `  ${n}\t${k}`)
            .join('\n'),
        );
      expect(log.groups.size, `distinct violations (seed ${SEED}, ${RUNS} runs):\n${log.report()}`).toBe(0);
    });
  });
}
