/**
 * Generates one app (`src/apps/<module>/`) from its manifest into the tree. Called by
 * `core startapp` (once, after writing the manifest) and `core generate` (every run); both validate
 * every manifest before calling it, and commit (or, with --dry-run, only list) the tree afterwards.
 *
 * | file | owner | on `core generate` |
 * |---|---|---|
 * | `models.ts`, `schemas.ts`, `config.ts`, `test/apps/<module>.test.ts` | generator (stamped header) | rewritten; a hand edit → CONFLICT, untouched |
 *
 * The test calls the app through its typed client (`src/client/`), which the CLI writes after the code
 * (`core client`); where it cannot, the CLI leaves the test out (`test: false`), so that no test imports
 * a client that is not there.
 * | `repositories.ts`, `routers.ts`, `services.ts`, `plugin.ts` | user | never edited (recreated only when deleted) |
 *
 * The router and the repository read the manifest's values from `config.ts`. A router or repository
 * written by an previous generator, which kept those values in the file and edited them there, is
 * upgraded once (`upgradePreviousFile`).
 *
 * Pure over the tree (reads with `tree.read`, never touches the disk) and deterministic: the same
 * manifests give the same bytes, so a rerun reports every file UNCHANGED.
 */
import type { Manifest } from '../../manifest/schema.js';
import { pascal } from '../../engine/names.js';
import { stampGenerated, type Tree } from '../../engine/tree.js';
import type { UpgradeRequest } from '../../ast/upgrade-members.js';
import {
  CONFIG_IMPORT,
  renderConfig,
  REPOSITORY_CONFIG,
  repositoryValues,
  ROUTER_CONFIG,
  routerValues,
} from './config.js';
import { renderModels } from './model.js';
import { normalizeApp, type AppModel, type GenerateAppOptions } from './normalize.js';
import { renderPlugin } from './plugin.js';
import {
  READER_REFERENCE,
  RELATION_KEYS_DECLARATION,
  RELATION_KEYS_DOC,
  renderRepository,
  REPOSITORY_BANNER,
} from './repository.js';
import { renderResourceTest, resourceTestPath } from './resource-test.js';
import { renderRouter, ROUTER_BANNER, routerDeclaration } from './router.js';
import { renderSchemas } from './schema.js';
import { renderService } from './service.js';

/** What `generateApp` needs besides the manifest (see `GenerateAppOptions` for the optional keys). */
export interface GenerateAppContext extends GenerateAppOptions {
  /**
   * false: leave `test/apps/<module>.test.ts` out (neither written nor updated). The CLI does when the
   * typed client the test imports cannot be written (a project not installed yet).
   */
  test?: boolean;
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
  const app = normalizeApp(manifest, context); // throws a ManifestError before anything is written
  const generated: [path: string, body: string][] = [
    [`${app.dir}/models.ts`, renderModels(app)],
    [`${app.dir}/schemas.ts`, renderSchemas(app)],
    [`${app.dir}/config.ts`, renderConfig(app)],
  ];
  if (context.test !== false) generated.push([resourceTestPath(app.module), renderResourceTest(app)]);
  const owned: [path: string, body: string, upgrade?: UpgradeRequest][] = [
    [`${app.dir}/repositories.ts`, renderRepository(app), repositoryUpgrade(app)],
    [`${app.dir}/services.ts`, renderService(app)],
    [`${app.dir}/routers.ts`, renderRouter(app), routerUpgrade(app)],
    [`${app.dir}/plugin.ts`, renderPlugin(app)],
  ];

  for (const [path, body] of generated) tree.write(path, stampGenerated(body, app.manifestPath), 'generated');
  for (const [path, fresh, upgrade] of owned) {
    const current = tree.read(path);
    if (current === null) tree.write(path, fresh, 'user');
    else if (upgrade && PREVIOUS_BANNER.test(current)) await upgradePreviousFile(tree, path, current, fresh, upgrade);
    else tree.write(path, current, 'user');
  }
}

/**
 * The banner line of a router or repository written by the previous generator, which edited the
 * manifest's values in place on every run: the mark of a file to upgrade, and core's licence to edit it.
 */
const PREVIOUS_BANNER = /^\/\/ `core generate` only keeps .* in step with the manifest\.(?=\r?$)/m;

function routerUpgrade(app: AppModel): UpgradeRequest {
  return {
    className: app.names.router,
    properties: Object.entries(routerValues(app)).map(([name, value]) => ({
      name,
      value,
      reference: `${ROUTER_CONFIG}.${name}`,
      declaration: [routerDeclaration(name)],
    })),
    binding: ROUTER_CONFIG,
    from: CONFIG_IMPORT,
    banner: { previous: PREVIOUS_BANNER, replacement: `// ${ROUTER_BANNER}` },
  };
}

function repositoryUpgrade(app: AppModel): UpgradeRequest {
  const { relationKeys, reader } = repositoryValues(app);
  return {
    className: app.names.repository,
    properties: [
      {
        name: 'relationKeys',
        value: relationKeys,
        reference: `${REPOSITORY_CONFIG}.relationKeys`,
        declaration: [RELATION_KEYS_DOC, RELATION_KEYS_DECLARATION],
        previousDoc:
          '/** Many-to-many input keys set by `ids_field` in the manifest (kept in step by `core generate`). */',
        doc: RELATION_KEYS_DOC,
      },
    ],
    superArgument: [{ name: 'reader', value: reader, reference: READER_REFERENCE }],
    binding: REPOSITORY_CONFIG,
    from: CONFIG_IMPORT,
    banner: { previous: PREVIOUS_BANNER, replacement: `// ${REPOSITORY_BANNER}` },
  };
}

/**
 * The one-time upgrade of a router or repository of the previous generator: its manifest values come
 * to read `config.ts` (UPDATE, saying so and naming the values the file keeps as the user set them).
 * What cannot be done is a SKIP, with what to change by hand.
 */
async function upgradePreviousFile(
  tree: Tree,
  path: string,
  current: string,
  fresh: string,
  request: UpgradeRequest,
): Promise<void> {
  // ts-morph costs half a second to load: only a project of the previous generator pays it, once.
  const { upgradeMembers } = await import('../../ast/upgrade-members.js');
  const { content, kept, problems } = upgradeMembers(current, request);
  const names = [...(request.properties ?? []), ...(request.superArgument ?? [])].map((m) => m.name);
  const list = `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  if (problems.length > 0) {
    const references = [...(request.properties ?? []), ...(request.superArgument ?? [])]
      .map((m) => `${m.name} = ${m.reference}`)
      .join(', ');
    // `fresh` only makes it a SKIP (a `user` file that exists is never written), which shows the reason.
    return tree.write(
      path,
      fresh,
      'user',
      `${problems.join('; ')}: core cannot move ${list} to config.ts; set ${references} by hand ` +
        `(import { ${request.binding} } from '${request.from}') and drop the header line saying \`core generate\` keeps them in step`,
    );
  }
  const moved = `${list} now come from config.ts (a one-time change: \`core generate\` no longer edits this file)`;
  const yours =
    kept.length === 0
      ? ''
      : `; kept as set here: ${kept.join(', ')} — read it from ${request.binding} to follow the manifest`;
  tree.write(path, content, 'sync', `${moved}${yours}`);
}
