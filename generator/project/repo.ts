/**
 * Where the CLI's own files are: the Core repository holding `templates/`, `fixtures/` and
 * `runtime/`. Found by walking up from this module, so it holds whether the CLI runs from its
 * TypeScript sources (tests) or from the bundle under `generator/dist/` (the `core` command).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'templates')) && existsSync(join(dir, 'runtime', 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find the Core repository (templates/ and runtime/) above ${start}`);
  }
}

export const REPO_ROOT = findRepoRoot(dirname(fileURLToPath(import.meta.url)));

/** `repoPath('templates', 'project')` → absolute path inside the Core repository. */
export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}
