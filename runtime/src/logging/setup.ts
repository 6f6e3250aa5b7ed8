import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FastifyRequest, FastifyServerOptions } from 'fastify';

/**
 * `setupLogging()` returns **logger options for Fastify** (pass them as `Fastify({ logger })`), not a
 * pino instance: Fastify then owns the one pino logger, `app.log` and every `request.log` child
 * (which carries `reqId`), and the runtime needs no direct pino dependency.
 *
 * - outside development: JSON lines on stdout (or on `stream`);
 * - in development: pino-pretty when it is installed (it is a devDependency of generated apps),
 *   JSON otherwise;
 * - `authorization`, `cookie` and `set-cookie` headers are redacted wherever a headers object appears
 *   up to two levels deep (`req.headers`, `err.config.headers`, …);
 * - the `req` serializer drops the query string from `url`: a query can carry a token.
 *
 * Pair it with `logController: new CoreLogController()` and `RequestLogMiddleware` (one line per request):
 *
 *   const app = Fastify({ logger: setupLogging({ environment, level }), logController: new CoreLogController() });
 *   await app.register(RequestLogMiddleware);
 */
export type CoreLoggerOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>;

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface SetupLoggingOptions {
  /** `ENVIRONMENT`; `development` turns on pretty output. */
  environment: string;
  /** Minimum level; default `info`. */
  level?: LogLevel;
  /** Write JSON lines here instead of stdout (tests, custom sinks). Always JSON, never pretty. */
  stream?: { write(line: string): void };
}

/** Header names that carry credentials; written as they may appear in hand-built objects too. */
const SECRET_HEADERS = ['authorization', 'cookie', 'set-cookie', 'proxy-authorization', 'Authorization', 'Cookie', 'Set-Cookie'];

/** Redaction paths for pino: `headers.x`, `*.headers.x`, `*.*.headers.x` for every secret header. */
export const REDACTED_PATHS: readonly string[] = Object.freeze(
  ['', '*.', '*.*.'].flatMap((prefix) => SECRET_HEADERS.map((name) => `${prefix}headers[${JSON.stringify(name)}]`)),
);

export function setupLogging(options: SetupLoggingOptions): CoreLoggerOptions {
  const base: CoreLoggerOptions = {
    level: options.level ?? 'info',
    redact: { paths: [...REDACTED_PATHS], censor: '[Redacted]' },
    serializers: { req: serializeRequest },
  };
  if (options.stream !== undefined) return { ...base, stream: options.stream };
  if (options.environment === 'development') {
    const pretty = resolvePinoPretty();
    if (pretty !== null) {
      return {
        ...base,
        transport: { target: pretty, options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
      };
    }
  }
  return base;
}

/** Fastify's request serializer, minus the query string. */
function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: stripQuery(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** `/tasks?access_token=…` → `/tasks`. */
export function stripQuery(url: string): string {
  const cut = url.search(/[?#]/);
  return cut < 0 ? url : url.slice(0, cut);
}

/**
 * Absolute path of pino-pretty, looked up from the app (cwd) first, then from this package; null when
 * it is not installed (e.g. a production install run with ENVIRONMENT=development). Resolving here
 * also spares pino's own lookup, which starts from whichever file created the logger.
 */
function resolvePinoPretty(): string | null {
  for (const from of [join(process.cwd(), 'package.json'), import.meta.url]) {
    try {
      return createRequire(from).resolve('pino-pretty');
    } catch {
      // try the next location
    }
  }
  return null;
}
