/**
 * `npm run fuzz -- [--runs N] [--seed S] [--db sqlite|postgresql|both] [--app tasks|relations|every-field-type]`
 *
 * Runs the fuzz suites with more requests than CI does: `--runs` is the total number of fuzzed
 * requests, shared evenly by the selected apps and databases (CI runs a few hundred per app and
 * database with the fixed seed). A failing run prints every distinct violation with its shortest
 * request; re-running with the same `--seed` and `--runs` sends the same requests.
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const APPS = ['tasks', 'relations', 'every-field-type'] as const;

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '12000' },
    seed: { type: 'string', default: '20261127' },
    db: { type: 'string', default: 'both' },
    app: { type: 'string', multiple: true },
    verbose: { type: 'boolean', default: false },
  },
});

const runs = Number(values.runs);
const seed = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
const dbs = values.db === 'both' ? ['sqlite', 'postgresql'] : [values.db!];
if (!dbs.every((d) => d === 'sqlite' || d === 'postgresql'))
  throw new Error(`--db must be sqlite, postgresql or both, got ${values.db}`);
const apps = values.app?.length ? values.app : [...APPS];
for (const app of apps)
  if (!(APPS as readonly string[]).includes(app))
    throw new Error(`--app must be one of ${APPS.join(', ')}, got ${app}`);

const perSuite = Math.ceil(runs / (apps.length * dbs.length));
console.info(
  `fuzz: ${runs} requests, seed ${seed}: ${perSuite} per app and database (${apps.join(', ')} × ${dbs.join(', ')})`,
);

const args = ['vitest', 'run', ...apps.map((a) => `test/fuzz/${a}.fuzz.test.ts`)];
if (dbs.length === 1) args.push('-t', `\\[${dbs[0]}\\]`);
const result = spawnSync('npx', args, {
  stdio: 'inherit',
  env: {
    ...process.env,
    FUZZ_RUNS: String(perSuite),
    FUZZ_SEED: String(seed),
    ...(values.verbose ? { FUZZ_VERBOSE: '1' } : {}),
  },
});
process.exit(result.status ?? 1);
