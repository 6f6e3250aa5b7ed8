export { coreOpenApi, type CoreOpenApiOptions } from './plugin.js';
export { resourceRouteConfig, type CoreRouteDoc, type ResourceDescription, type ResourceOperation } from './route-doc.js';
export { operationIdOf } from './operations.js';
