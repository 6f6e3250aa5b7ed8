/**
 * The layer rule of `npm run lint` (.dependency-cruiser.cjs) run on a small tree in a temp folder: it
 * must refuse an upward import, a folder missing from the layer list and a generator import of runtime
 * sources, and accept a downward import. Proves the rule can fail, not only that today's tree passes.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEPCRUISE = join(ROOT, 'node_modules/.bin/depcruise');
const dirs: string[] = [];

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'core-layers-'));
  dirs.push(dir);
  copyFileSync(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
  );
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function lint(dir: string, ...paths: string[]): { ok: boolean; output: string } {
  try {
    const output = execFileSync(DEPCRUISE, [...paths, '--config', '.dependency-cruiser.cjs'], {
      cwd: dir,
      encoding: 'utf8',
      stdio: 'pipe',
    });
    return { ok: true, output };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the runtime layer rule', () => {
  it('accepts a layer importing one below it', () => {
    const dir = tree({
      'runtime/src/db/database.ts': "import { ready } from '../settings/settings.js';\nexport const db = ready;\n",
      'runtime/src/settings/settings.ts': 'export const ready = true;\n',
    });
    const result = lint(dir, 'runtime/src');
    expect(result.output).toContain('no dependency violations');
    expect(result.ok).toBe(true);
  });

  it('refuses a layer importing one above it, naming the rule', () => {
    const dir = tree({
      'runtime/src/db/database.ts': "import { route } from '../http/router.js';\nexport const db = route;\n",
      'runtime/src/http/router.ts': 'export const route = 1;\n',
    });
    const result = lint(dir, 'runtime/src');
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/layer-db: runtime\/src\/db\/database\.ts → runtime\/src\/http\/router\.ts/);
  });

  it('refuses a folder that has no place in the layer list', () => {
    const dir = tree({
      'runtime/src/extras/thing.ts': "import { ready } from '../settings/settings.js';\nexport const x = ready;\n",
      'runtime/src/settings/settings.ts': 'export const ready = true;\n',
    });
    const result = lint(dir, 'runtime/src');
    expect(result.ok).toBe(false);
    expect(result.output).toContain('unlisted-folder');
  });

  it('refuses a relative import of runtime sources from the generator', () => {
    const dir = tree({
      'generator/cli/x.ts':
        "import { ready } from '../../runtime/src/settings/settings.js';\nexport const x = ready;\n",
      'runtime/src/settings/settings.ts': 'export const ready = true;\n',
    });
    const result = lint(dir, 'runtime/src', 'generator');
    expect(result.ok).toBe(false);
    expect(result.output).toContain('generator-uses-the-package');
  });
});
