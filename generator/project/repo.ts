/**
 * Where the CLI's own files are (`templates/`, `fixtures/specs/`): the Core repository, or the
 * `@core/cli` package a project installs from `vendor/` (`cli-tarball.ts`), which carries the same
 * folders next to its bundle and, instead of the runtime's sources, the runtime tarball it was packed
 * with. Found by walking up from this module, so it holds whether the CLI runs from its TypeScript
 * sources (tests), from the bundle under `generator/dist/` (the `core` command) or from the package.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (
      existsSync(join(dir, 'templates')) &&
      (existsSync(join(dir, 'runtime', 'package.json')) || existsSync(join(dir, PACKAGED_MARKER)))
    )
      return dir;
    if (dirname(dir) === dir)
      throw new Error(`cannot find the Core repository (templates/ and runtime/) above ${start}`);
  }
}

/** A file only the packed CLI has: the name of the runtime tarball it carries (`runtime/<name>`). */
export const PACKAGED_MARKER = 'runtime/tarball.json';

export const REPO_ROOT = findRepoRoot(dirname(fileURLToPath(import.meta.url)));

/** True when this CLI runs from the `@core/cli` package rather than the Core repository. */
export const PACKAGED = existsSync(join(REPO_ROOT, PACKAGED_MARKER));

/** `repoPath('templates', 'project')` → absolute path inside the Core repository (or the package). */
export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}
