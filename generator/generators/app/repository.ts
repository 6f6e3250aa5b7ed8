/**
 * `repositories.ts` (user-owned: written once, then the user's). Two of its values come from the
 * manifest and are kept in step by `core generate` (see `repositorySync`): the many-to-many keys named
 * by `ids_field` (`relationKeys`) and the page-size limits of `pagination` (`reader`).
 */
import { literal, print, type Literal } from '../../engine/code.js';
import { Imports } from '../../engine/imports.js';
import { render } from '../../engine/render.js';
import type { SyncRequest } from '../../ast/sync-members.js';
import type { AppModel } from './normalize.js';

const RELATION_KEYS_DOC =
  '/** Many-to-many input keys set by `ids_field` in the manifest (kept in step by `core generate`). */';

export function renderRepository(app: AppModel): string {
  const { names } = app;
  const imports = new Imports()
    .value('@core/runtime', 'BaseRepository')
    .value('./models.js', names.entity)
    .type('./schemas.js', names.createInput, names.updateInput);
  const relationKeys = relationKeysOf(app);
  const options = app.reader
    ? `{ model: ${names.entity}, reader: ${print(literal(readerOf(app)!), 4)} }`
    : `{ model: ${names.entity} }`;
  return render('app/repositories.ts.hbs', {
    banner: userBanner(
      app,
      '`core generate` only keeps `relationKeys` and the `reader` limits in step with the manifest.',
    ),
    imports: imports.render(),
    names,
    relationKeys: relationKeys ? [RELATION_KEYS_DOC, relationKeysLine(relationKeys)] : [],
    superOptions: options,
  });
}

export function repositorySync(app: AppModel): SyncRequest {
  const relationKeys = relationKeysOf(app);
  return {
    className: app.names.repository,
    properties: [
      {
        name: 'relationKeys',
        value: relationKeys,
        declaration: relationKeys ? [RELATION_KEYS_DOC, relationKeysLine(relationKeys)] : [],
      },
    ],
    superArgument: [{ name: 'reader', value: readerOf(app) }],
  };
}

/** `{ labels: 'tag_ids' }` for the owning many-to-many relations whose key is not `<singular>_ids`. */
function relationKeysOf(app: AppModel): Record<string, string> | undefined {
  const custom = app.relations.filter((r) => r.customKey && r.key);
  return custom.length > 0 ? Object.fromEntries(custom.map((r) => [r.name, r.key!])) : undefined;
}

function relationKeysLine(keys: Record<string, string>): string {
  return `protected override readonly relationKeys = ${print(literal(keys), 2, 49, 1)};`;
}

function readerOf(app: AppModel): Literal | undefined {
  return app.reader ? { ...app.reader } : undefined;
}

/** The banner of a user-owned file: where it came from, that it is the user's, and what core still edits. */
export function userBanner(app: AppModel, edits: string): string[] {
  return [`Written once by core from ${app.manifestFile}; yours from then on.`, edits];
}
