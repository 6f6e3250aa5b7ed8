/**
 * `routers.ts` (user-owned: written once, then the user's). Its `prefix`, `tags` and `exposeSchemas`
 * come from the manifest and are kept in step by `core generate` (see `routerSync`); they are typed
 * (`readonly prefix: string = …`) so a subclass may change them.
 */
import { literal, print, type Literal } from '../../engine/code.js';
import { Imports } from '../../engine/imports.js';
import { render } from '../../engine/render.js';
import type { SyncRequest } from '../../ast/sync-members.js';
import type { AppModel } from './normalize.js';
import { userBanner } from './repository.js';

interface RouterValue {
  readonly name: string;
  readonly value: Literal;
  /** `readonly prefix: string = ` — everything before the initializer. */
  readonly head: string;
}

function routerValues(app: AppModel): RouterValue[] {
  return [
    { name: 'prefix', value: app.prefix, head: 'readonly prefix: string = ' },
    { name: 'tags', value: [...app.tags], head: 'override readonly tags = ' },
    { name: 'exposeSchemas', value: app.exposeSchemas, head: 'override readonly exposeSchemas: boolean = ' },
  ];
}

const declaration = ({ head, value }: RouterValue): string => `${head}${print(literal(value), 2, head.length + 2, 1)};`;

export function renderRouter(app: AppModel): string {
  const { names } = app;
  const imports = new Imports()
    .value('@core/runtime', 'BaseRouter')
    .value('./models.js', names.entity)
    .value('./schemas.js', names.createSchema, names.outSchema, names.updateSchema)
    .type('./schemas.js', names.createInput, names.updateInput)
    .value('./services.js', names.service);
  return render('app/routers.ts.hbs', {
    banner: userBanner(
      app,
      '`core generate` only keeps `prefix`, `tags` and `exposeSchemas` in step with the manifest.',
    ),
    imports: imports.render(),
    names,
    values: routerValues(app).map(declaration),
  });
}

export function routerSync(app: AppModel): SyncRequest {
  return {
    className: app.names.router,
    properties: routerValues(app).map((v) => ({ name: v.name, value: v.value, declaration: [declaration(v)] })),
  };
}
