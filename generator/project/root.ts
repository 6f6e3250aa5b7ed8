/**
 * Finding the project a command runs in: the nearest folder, from the current one upward, whose
 * package.json depends on the runtime package (`@core/runtime`). That is what `core init` writes, and
 * it keeps the CLI from mistaking an unrelated package (or the Core repository itself) for a project.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export const RUNTIME_PACKAGE = '@core/runtime';

export class NotInProjectError extends Error {
  constructor(readonly from: string) {
    super(
      `not inside a Core project: no package.json depending on ${RUNTIME_PACKAGE} in ${from} or above; cd into your project, or create one with \`core init <name>\``,
    );
    this.name = 'NotInProjectError';
  }
}

export function findProjectRoot(from: string = process.cwd()): string {
  let dir = resolve(from);
  for (;;) {
    if (dependsOnRuntime(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new NotInProjectError(resolve(from));
    dir = parent;
  }
}

function dependsOnRuntime(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    return Boolean(json.dependencies?.[RUNTIME_PACKAGE] ?? json.devDependencies?.[RUNTIME_PACKAGE]);
  } catch {
    return false; // a broken package.json elsewhere is not ours to judge
  }
}

/** Conventional locations inside a project. */
export const APPS_DIR = 'src/apps';
export const MAIN_FILE = 'src/main.ts';
/** The roles file `core init` writes; no other command edits it. */
export const POLICIES_FILE = 'src/policies.json';
export const MANIFEST_SCHEMA_FILE = 'src/apps/resource.schema.json';

export function appDir(module: string): string {
  return `${APPS_DIR}/${module}`;
}

export function manifestPath(module: string): string {
  return `${APPS_DIR}/${module}/${module}.resource.json`;
}
