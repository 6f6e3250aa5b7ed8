export * from './base.js';
export * from './database.js';
export * from './types.js';
