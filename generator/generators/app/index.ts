/**
 * Generates one app (`src/apps/<module>/`) from its manifest into the tree. Called by
 * `core startapp` (once, after writing the manifest) and `core generate` (every run); both validate
 * every manifest before calling it, and commit (or, with --dry-run, only list) the tree afterwards.
 *
 * STUB: a placeholder until the per-app templates land. It writes `plugin.ts` only (a plugin with
 * no routes), so the CLI flow — startapp, main.ts registration, generate, migration — works end to
 * end. The real generator writes models.ts, schemas.ts, repositories.ts, services.ts, routers.ts and
 * plugin.ts (contract §4), keeping user-owned files apart (contract §9).
 *
 * Contract for the real implementation (the CLI relies on it):
 * - pure over the tree: read with `tree.read`, write with `tree.write(path, content, rule)`, never
 *   touch the disk; deterministic (same input → same bytes, so a rerun reports UNCHANGED);
 * - generator-owned files carry `stampGenerated(body, context.manifestPath)` and rule `generated`;
 *   files the user extends are written with rule `user` (created once);
 * - `plugin.ts` exports the class named by `appPlugin(...).className`: `core startapp` imports it in
 *   `src/main.ts` from `./apps/<module>/plugin.js` and adds `kernel.addPlugin(new <ClassName>())`.
 */
import type { Manifest } from '../../manifest/schema.js';
import { pascal } from '../../engine/names.js';
import { stampGenerated, type Tree } from '../../engine/tree.js';

export interface GenerateAppContext {
  /** The app's module name: its folder under `src/apps/`, e.g. `tasks`. */
  module: string;
  /** Project-relative folder of the app, e.g. `src/apps/tasks`. */
  dir: string;
  /** Project-relative path of the manifest, e.g. `src/apps/tasks/tasks.resource.json` (for banners). */
  manifestPath: string;
  /** Every manifest of the project by its `name`, this one included: relation targets and inverse sides. */
  manifests: ReadonlyMap<string, Manifest>;
}

/** What `core startapp` registers in `src/main.ts`. */
export interface AppPlugin {
  className: string;
  /** Import specifier relative to `src/main.ts`. */
  importPath: string;
}

export function appPlugin(module: string): AppPlugin {
  return { className: `${pascal(module)}Plugin`, importPath: `./apps/${module}/plugin.js` };
}

export async function generateApp(tree: Tree, manifest: Manifest, context: GenerateAppContext): Promise<void> {
  const { className } = appPlugin(context.module);
  const body = `import type { FastifyInstance } from 'fastify';
import { Plugin } from '@core/runtime';

/**
 * The ${context.module} app (resource ${manifest.entity}, table ${manifest.name}).
 * Placeholder written by core's stub generator: no routes yet.
 */
export class ${className} extends Plugin {
  readonly name = '${context.module}';
  readonly version = '0.1.0';

  override async setup(_app: FastifyInstance): Promise<void> {}
}
`;
  tree.write(`${context.dir}/plugin.ts`, stampGenerated(body, context.manifestPath), 'generated');
}
