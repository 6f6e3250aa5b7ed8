/**
 * `repositories.ts` (user-owned: written once, then the user's; `core generate` never edits it). The
 * many-to-many keys named by `ids_field` (`relationKeys`) and the page-size limits of `pagination`
 * (`reader`) read `repositoryConfig` of the generated `config.ts`, so they follow the manifest.
 */
import { Imports } from '../../engine/imports.js';
import { render } from '../../engine/render.js';
import { CONFIG_IMPORT, REPOSITORY_CONFIG } from './config.js';
import type { AppModel } from './normalize.js';

export const RELATION_KEYS_DOC = '/** Input keys of many-to-many relations (`ids_field` in the manifest). */';
export const RELATION_KEYS_DECLARATION = `protected override readonly relationKeys = ${REPOSITORY_CONFIG}.relationKeys;`;
export const READER_REFERENCE = `${REPOSITORY_CONFIG}.reader`;
export const REPOSITORY_BANNER =
  '`core generate` never changes it; `relationKeys` and the `reader` limits come from the manifest through config.ts.';

export function renderRepository(app: AppModel): string {
  const { names } = app;
  const imports = new Imports()
    .value('@core/runtime', 'BaseRepository')
    .value(CONFIG_IMPORT, REPOSITORY_CONFIG)
    .value('./models.js', names.entity)
    .type('./schemas.js', names.createInput, names.updateInput);
  return render('app/repositories.ts.hbs', {
    banner: userBanner(app, REPOSITORY_BANNER),
    imports: imports.render(),
    names,
    relationKeys: [RELATION_KEYS_DOC, RELATION_KEYS_DECLARATION],
    superOptions: `{ model: ${names.entity}, reader: ${READER_REFERENCE} }`,
  });
}

/** The banner of a user-owned file: where it came from, that it is the user's, and what core does with it. */
export function userBanner(app: AppModel, note: string): string[] {
  return [`Written once by core from ${app.manifestFile}; yours from then on.`, note];
}
