/**
 * What `--profile` (profile.ts) and `--instructions` (instructions.ts) share: Core and the floor on
 * SQLite, each endpoint measured on one server at a time, the floor first where it serves the endpoint.
 */
import { ENDPOINTS, type Endpoint } from './endpoints.js';
import type { LoadGenerator, Tokens } from './load.js';
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
