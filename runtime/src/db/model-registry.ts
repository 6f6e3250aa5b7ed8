import type { EntitySchema } from '@mikro-orm/core';

// The schemas `defineModel` registers live here, below the model layer, because the database opens
// MikroORM with them when the app names no entities of its own.
const registry = new Map<string, EntitySchema>();

/** Records the schema of a model class under its class name (a second definition replaces the first). */
export function registerModel(name: string, schema: EntitySchema): void {
  registry.set(name, schema);
}

/** Every schema defined with `defineModel` so far, by class name. */
export function registeredModels(): EntitySchema[] {
  return [...registry.values()];
}
