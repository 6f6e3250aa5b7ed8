/**
 * The first manifest of a new app (`core startapp`): the starter task resource (`--template`), the
 * fields the user answered in prompts, or a minimal resource with only a uuid `id`.
 */
import { readFileSync } from 'node:fs';
import type { FieldSpec, Manifest } from '../manifest/schema.js';
import { jsonText } from '../engine/json.js';
import { pascal, singular } from '../engine/names.js';
import { repoPath } from './repo.js';

/** The starter task resource: every field kind a first API needs (see docs/manifest.md). */
export const TEMPLATE_MANIFEST = repoPath('fixtures', 'specs', 'tasks.resource.json');

/** `$schema` of a manifest at `src/apps/<module>/<module>.resource.json`. */
export const SCHEMA_REF = '../resource.schema.json';

/** The resource-level keys for a module: `order_items` → table `order_items`, entity `OrderItem`, prefix `/order_items`. */
export function resourceHeader(
  module: string,
): Pick<Manifest, '$schema' | 'name' | 'entity' | 'prefix' | 'tags' | 'expose_schemas'> {
  return {
    $schema: SCHEMA_REF,
    name: module,
    entity: pascal(singular(module)),
    prefix: `/${module}`,
    tags: [module],
    expose_schemas: true,
  };
}

export function minimalManifest(module: string): Manifest {
  return { ...resourceHeader(module), fields: { id: { type: 'uuid', primary: true } } };
}

/** The task resource's fields under this module's names (for `tasks` it is the starter manifest as is). */
export function templateManifest(module: string): Manifest {
  const seed = JSON.parse(readFileSync(TEMPLATE_MANIFEST, 'utf8')) as Manifest;
  const {
    $schema: _ignored,
    name: _name,
    entity: _entity,
    prefix: _prefix,
    tags: _tags,
    expose_schemas: _expose,
    ...rest
  } = seed;
  return { ...resourceHeader(module), ...rest };
}

export function manifestWithFields(module: string, fields: Record<string, FieldSpec>): Manifest {
  return { ...resourceHeader(module), fields: { id: { type: 'uuid', primary: true }, ...fields } };
}

/** The manifest as written to disk: JSON as the project's formatter leaves it, with a final newline. */
export function manifestText(manifest: Manifest): string {
  return jsonText(manifest);
}
