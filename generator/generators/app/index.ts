/**
 * Generates one app (`src/apps/<module>/`) from its manifest into the tree. Called by
 * `core startapp` (once, after writing the manifest) and `core generate` (every run); both validate
 * every manifest before calling it, and commit (or, with --dry-run, only list) the tree afterwards.
 *
 * | file | owner | on `core generate` |
 * |---|---|---|
 * | `models.ts`, `schemas.ts`, `test/apps/<module>.test.ts` | generator (stamped header) | rewritten; a hand edit → CONFLICT, untouched |
 * | `repositories.ts`, `routers.ts` | user | only the manifest's values (`relationKeys`, `reader`; `prefix`, `tags`, `exposeSchemas`) are edited in place |
 * | `services.ts`, `plugin.ts` | user | never touched (recreated only when deleted) |
 *
 * Pure over the tree (reads with `tree.read`, never touches the disk) and deterministic: the same
 * manifests give the same bytes, so a rerun reports every file UNCHANGED.
 */
import type { Manifest } from '../../manifest/schema.js';
import { pascal } from '../../engine/names.js';
import { stampGenerated, type Tree } from '../../engine/tree.js';
import type { SyncRequest } from '../../ast/sync-members.js';
import { renderModels } from './model.js';
import { normalizeApp, type GenerateAppOptions } from './normalize.js';
import { renderPlugin } from './plugin.js';
import { renderRepository, repositorySync } from './repository.js';
import { renderResourceTest, resourceTestPath } from './resource-test.js';
import { renderRouter, routerSync } from './router.js';
import { renderSchemas } from './schema.js';
import { renderService } from './service.js';

/** What `generateApp` needs besides the manifest (see `GenerateAppOptions` for the optional keys). */
export type GenerateAppContext = GenerateAppOptions;

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
  const app = normalizeApp(manifest, context); // throws a ManifestError before anything is written
  const generated: [path: string, body: string][] = [
    [`${app.dir}/models.ts`, renderModels(app)],
    [`${app.dir}/schemas.ts`, renderSchemas(app)],
    [resourceTestPath(app.module), renderResourceTest(app)],
  ];
  const owned: [path: string, body: string, sync?: SyncRequest][] = [
    [`${app.dir}/repositories.ts`, renderRepository(app), repositorySync(app)],
    [`${app.dir}/services.ts`, renderService(app)],
    [`${app.dir}/routers.ts`, renderRouter(app), routerSync(app)],
    [`${app.dir}/plugin.ts`, renderPlugin(app)],
  ];

  for (const [path, body] of generated) tree.write(path, stampGenerated(body, app.manifestPath), 'generated');
  for (const [path, fresh, sync] of owned) await writeUserFile(tree, path, fresh, sync);
}

/**
 * A user-owned file: created when missing; otherwise its manifest-derived values are brought in step
 * (reported UPDATE) or it is left as it is (UNCHANGED). What cannot be applied is a SKIP with the reason.
 */
async function writeUserFile(tree: Tree, path: string, fresh: string, sync: SyncRequest | undefined): Promise<void> {
  const current = tree.read(path);
  if (current === null) return tree.write(path, fresh, 'user');
  if (!sync) return tree.write(path, current, 'sync');
  // ts-morph costs half a second to load: only `core generate` over existing apps pays it.
  const { syncMembers } = await import('../../ast/sync-members.js');
  const { content, problems } = syncMembers(current, sync);
  if (problems.length > 0) {
    const wanted = [...(sync.properties ?? []), ...(sync.superArgument ?? [])]
      .map((m) => `${m.name} = ${JSON.stringify(m.value ?? null)}`)
      .join(', ');
    return tree.write(path, fresh, 'user', `${problems.join('; ')}: set ${wanted} by hand`);
  }
  tree.write(path, content, 'sync');
}
