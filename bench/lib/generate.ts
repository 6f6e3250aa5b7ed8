/**
 * Generator speed, through the real CLI as a user runs it: `core generate` on a project of 30 resources
 * (the first run, which creates every file) and one `core startapp --template`. Installs are excluded
 * (`core init --no-install`); the CLI's own one-time bundle build is warmed up first.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CORE = join(ROOT, 'generator/bin/core.js');
const RESOURCES = 30;

function timedCore(args: string[], cwd: string): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, [CORE, ...args], { cwd, encoding: 'utf8' });
  const ms = performance.now() - start;
  // `generate` exits 0; without node_modules it only warns that no migration was written.
  if (result.status !== 0) throw new Error(`core ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return ms;
}

export interface GeneratorTimings {
  generate_30_ms: number;
  startapp_ms: number;
}

export function measureGenerator(): GeneratorTimings {
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
    return { generate_30_ms: Math.round(generate), startapp_ms: Math.round(startapp) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
