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
  createSchema: string;
  updateSchema: string;
  outSchema: string;
  createInput: string;
  updateInput: string;
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
    createSchema: `${entity}Create`,
    updateSchema: `${entity}Update`,
    outSchema: `${entity}Out`,
    createInput: `${entity}CreateInput`,
    updateInput: `${entity}UpdateInput`,
    output: `${entity}Output`,
    repository: `${entity}Repository`,
    service: `${entity}Service`,
    router: `${entity}Router`,
    plugin: `${pascal(module)}Plugin`,
  };
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

const IRREGULAR: Record<string, string> = { people: 'person', children: 'child', men: 'man', women: 'woman', data: 'datum', indices: 'index' };

/**
 * English singular of a snake_case plural, enough for relation names (`labels` → `label`,
 * `categories` → `category`, `statuses` → `status`, `boxes` → `box`). Only the last word changes.
 */
export function singular(plural: string): string {
  const at = plural.lastIndexOf('_') + 1;
  const head = plural.slice(0, at);
  const word = plural.slice(at);
  const lower = word.toLowerCase();
  if (IRREGULAR[lower]) return head + IRREGULAR[lower];
  if (/[^aeiou]ies$/.test(lower)) return head + word.slice(0, -3) + 'y';
  if (/(ss|x|z|ch|sh|us)es$/.test(lower)) return head + word.slice(0, -2);
  if (/ss$|us$|is$/.test(lower)) return head + word;
  if (/s$/.test(lower)) return head + word.slice(0, -1);
  return plural;
}
