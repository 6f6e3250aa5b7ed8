/**
 * Generated code is emitted already formatted: in every golden case's expected tree, with the formatter
 * configuration `core init` gives a project (biome.json, .editorconfig, .gitignore), `biome check`
 * changes nothing and finds nothing. `core generate` never runs the formatter itself; this test is
 * what keeps the templates and the printer (`generator/engine/code.ts`) in line with it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { render } from '../../generator/engine/render.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { GOLDEN_DIR, listCases, readTree } from './golden-runner.js';

const BIOME = join(REPO_ROOT, 'node_modules/@biomejs/biome/bin/biome');
const scratch = mkdtempSync(join(tmpdir(), 'core-golden-format-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of `tree` with the project's formatter files, as `core init` writes them. */
function asProject(tree: string, name: string): string {
  const dir = join(scratch, name);
  cpSync(tree, dir, { recursive: true });
  writeFileSync(join(dir, 'biome.json'), render('project/biome.json.hbs', {}));
  writeFileSync(join(dir, '.editorconfig'), render('project/editorconfig.hbs', {}));
  writeFileSync(join(dir, '.gitignore'), render('project/gitignore.hbs', {}));
  return dir;
}

/** `biome check .` in `dir`: its exit code, output, and how many files it checked. */
function biomeCheck(dir: string): { code: number | null; output: string; checked: number } {
  const result = spawnSync(process.execPath, [BIOME, 'check', '--colors=off', '.'], { cwd: dir, encoding: 'utf8' });
  const output = `${result.stdout}${result.stderr}`;
  return { code: result.status, output, checked: Number(/Checked (\d+) files?/.exec(output)?.[1] ?? -1) };
}

/** The files Biome reads in a generated project: TypeScript and JSON (biome.json included). */
const checkable = (dir: string) => [...readTree(dir).keys()].filter((path) => /\.(ts|json)$/.test(path)).length;

describe.each(listCases())('golden case %s', (name) => {
  it('biome check over the expected tree: no change, no finding', () => {
    const dir = asProject(join(GOLDEN_DIR, name, 'expected'), name);
    const { code, output, checked } = biomeCheck(dir);
    expect(output).toContain('No fixes applied');
    expect(code, output).toBe(0);
    expect(checked).toBe(checkable(dir));
  });
});

describe('the check itself', () => {
  it('fails on a generated file formatted otherwise (the fixture app, with one line changed)', () => {
    const dir = asProject(join(REPO_ROOT, 'fixtures/apps/tasks'), 'broken');
    const file = join(dir, 'src/apps/tasks/routers.ts');
    writeFileSync(file, readFileSync(file, 'utf8').replace('readonly model = Task;', 'readonly model=Task'));
    const { code, output } = biomeCheck(dir);
    expect(code).toBe(1);
    expect(output).toContain('src/apps/tasks/routers.ts format');
  });

  it('passes on the fixture app as it is (what test/app serves)', () => {
    const dir = asProject(join(REPO_ROOT, 'fixtures/apps/tasks'), 'fixture');
    const { code, output, checked } = biomeCheck(dir);
    expect(code, output).toBe(0);
    expect(checked).toBe(checkable(dir));
  });
});
