import { defineEntity, type EntitySchema } from '@mikro-orm/core';
import { registerModel } from '../db/model-registry.js';

/** The permission actions of one model, derived from its table name. */
export interface ModelActions {
  readonly CREATE: string;
  readonly VIEW: string;
  readonly UPDATE: string;
  readonly DELETE: string;
  readonly LISTVIEW: string;
}

/**
 * Declarative model base. A model is a class extending `Base` with a static `tableName` and its
 * fields declared with `declare` (the MikroORM schema from `defineModel` defines them; `declare`
 * emits no class field that could shadow the ORM's accessors).
 *
 * ```ts
 * export class Task extends Base {
 *   static override readonly tableName = 'tasks';
 *   declare id: string;
 *   declare title: string;
 * }
 * ```
 */
export abstract class Base {
  /** Table name; also the permission namespace and the restriction namespace. */
  static readonly tableName: string = '';

  /** `{ CREATE: 'tasks:create', VIEW: 'tasks:view', … }` */
  static actions(this: { readonly tableName: string }): ModelActions {
    const t = this.tableName;
    if (!t) throw new Error('actions() needs a static tableName on the model class');
    return {
      CREATE: `${t}:create`,
      VIEW: `${t}:view`,
      UPDATE: `${t}:update`,
      DELETE: `${t}:delete`,
      LISTVIEW: `${t}:listview`,
    };
  }
}

/** A model class: a constructor of a `Base` subclass with its static side. */
export type ModelClass<M extends Base = Base> = (new () => M) & { readonly tableName: string; actions(): ModelActions };

/** The `properties` of `defineEntity`'s class form: property builders by name, or a function returning them. */
type ModelProperties =
  | Record<string, unknown>
  | ((builders: typeof defineEntity.properties) => Record<string, unknown>);

const versions = new WeakMap<ModelClass, string>();

/**
 * `defineEntity` in its class form, with the table name taken from the class, and the schema recorded
 * so `dbManager.initApp` knows every model without a list. Returns the MikroORM `EntitySchema`.
 */
export function defineModel<M extends Base>(
  model: ModelClass<M>,
  properties: ModelProperties,
  options: {
    indexes?: { properties: (keyof M & string)[]; name?: string }[];
    uniques?: { properties: (keyof M & string)[]; name?: string }[];
    /**
     * The record's version column: an integer property starting at 1 (give it `.default(1)`) that
     * Core's repositories increment on every update with a compare-and-set, and from which the
     * record's ETag derives (see runtime/src/data/README.md).
     */
    version?: keyof M & string;
  } = {},
): EntitySchema<M> {
  if (options.version !== undefined) {
    if (typeof properties === 'object' && !(options.version in properties)) {
      throw new TypeError(
        `defineModel(${model.name}): the version property "${options.version}" is not among its properties`,
      );
    }
    versions.set(model, options.version);
  }
  const schema = defineEntity<M>({
    class: model,
    tableName: model.tableName,
    properties,
    ...(options.indexes ? { indexes: options.indexes } : {}),
    ...(options.uniques ? { uniques: options.uniques } : {}),
  } as Parameters<typeof defineEntity<M>>[0]);
  registerModel(model.name, schema as unknown as EntitySchema);
  return schema;
}

/** The version property `defineModel` was given for `model`, if any. */
export function versionPropertyOf(model: ModelClass): string | undefined {
  return versions.get(model);
}
