export * from '../model/base.js';
export * from '../db/database.js';
export * from '../model/types.js';
export * from './repository.js';
export * from './service.js';
export { etagOf, ifMatchAccepts, parseIfMatch, type IfMatch } from './etag.js';
export { databaseUnavailable } from '../db/unavailable.js';
