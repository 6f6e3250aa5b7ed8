export * from './base.js';
export * from './database.js';
