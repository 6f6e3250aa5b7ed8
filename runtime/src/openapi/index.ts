export { coreOpenApi, type CoreOpenApiOptions } from './plugin.js';
export {
  resourceRouteConfig,
  type CoreRouteDoc,
  type ResourceDescription,
  type ResourceOperation,
} from '../http/route-doc.js';
export { operationIdOf } from './operations.js';
export { swaggerUiOnDemand } from './docs-ui.js';
