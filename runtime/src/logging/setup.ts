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
 * - `authorization`, `cookie`, `set-cookie` and `proxy-authorization` headers are redacted wherever a
 *   `headers` object appears up to two levels deep (`headers`, `upstream.headers`, `err.config.headers`,
 *   also inside arrays and errors) of a log line, and in a child logger's top-level `headers` binding;
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

/** What a credential header is replaced with. */
export const REDACTED = '[Redacted]';

/** Header names that carry credentials, compared case-insensitively. */
const SECRET_HEADERS: ReadonlySet<string> = new Set(['authorization', 'cookie', 'set-cookie', 'proxy-authorization']);

/** Exact pino paths for top-level `headers` in child bindings, in the spellings people write by hand. */
const TOP_LEVEL_SECRET_PATHS = [
  'authorization',
  'cookie',
  'set-cookie',
  'proxy-authorization',
  'Authorization',
  'Cookie',
  'Set-Cookie',
  'Proxy-Authorization',
].map((name) => `headers[${JSON.stringify(name)}]`);

/** How deep below the logged object a `headers` key is still looked for (`a.b.headers`). */
const MAX_HEADERS_DEPTH = 2;

export function setupLogging(options: SetupLoggingOptions): CoreLoggerOptions {
  const base: CoreLoggerOptions = {
    level: options.level ?? 'info',
    // pino's `redact` can only say "under any key" with wildcard paths (`*.headers…`, `*.*.headers…`),
    // and walking those on every line cost 15–20 µs per request (docs/performance.md). `redactHeaders`
    // does that job in one pass over the logged object. pino never passes child-logger bindings to
    // `formatters.log`, so exact `redact` paths (free unless a top-level `headers` key is present)
    // still cover `logger.child({ headers })`.
    formatters: { log: redactHeaders },
    redact: { paths: TOP_LEVEL_SECRET_PATHS, censor: REDACTED },
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

/**
 * Returns `record` with every credential header replaced by `[Redacted]` in any `headers` object at
 * most two levels below it (through plain objects, arrays and errors). Copy-on-write: the caller's
 * objects are never modified, and a record without credentials is returned as is, unallocated.
 * pino runs this before its serializers, so an error keeps its class, message and stack.
 */
export function redactHeaders<T extends object>(record: T): T {
  return scrub(record, 0) as T;
}

function scrub(value: object, depth: number): object {
  let copy: Record<string, unknown> | unknown[] | undefined;
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key];
    if (child === null || typeof child !== 'object') continue;
    let next: object;
    if (key === 'headers') next = scrubHeaders(child);
    else if (depth < MAX_HEADERS_DEPTH && isWalkable(child)) next = scrub(child, depth + 1);
    else continue;
    if (next === child) continue;
    copy ??= shallowCopy(value);
    Object.defineProperty(copy, key, { value: next, writable: true, enumerable: true, configurable: true });
  }
  return copy ?? value;
}

function scrubHeaders(headers: object): object {
  let copy: Record<string, unknown> | undefined;
  for (const name of Object.keys(headers)) {
    if (!SECRET_HEADERS.has(name.toLowerCase())) continue;
    copy ??= { ...(headers as Record<string, unknown>) };
    copy[name] = REDACTED;
  }
  return copy ?? headers;
}

/** Plain objects, arrays and errors; not class instances such as a Fastify reply or a socket. */
function isWalkable(value: object): boolean {
  if (Array.isArray(value) || value instanceof Error) return true;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A copy that keeps the prototype and every own property, enumerable or not, so an `Error` stays an
 * error (message, stack, cause). Properties become configurable so that `scrub` can replace them.
 */
function shallowCopy(value: object): Record<string, unknown> | unknown[] {
  if (Array.isArray(value)) return [...value];
  const descriptors = Object.getOwnPropertyDescriptors(value);
  for (const key of Reflect.ownKeys(descriptors)) descriptors[key as string]!.configurable = true;
  return Object.create(Object.getPrototypeOf(value), descriptors) as Record<string, unknown>;
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
