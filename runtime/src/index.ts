/**
 * @core/runtime — everything a generated Core app imports. Named exports only; each area has its own
 * barrel so the surface is easy to review.
 */
export * from './errors.js';
export * from './logging/logger.js';
export * from './context/context.js';
export * from './context/restrictions.js';
export * from './events/events.js';
export * from './events/dispatcher.js';
export * from './container/index.js';
export * from './kernel/index.js';
export * from './schema/index.js';
export * from './http/index.js';
export * from './openapi/index.js';
export * from './data/index.js';
export * from './auth/index.js';
export * from './settings/index.js';
export * from './logging/index.js';
export * from './uow/index.js';
export * from './outbox/index.js';
export * from './search/index.js';
export * from './migrations/index.js';
