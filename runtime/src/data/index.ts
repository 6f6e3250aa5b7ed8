export * from './base.js';
export * from './database.js';
export * from './types.js';
export * from './repository.js';
export * from './service.js';
export { etagOf, ifMatchAccepts, parseIfMatch, type IfMatch } from './etag.js';
export { databaseUnavailable } from './unavailable.js';
