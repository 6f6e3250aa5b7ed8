/**
 * The logging surface the runtime writes to. Pino's logger (and therefore Fastify's) satisfies it, so
 * apps pass `app.log` or `setupLogging()`'s logger; tests pass a recorder.
 */
export interface Logger {
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

/** Discards everything. The default until an app wires its logger. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
