/**
 * What `--profile` (profile.ts) and `--instructions` (instructions.ts) share: Core and the floor on
 * SQLite, each endpoint measured on one server at a time, the floor first where it serves the endpoint.
 */
import { ENDPOINTS, type Endpoint } from './endpoints.js';
import { requestsFor, sqliteRequestsFor, type LoadGenerator, type LoadRequest, type Tokens } from './load.js';
import type { ServerSpec } from './servers.js';

export interface Inspection {
  core: ServerSpec;
  floor: ServerSpec;
  /** The seeded SQLite file; each measured server gets a copy of its own in `workDir`. */
  seedDb: string;
  workDir: string;
  sampleIds: readonly string[];
  tokens: Tokens;
  load: LoadGenerator;
  options: { duration: number; warmup: number; only?: ReadonlySet<string> | null };
}

/**
 * Measures every endpoint `--only` names, else those of `defaults`, with `measure`: on the floor, unless
 * the endpoint is Core's only (the row-filtered list: the floor ignores tokens), then on Core. Returns
 * the runs in that order; `report` sees each endpoint's pair as soon as it is measured.
 */
export async function measureEach<R>(
  inspection: Inspection,
  defaults: readonly string[],
  measure: (spec: ServerSpec, endpoint: Endpoint) => Promise<R>,
  report: (core: R, floor: R | undefined) => void,
): Promise<R[]> {
  const runs: R[] = [];
  const { only } = inspection.options;
  for (const name of only ? [...only] : defaults) {
    const endpoint = ENDPOINTS.find((e) => e.name === name)!;
    const floor =
      !endpoint.servers || endpoint.servers.includes('floor') ? await measure(inspection.floor, endpoint) : undefined;
    const core = await measure(inspection.core, endpoint);
    runs.push(...(floor ? [floor] : []), core);
    report(core, floor);
  }
  return runs;
}

/**
 * The requests a freshly started server gets for `endpoint`, once it is where the bench's servers are
 * when they are measured: there, the consistency check has had every server answer each endpoint,
 * creates included, before any load, and a create leaves state behind in a process (its first unit of
 * work, for one). So each server answers one create first.
 */
export async function cycleAsMeasured(
  baseUrl: string,
  endpoint: Endpoint,
  spec: ServerSpec,
  { sampleIds, tokens }: Inspection,
): Promise<LoadRequest[]> {
  const create = ENDPOINTS.find((e) => e.name === 'create')!;
  const request = requestsFor(create, spec.name, { database: 'sqlite', sampleIds, deepCursor: '' }, tokens)[0]!;
  const res = await fetch(baseUrl + request.path, {
    method: request.method,
    headers: request.headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  if (res.status !== create.status) throw new Error(`${spec.name}: a create answered ${res.status}`);
  return sqliteRequestsFor(baseUrl, endpoint, spec.name, sampleIds, tokens);
}
