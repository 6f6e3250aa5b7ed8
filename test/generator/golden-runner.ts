/**
 * Runs one golden case (`fixtures/golden/<case>/`, format in fixtures/golden/README.md) the way the CLI
 * does, in a folder: every manifest loaded and validated (`loadManifests`), then `generateApp` for each
 * app of the case into one tree, plus — for `startapp` cases — the plugin registration in src/main.ts.
 * Returns the change lines the CLI would print.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ManagedFiles } from '../../generator/engine/managed-files.js';
import { Tree, type Change } from '../../generator/engine/tree.js';
import { registerPlugin } from '../../generator/ast/register-plugin.js';
import { appPlugin, generateApp } from '../../generator/generators/app/index.js';
import { render } from '../../generator/engine/render.js';
import { loadManifests, manifestMap } from '../../generator/project/manifests.js';
import { appDir, MAIN_FILE } from '../../generator/project/root.js';

export const GOLDEN_DIR = join(import.meta.dirname, '../../fixtures/golden');

export interface GoldenCase {
  readonly description: string;
  /** `startapp`: generate with `template` and register each plugin in src/main.ts; `generate`: generate only. */
  readonly command: 'startapp' | 'generate';
  /** Modules to generate, in order. */
  readonly apps: readonly string[];
  readonly template?: boolean;
}

export function readCase(name: string): GoldenCase {
  return JSON.parse(readFileSync(join(GOLDEN_DIR, name, 'case.json'), 'utf8')) as GoldenCase;
}

export function listCases(): string[] {
  return readdirSync(GOLDEN_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(GOLDEN_DIR, entry.name, 'case.json')))
    .map((entry) => entry.name)
    .sort();
}

/** A copy of the case's `input/` in a temporary folder. */
export function stage(name: string): { root: string; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), `core-golden-${name}-`));
  cpSync(join(GOLDEN_DIR, name, 'input'), root, { recursive: true });
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** Generates the case's apps in `root` and writes the result; returns the changes, sorted by path. */
export async function runGoldenCase(root: string, spec: GoldenCase): Promise<Change[]> {
  const loaded = loadManifests(root);
  const manifests = manifestMap(loaded);
  const modules = new Map(loaded.map((entry) => [entry.manifest.name, entry.module]));
  const tree = new Tree(root);
  const managed = new ManagedFiles(root);
  const mainBefore = managed.read(MAIN_FILE);
  let main = mainBefore;
  for (const module of spec.apps) {
    const entry = loaded.find((e) => e.module === module);
    if (!entry) throw new Error(`golden case: no manifest for app ${module} in ${root}`);
    await generateApp(tree, entry.manifest, {
      module,
      dir: appDir(module),
      manifestPath: entry.path,
      manifests,
      modules,
      template: spec.template === true,
    });
    if (spec.command === 'startapp' && main !== null) main = registerPlugin(main, appPlugin(module), MAIN_FILE).content;
  }
  if (spec.command === 'startapp' && main !== null) managed.write(MAIN_FILE, main, mainBefore);
  return [...tree.commit(), ...managed.commit()].sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** `CREATE    src/apps/tasks/models.ts` — the CLI's output line. */
export function changeLine(change: Change): string {
  return `${change.kind.padEnd(9)} ${change.path}${change.reason ? `: ${change.reason}` : ''}`;
}

/** Every file under `dir` (relative, `/`-separated) with its content. */
export function readTree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(dir, path).split('\\').join('/'), readFileSync(path, 'utf8'));
    }
  };
  if (existsSync(dir)) walk(dir);
  return new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The project name the cases' inputs were generated with (it appears in src/main.ts's header). */
const PROJECT_NAME = 'golden';

/**
 * What a case's `input/src/main.ts` must be: the `core init` entry point of today's template, with the
 * same plugins registered as `core startapp` would (the ones the current file registers, in order).
 * Cases start from a generated project; keeping them on the current template means a change of the
 * template reaches every expected tree (and the fixture app) through `UPDATE_GOLDEN=1`.
 */
export function expectedInputMain(current: string): string {
  let main = render('project/main.ts.hbs', { projectName: PROJECT_NAME });
  for (const [, module] of current.matchAll(/^import \{ \w+Plugin \} from '\.\/apps\/([\w-]+)\/plugin\.js';$/gm)) {
    main = registerPlugin(main, appPlugin(module!), MAIN_FILE).content;
  }
  return main;
}
