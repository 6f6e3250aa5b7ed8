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

// One rule for the generator and the runtime (which derives `<singular>_ids` keys the same way).
export { singular } from '../../runtime/src/util/inflect.js';
