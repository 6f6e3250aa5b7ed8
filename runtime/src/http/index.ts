export * from './envelope.js';
export * from './core-request.js';
export * from './error-handler.js';
