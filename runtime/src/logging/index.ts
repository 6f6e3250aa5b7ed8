export { REDACTED, redactHeaders, setupLogging, stripQuery } from './setup.js';
export type { CoreLoggerOptions, LogLevel, SetupLoggingOptions } from './setup.js';
export { RequestLogMiddleware } from './request-log.js';
export { CoreLogController } from './log-controller.js';
