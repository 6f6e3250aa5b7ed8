export * from './envelope.js';
export * from './core-request.js';
export * from './error-handler.js';
export * from './core-json-response.js';
export * from './core-api-route.js';
export * from './base-router.js';
export { appendVary, varyOnCredentials } from './vary.js';

export {
  CLOSE_TIMEOUT_MS,
  lifecyclePhase,
  listenWithLifecycle,
  shutDownGracefully,
  type LifecyclePhase,
  type ListenWithLifecycleOptions,
} from './lifecycle.js';
export { coreHealthRoutes, type HealthRoutesOptions, type ReadinessReport } from './readiness.js';
