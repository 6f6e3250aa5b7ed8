/**
 * `services.ts` (user-owned: written once, never edited by `core generate`): the resource's business
 * rules as `BaseService` hooks. With `core startapp --template` it carries the starter task resource's rules
 * (priority normalization before create, a domain event after it); otherwise every hook as an empty, documented
 * stub, so the user sees what exists and with which types.
 */
import { Imports } from '../../engine/imports.js';
import { render } from '../../engine/render.js';
import type { AppModel } from './normalize.js';
import { userBanner } from './repository.js';

export function renderService(app: AppModel): string {
  const { names } = app;
  const imports = new Imports()
    .value('@core/runtime', 'BaseService', 'Inject')
    .type('@core/runtime', 'Row', 'UnitOfWork')
    .value('./models.js', names.entity)
    .value('./repositories.js', names.repository)
    .type('./schemas.js', names.createInput, names.updateInput);
  // The starter rules read `priority` and `title`; a template manifest always has both.
  const template = app.template && 'priority' in app.manifest.fields && 'title' in app.manifest.fields;
  if (template) imports.value('@core/runtime', 'domainEvent');
  else imports.type('@core/runtime', 'Id');
  return render('app/services.ts.hbs', {
    banner: userBanner(app, '`core generate` never changes it: put the business rules of this resource here.'),
    imports: imports.render(),
    names,
    template,
    row: names.variable,
    createdEvent: `${names.table}.created`,
  });
}
