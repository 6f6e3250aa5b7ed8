/**
 * The manifests of a project: `src/apps/<module>/<module>.resource.json`, one per app. Loading
 * validates every one of them (each file on its own, then across files: unique names, relation
 * targets that exist) and reports every problem of every file at once, before anything is generated.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest } from '../manifest/schema.js';
import { ManifestError, parseManifest, type ManifestIssue } from '../manifest/validate.js';
import { APPS_DIR, manifestPath } from './root.js';

export interface LoadedManifest {
  module: string;
  /** Project-relative path of the manifest file. */
  path: string;
  manifest: Manifest;
}

/** Several invalid manifests; `errors` has one `ManifestError` per file. */
export class ManifestErrors extends Error {
  constructor(readonly errors: readonly ManifestError[]) {
    super(errors.map((e) => e.message).join('\n'));
    this.name = 'ManifestErrors';
  }
}

/** Modules under `src/apps/` that have a manifest, sorted. */
export function listModules(root: string): string[] {
  const apps = join(root, APPS_DIR);
  if (!existsSync(apps)) return [];
  return readdirSync(apps, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, manifestPath(entry.name))))
    .map((entry) => entry.name)
    .sort();
}

/** Reads and validates every manifest of the project; throws `ManifestErrors` listing all problems. */
export function loadManifests(root: string): LoadedManifest[] {
  const loaded: LoadedManifest[] = [];
  const errors: ManifestError[] = [];
  for (const module of listModules(root)) {
    const path = manifestPath(module);
    try {
      loaded.push({ module, path, manifest: parseManifest(readFileSync(join(root, path), 'utf8'), path) });
    } catch (error) {
      if (!(error instanceof ManifestError)) throw error;
      errors.push(error);
    }
  }
  if (errors.length === 0) errors.push(...crossIssues(loaded));
  if (errors.length > 0) throw new ManifestErrors(errors);
  return loaded;
}

/** Rules between manifests: a table name is used once; a relation targets an existing resource. */
function crossIssues(loaded: readonly LoadedManifest[]): ManifestError[] {
  const byName = new Map<string, LoadedManifest>();
  const issues = new Map<LoadedManifest, ManifestIssue[]>();
  const add = (at: LoadedManifest, issue: ManifestIssue) => issues.set(at, [...(issues.get(at) ?? []), issue]);
  for (const entry of loaded) {
    const other = byName.get(entry.manifest.name);
    if (other)
      add(entry, {
        path: '$.name',
        message: `"${entry.manifest.name}" is already the name of ${other.path}; each resource needs its own table name`,
      });
    else byName.set(entry.manifest.name, entry);
  }
  const known = [...byName.keys()].sort();
  for (const entry of loaded) {
    for (const [name, relation] of Object.entries(entry.manifest.relations ?? {})) {
      if (!byName.has(relation.target)) {
        add(entry, {
          path: `$.relations.${name}.target`,
          message: `no resource named "${relation.target}" (known: ${known.join(', ')}); create it with \`core startapp ${relation.target}\``,
        });
      }
    }
  }
  return [...issues.entries()].map(([entry, list]) => new ManifestError(entry.path, list));
}

export function manifestMap(loaded: readonly LoadedManifest[]): Map<string, Manifest> {
  return new Map(loaded.map((entry) => [entry.manifest.name, entry.manifest]));
}
