import type { TSchema } from 'typebox';
import type { Token } from '../container/token.js';
import type { SchemaClass } from '../schema/context-schema.js';

/** The seven operations of a resource router, named as the document's operationIds start. */
export type ResourceOperation = 'create' | 'get' | 'replace' | 'update' | 'delete' | 'list' | 'search';

/** What the document needs to know of the resource behind a router's routes. */
export interface ResourceDescription {
  /** The model's class name: `Task` (operationIds `createTask`, components `TaskCreate`). */
  readonly entity: string;
  /** The table and permission namespace: `tasks` (operationIds `listTasks`, `searchTasks`). */
  readonly name: string;
  readonly tags: readonly string[];
  readonly createSchema: SchemaClass;
  readonly updateSchema: SchemaClass;
  readonly schemaOut: SchemaClass;
  /** The `{id}` path parameter as the router validates it. */
  readonly id: TSchema;
  /**
   * The router's service: the document reads the page-size and path-depth limits of its repository's
   * search engine from one instance (the defaults when it has none).
   */
  readonly service?: Token<unknown>;
}

/** A route's entry in the document: which resource operation it is. */
export interface CoreRouteDoc {
  readonly operation: ResourceOperation;
  readonly resource: ResourceDescription;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by `BaseRouter` on its seven routes; read by `coreOpenApi` to describe them. */
    coreOpenApi?: CoreRouteDoc;
  }
}

/**
 * The route `config` that tells `coreOpenApi` what a route of a resource router does. Documentation
 * only: Fastify compiles nothing from it, so validation and serialization stay Core's own.
 */
export function resourceRouteConfig(
  operation: ResourceOperation,
  resource: ResourceDescription,
): { coreOpenApi: CoreRouteDoc } {
  return { coreOpenApi: { operation, resource } };
}
