/**
 * `routers.ts` (user-owned: written once, then the user's; `core generate` never edits it). Its
 * `prefix`, `tags` and `exposeSchemas` read `routerConfig` of the generated `config.ts`, so they follow
 * the manifest; a value written here instead is the user's.
 */
import { Imports } from '../../engine/imports.js';
import { render } from '../../engine/render.js';
import { CONFIG_IMPORT, ROUTER_CONFIG, routerValues } from './config.js';
import type { AppModel } from './normalize.js';
import { userBanner } from './repository.js';

/** The router members that read `config.ts`, as the template and the upgrade of an older file write them. */
export const ROUTER_MEMBERS: Readonly<Record<string, string>> = {
  prefix: 'readonly prefix',
  tags: 'override readonly tags',
  exposeSchemas: 'override readonly exposeSchemas',
};

export function routerDeclaration(name: string): string {
  return `${ROUTER_MEMBERS[name]} = ${ROUTER_CONFIG}.${name};`;
}

export function renderRouter(app: AppModel): string {
  const { names } = app;
  const imports = new Imports()
    .value('@core/runtime', 'BaseRouter')
    .value(CONFIG_IMPORT, ROUTER_CONFIG)
    .value('./models.js', names.entity)
    .value('./schemas.js', names.createSchema, names.outSchema, names.updateSchema)
    .type('./schemas.js', names.createInput, names.updateInput)
    .value('./services.js', names.service);
  return render('app/routers.ts.hbs', {
    banner: userBanner(app, ROUTER_BANNER),
    imports: imports.render(),
    names,
    values: Object.keys(routerValues(app)).map(routerDeclaration),
  });
}

export const ROUTER_BANNER =
  '`core generate` never changes it; `prefix`, `tags` and `exposeSchemas` come from the manifest through config.ts.';
