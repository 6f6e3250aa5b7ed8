/**
 * Every name form a resource needs, computed once from its manifest before anything is rendered, so
 * templates hold no naming logic.
 */
export interface NameVariants {
  /** Model class, e.g. `Task`. */
  entity: string;
  /** Table and permission namespace, e.g. `tasks`. */
  table: string;
  /** The app folder under `src/apps/`, e.g. `tasks`. */
  module: string;
  /** camelCase of the entity, for variables, e.g. `task`. */
  variable: string;
  /** The entity in words, for comments: `task`, `order item`. */
  singularWords: string;
  /** The table in words, for comments: `tasks`, `order items`. */
  pluralWords: string;
  /** `a` or `an`, for `singularWords`. */
  article: string;
  /** The MikroORM schema `defineModel` returns, e.g. `TaskSchema`. */
  modelSchema: string;
  createSchema: string;
  updateSchema: string;
  outSchema: string;
  createInput: string;
  updateInput: string;
  patchInput: string;
  output: string;
  repository: string;
  service: string;
  router: string;
  plugin: string;
}

export function nameVariants(entity: string, table: string, module: string): NameVariants {
  return {
    entity,
    table,
    module,
    variable: entity[0]!.toLowerCase() + entity.slice(1),
    singularWords: words(entity),
    pluralWords: table.split('_').filter(Boolean).join(' '),
    article: article(words(entity)),
    modelSchema: `${entity}Schema`,
    createSchema: `${entity}Create`,
    updateSchema: `${entity}Update`,
    outSchema: `${entity}Out`,
    createInput: `${entity}CreateInput`,
    updateInput: `${entity}UpdateInput`,
    patchInput: `${entity}PatchInput`,
    output: `${entity}Output`,
    repository: `${entity}Repository`,
    service: `${entity}Service`,
    router: `${entity}Router`,
    plugin: `${pascal(module)}Plugin`,
  };
}

/** `OrderItem` → `order item` (acronyms stay together: `APIKey` → `api key`). */
export function words(pascalCase: string): string {
  return pascalCase
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase();
}

/**
 * The indefinite article for an English noun phrase, by its sound as far as spelling tells:
 * `an item`, `an hour`, `a user`, `a unit`, `an update`, `a one-off`.
 */
export function article(phrase: string): string {
  const w = phrase.toLowerCase();
  if (/^(one|once|eu|uni|use|usu|uti|ura|uro|ure|u[^aeiou][aeiou])/.test(w) && !/^(und|unc|unl|unr|ups|upd)/.test(w))
    return 'a';
  return /^([aeiou]|hour|honest|honou?r|heir)/.test(w) ? 'an' : 'a';
}

/** `order_items` → `OrderItems`. */
export function pascal(snake: string): string {
  return snake
    .split(/[_-]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/** `order_items` → `orderItems`. */
export function camel(snake: string): string {
  const p = pascal(snake);
  return p[0]!.toLowerCase() + p.slice(1);
}

// One rule for the generator and the runtime (which derives `<singular>_ids` keys the same way).
export { singular } from '@core/runtime/cli';
