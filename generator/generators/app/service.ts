/**
 * `services.ts` (user-owned: written once, never edited by `core generate`): the resource's business
 * rules as `BaseService` hooks. Every hook as an empty, documented stub (`templates/app/services.ts.hbs`),
 * so the user sees what exists and with which types; with `core startapp --template`, the starter task
 * resource's rules instead (`services.template.ts.hbs`: priority normalization before create, a domain
 * event after it), a template of its own so the generic one has no starter-specific branch.
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
  return render(template ? 'app/services.template.ts.hbs' : 'app/services.ts.hbs', {
    banner: userBanner(app, '`core generate` never changes it: put the business rules of this resource here.'),
    imports: imports.render(),
    names,
    row: names.variable,
    createdEvent: `${names.table}.created`,
  });
}
