/**
 * Golden cases of the app generator (fixtures/golden/<case>/, see its README): each case's input is
 * generated in a temporary folder and the whole resulting tree must equal `expected/` byte for byte,
 * and the printed changes `changes.txt`. A second run must change nothing. `UPDATE_GOLDEN=1` rewrites
 * the expectations instead (review the diff!) — for `tasks-template` also the fixture app, which is
 * that case's expected output and what the HTTP acceptance suite (test/app) runs — and first brings
 * every case's `input/src/main.ts` to the current project template.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  changeLine,
  expectedInputMain,
  GOLDEN_DIR,
  listCases,
  readCase,
  readTree,
  runGoldenCase,
  stage,
} from './golden-runner.js';

const UPDATE = process.env.UPDATE_GOLDEN === '1';
const FIXTURE_SRC = join(import.meta.dirname, '../../fixtures/apps/tasks/src');
const FIXTURE_APP = join(FIXTURE_SRC, 'apps/tasks');
const APP_MODULES = ['models', 'schemas', 'config', 'repositories', 'services', 'routers', 'plugin'];

describe.each(listCases())('golden case %s', (name) => {
  const spec = readCase(name);
  const inputMain = join(GOLDEN_DIR, name, 'input/src/main.ts');
  // Before staging: the input is copied from here.
  if (UPDATE) writeFileSync(inputMain, expectedInputMain(readFileSync(inputMain, 'utf8')));
  const { root, remove } = stage(name);
  afterAll(remove);
  let lines: string[] = [];

  it(`generates the expected tree (${spec.description})`, async () => {
    lines = (await runGoldenCase(root, spec)).map(changeLine);
    const actual = readTree(root);
    const expectedDir = join(GOLDEN_DIR, name, 'expected');
    const changesFile = join(GOLDEN_DIR, name, 'changes.txt');
    if (UPDATE) {
      rmSync(expectedDir, { recursive: true, force: true });
      mkdirSync(expectedDir, { recursive: true });
      cpSync(root, expectedDir, { recursive: true });
      writeFileSync(changesFile, `${lines.join('\n')}\n`);
    }
    expect(lines).toEqual(readFileSync(changesFile, 'utf8').trimEnd().split('\n'));
    const expected = readTree(expectedDir);
    expect([...actual.keys()]).toEqual([...expected.keys()]);
    for (const [path, content] of actual) expect(content, path).toBe(expected.get(path));
  });

  it('starts from the src/main.ts `core init` writes today (input/src/main.ts)', () => {
    const main = readFileSync(inputMain, 'utf8');
    expect(main).toBe(expectedInputMain(main));
  });

  it('changes nothing when run again (hand-edited owned files stay in CONFLICT)', async () => {
    const before = readTree(root);
    const again = await runGoldenCase(root, spec);
    const conflicts = new Set(lines.filter((l) => l.startsWith('CONFLICT')).map((l) => l.slice(10).split(':')[0]));
    for (const change of again)
      expect(`${change.kind} ${change.path}`).toBe(
        `${conflicts.has(change.path) ? 'CONFLICT' : 'UNCHANGED'} ${change.path}`,
      );
    expect(readTree(root)).toEqual(before);
  });

  if (name === 'tasks-template') {
    it.each(APP_MODULES)('%s.ts is the fixture app file (fixtures/apps/tasks)', (module) => {
      const generated = readFileSync(join(GOLDEN_DIR, name, 'expected/src/apps/tasks', `${module}.ts`), 'utf8');
      if (UPDATE) writeFileSync(join(FIXTURE_APP, `${module}.ts`), generated);
      expect(readFileSync(join(FIXTURE_APP, `${module}.ts`), 'utf8')).toBe(generated);
    });

    // The fixture app is the generated project: the bench and test/app run exactly what users get.
    it('src/main.ts is the fixture app entry point (fixtures/apps/tasks/src/main.ts)', () => {
      const generated = readFileSync(join(GOLDEN_DIR, name, 'expected/src/main.ts'), 'utf8');
      if (UPDATE) writeFileSync(join(FIXTURE_SRC, 'main.ts'), generated);
      expect(readFileSync(join(FIXTURE_SRC, 'main.ts'), 'utf8')).toBe(generated);
    });
  }
});
