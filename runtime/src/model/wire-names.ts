/**
 * Wire names: what the HTTP API, the repositories' input and output and the entity events call a
 * model's properties. A column is its property name, a to-one relation is `<relation>_id`, a
 * many-to-many is `<singular>_ids` unless a repository's `relationKeys` says otherwise (the manifest's
 * `ids_field`).
 */
import { ReferenceKind, type EntityMetadata, type EntityProperty } from '@mikro-orm/core';
import { singular } from '../util/inflect.js';

/** The wire name of `prop`; `relationKeys` overrides many-to-many keys by relation name. */
export function wireKeyOf(prop: EntityProperty, relationKeys: Readonly<Record<string, string>> = {}): string {
  switch (prop.kind) {
    case ReferenceKind.MANY_TO_ONE:
      return `${prop.name}_id`;
    case ReferenceKind.ONE_TO_ONE:
      // Only the owning side holds the key; the inverse side has no column of its own.
      return prop.owner ? `${prop.name}_id` : prop.name;
    case ReferenceKind.MANY_TO_MANY:
      return relationKeys[prop.name] ?? `${singular(prop.name)}_ids`;
    default:
      return prop.name;
  }
}

const relationKeysByModel = new WeakMap<EntityMetadata, Readonly<Record<string, string>>>();
const namesByModel = new WeakMap<EntityMetadata, Map<string, string>>();

/**
 * Records the many-to-many keys a repository uses for its model, so entity events name those
 * relations as the API does. Called by the repository when it builds its write plan; with several
 * repositories of one model, the last one wins.
 */
export function useRelationKeys(meta: EntityMetadata, relationKeys: Readonly<Record<string, string>>): void {
  const current = relationKeysByModel.get(meta);
  if (current === relationKeys || (!current && Object.keys(relationKeys).length === 0)) return;
  relationKeysByModel.set(meta, relationKeys);
  namesByModel.delete(meta);
}

/** The wire name of the property `name` of `meta` (cached per model). */
export function wireNameOf(meta: EntityMetadata, name: string): string {
  let names = namesByModel.get(meta);
  if (!names) namesByModel.set(meta, (names = new Map()));
  let wire = names.get(name);
  if (wire === undefined) {
    const prop = meta.properties[name as never] as EntityProperty | undefined;
    wire = prop ? wireKeyOf(prop, relationKeysByModel.get(meta)) : name;
    names.set(name, wire);
  }
  return wire;
}
