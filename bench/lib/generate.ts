/**
 * Generator speed, through the real CLI as a user runs it: `core generate` on a project of 30 resources
 * (the first run, which creates every file) and one `core startapp --template`. Installs are excluded
 * (`core init --no-install`); the CLI's own one-time bundle build is warmed up first.
 *
 * Each is the median of `GENERATOR_ROUNDS` rounds, every round in a new project: the first process
 * to run the CLI after a load phase can take twice as long as the next ones (the machine is slower
 * then, as for the cold starts), and one timing would report that instead of the generator.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './report.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CORE = join(ROOT, 'generator/bin/core.js');
const RESOURCES = 30;
export const GENERATOR_ROUNDS = 3;

function timedCore(args: string[], cwd: string): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, [CORE, ...args], { cwd, encoding: 'utf8' });
  const ms = performance.now() - start;
  // `generate` exits 0; without node_modules it only warns that no migration was written.
  if (result.status !== 0) throw new Error(`core ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return ms;
}

export interface GeneratorTimings {
  /** Medians of the rounds. */
  generate_30_ms: number;
  startapp_ms: number;
  /** Every round, in the order measured. */
  generate_30_runs_ms: number[];
  startapp_runs_ms: number[];
}

export function measureGenerator(): GeneratorTimings {
  const rounds = Array.from({ length: GENERATOR_ROUNDS }, measureRound);
  const generate = rounds.map((r) => r.generate);
  const startapp = rounds.map((r) => r.startapp);
  return {
    generate_30_ms: median(generate),
    startapp_ms: median(startapp),
    generate_30_runs_ms: generate,
    startapp_runs_ms: startapp,
  };
}

function measureRound(): { generate: number; startapp: number } {
  const dir = mkdtempSync(join(tmpdir(), 'core-bench-gen-'));
  try {
    timedCore(['--help'], dir); // builds the CLI bundle if a source changed
    timedCore(['init', 'gen30', '--no-install'], dir);
    const project = join(dir, 'gen30');
    const seed = JSON.parse(readFileSync(join(ROOT, 'fixtures/specs/tasks.resource.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    for (let i = 1; i <= RESOURCES; i++) {
      const name = `res_${String(i).padStart(2, '0')}`;
      mkdirSync(join(project, 'src/apps', name), { recursive: true });
      const manifest = { ...seed, name, entity: `Res${i}`, prefix: `/${name.replace('_', '-')}`, tags: [name] };
      writeFileSync(join(project, 'src/apps', name, `${name}.resource.json`), JSON.stringify(manifest, null, 2));
    }
    const generate = timedCore(['generate'], project);
    const startapp = timedCore(['startapp', 'extra', '--template'], project);
    return { generate: Math.round(generate), startapp: Math.round(startapp) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
