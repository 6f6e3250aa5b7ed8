/** `plugin.ts` (user-owned: written once, never edited by `core generate`): wires the app into the kernel. */
import { Imports } from '../../engine/imports.js';
import { render } from '../../engine/render.js';
import type { AppModel } from './normalize.js';
import { userBanner } from './repository.js';

export function renderPlugin(app: AppModel): string {
  const { names } = app;
  const imports = new Imports()
    .type('fastify', 'FastifyInstance')
    .value('@core/runtime', 'container', 'Plugin')
    .value('./repositories.js', names.repository)
    .value('./routers.js', names.router)
    .value('./services.js', names.service);
  return render('app/plugin.ts.hbs', {
    banner: userBanner(app, '`core generate` never changes it; src/main.ts registers it with `kernel.addPlugin`.'),
    imports: imports.render(),
    names,
    name: app.module,
  });
}
