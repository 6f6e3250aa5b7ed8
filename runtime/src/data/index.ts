export * from './base.js';
export * from './database.js';
export * from './types.js';
export * from './repository.js';
export * from './service.js';
