/**
 * `config.ts` (generator-owned): the manifest's values that the user-owned router and repository read —
 * `prefix`, `tags` and `expose_schemas` for the router, the many-to-many keys of `ids_field` and the
 * page sizes of `pagination` for the repository. Being generated, the file follows the manifest on
 * every `core generate`, and `routers.ts` / `repositories.ts` never need an edit by core.
 */
import { literal, print, type Literal } from '../../engine/code.js';
import { render } from '../../engine/render.js';
import type { AppModel } from './normalize.js';

/** The names `config.ts` exports, read by the user-owned files. */
export const ROUTER_CONFIG = 'routerConfig';
export const REPOSITORY_CONFIG = 'repositoryConfig';
export const CONFIG_IMPORT = './config.js';

/** What the router reads: member name → the manifest's value. */
export function routerValues(app: AppModel): Record<string, Literal> {
  return { prefix: app.prefix, tags: [...app.tags], exposeSchemas: app.exposeSchemas };
}

/**
 * What the repository reads. Both keys are always there (empty: the runtime's defaults), so a
 * manifest that gains `pagination` or an `ids_field` later reaches a repository written before.
 */
export function repositoryValues(app: AppModel): { relationKeys: Record<string, string>; reader: Literal } {
  const custom = app.relations.filter((r) => r.customKey && r.key);
  return {
    relationKeys: Object.fromEntries(custom.map((r) => [r.name, r.key!])),
    reader: app.reader ? { ...app.reader } : {},
  };
}

export function renderConfig(app: AppModel): string {
  const declare = (name: string, value: Literal) => {
    const head = `export const ${name} = `;
    return `${head}${print(literal(value), 0, head.length, 1)};`;
  };
  return render('app/config.ts.hbs', {
    banner: [
      `The settings of the ${app.names.singularWords} router and repository, generated from ${app.manifestFile}: change them`,
      `there and run \`core generate ${app.module}\`. routers.ts and repositories.ts read them; to differ from the`,
      'manifest, set the value in your class instead. An edit here is reported as a conflict.',
    ],
    router: declare(ROUTER_CONFIG, routerValues(app)),
    repository: declare(REPOSITORY_CONFIG, repositoryValues(app)),
  });
}
