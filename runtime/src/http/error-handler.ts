import {
  ConstraintViolationException,
  ForeignKeyConstraintViolationException,
  NotNullConstraintViolationException,
  UniqueConstraintViolationException,
} from '@mikro-orm/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import {
  AppException,
  ERROR_CODES,
  MethodNotAllowedError,
  NotFoundError,
  pointerToPath,
  ServiceUnavailableError,
  type ErrorCode,
  type ErrorDetail,
} from '../errors.js';
import { databaseUnavailable } from '../db/unavailable.js';
import { errorEnvelope, type ErrorEnvelope } from './envelope.js';

interface FastifyMapping {
  code: ErrorCode;
  path: string;
  reason: string;
  message: string;
}

/**
 * Fastify's own request errors, by code, onto the error table. Their messages are replaced: some quote
 * the URL they refused.
 */
const FASTIFY_CODES: Record<string, FastifyMapping> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    code: 'PAYLOAD_TOO_LARGE',
    path: '',
    reason: 'too_large',
    message: 'The body is over the size limit.',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    path: 'headers.content-type',
    reason: 'unsupported_media_type',
    message: 'Send the body as application/json.',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'BAD_REQUEST',
    path: 'headers.content-length',
    reason: 'invalid_content_length',
    message: 'Content-Length does not match the body.',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: 'BAD_REQUEST',
    path: '',
    reason: 'empty_body',
    message: 'The body is empty; send a JSON document.',
  },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    code: 'BAD_REQUEST',
    path: '',
    reason: 'invalid_json',
    message: 'The body is not valid JSON.',
  },
  FST_ERR_BAD_URL: {
    code: 'BAD_REQUEST',
    path: 'url',
    reason: 'invalid_url',
    message: 'The URL is not validly percent-encoded.',
  },
  FST_ERR_INVALID_URL: { code: 'BAD_REQUEST', path: 'url', reason: 'invalid_url', message: 'The URL is not valid.' },
  FST_ERR_MAX_PARAM_LENGTH: {
    code: 'URI_TOO_LONG',
    path: 'url',
    reason: 'too_long',
    message: 'A part of the URL is too long.',
  },
  FST_ERR_NOT_FOUND: { code: 'NOT_FOUND', path: 'url', reason: 'unknown_route', message: 'No route matches this URL.' },
  FST_ERR_HANDLER_TIMEOUT: {
    code: 'SERVICE_UNAVAILABLE',
    path: '',
    reason: 'timeout',
    message: 'The request took too long; try again later.',
  },
};

const STATUS_CODES: Partial<Record<number, ErrorCode>> = Object.fromEntries(
  Object.entries(ERROR_CODES).map(([code, { status }]) => [status, code as ErrorCode]),
);

/** Where Fastify's schema validation ran, as the first part of a detail path. */
const VALIDATION_PLACES: Record<string, { prefix: string; what: string }> = {
  body: { prefix: '', what: 'The request body is not valid.' },
  params: { prefix: 'params', what: 'The URL parameters are not valid.' },
  querystring: { prefix: 'query', what: 'The query string is not valid.' },
  headers: { prefix: 'headers', what: 'The request headers are not valid.' },
};

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

export interface ErrorResponse {
  status: number;
  body: ErrorEnvelope;
  /** Headers the status calls for: `Allow` with a 405, `Retry-After` with a 503 that knows when. */
  headers?: Record<string, string>;
}

/**
 * Turns anything thrown during a request into a status of the error table and the error envelope.
 * Pure, so the mapping is testable without a server. Nothing internal (stack, SQL, driver message)
 * ever reaches the body — an unexpected error is a bare 500 and its details go to the log — and a
 * constraint violation never echoes the offending value.
 */
export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof AppException) {
    const response: ErrorResponse = {
      status: error.statusCode,
      body: errorEnvelope(error.code, error.message, error.details),
    };
    if (error instanceof MethodNotAllowedError) response.headers = { allow: error.allow.join(', ') };
    if (error instanceof ServiceUnavailableError && error.retryAfter !== undefined) {
      response.headers = { 'retry-after': String(Math.max(0, Math.ceil(error.retryAfter))) };
    }
    return response;
  }
  if (error instanceof ConstraintViolationException) {
    return { status: 409, body: errorEnvelope('CONFLICT', constraintMessage(error)) };
  }
  // A busy, slow or unreachable database is a 503 with Retry-After, not an internal error.
  const unavailable = databaseUnavailable(error);
  if (unavailable) return toErrorResponse(unavailable);
  const fastifyError = error as Partial<FastifyError> & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation))
    return validationResponse(fastifyError.validation, fastifyError.validationContext);

  const mapped = fastifyError.code === undefined ? undefined : FASTIFY_CODES[fastifyError.code];
  if (mapped)
    return response(mapped.code, mapped.message, [
      { path: mapped.path, message: mapped.message, reason: mapped.reason },
    ]);
  // Another plugin's error: its status if the table has it (a 4xx it does not have is a 400; a 503
  // stays one), never its message, which may quote the input. Any other 5xx is an internal error.
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500)
    return response(STATUS_CODES[status] ?? 'BAD_REQUEST');
  if (status === 503) return response('SERVICE_UNAVAILABLE');
  return response('INTERNAL_ERROR', undefined, [
    { path: '', message: ERROR_CODES.INTERNAL_ERROR.message, reason: 'internal_error' },
  ]);
}

function response(code: ErrorCode, message?: string, details?: ErrorDetail[]): ErrorResponse {
  return { status: ERROR_CODES[code].status, body: errorEnvelope(code, message, details) };
}

function validationResponse(issues: ValidationIssue[], context: string | undefined): ErrorResponse {
  const place = VALIDATION_PLACES[context ?? 'body'] ?? VALIDATION_PLACES.body!;
  const details: ErrorDetail[] = issues.map((issue) => {
    const missing = issue.params?.missingProperty;
    let tail = pointerToPath(issue.instancePath ?? '');
    if (typeof missing === 'string') tail = tail ? `${tail}.${missing}` : missing;
    const path = place.prefix && tail ? `${place.prefix}.${tail}` : place.prefix || tail;
    const detail: ErrorDetail = { path, message: issue.message ?? 'is invalid' };
    if (issue.keyword !== undefined) detail.reason = issue.keyword;
    return detail;
  });
  return response('VALIDATION_ERROR', place.what, details);
}

function constraintMessage(error: ConstraintViolationException): string {
  if (error instanceof UniqueConstraintViolationException) return 'A record with the same unique value already exists.';
  if (error instanceof ForeignKeyConstraintViolationException)
    return 'The record is referenced by, or refers to, a record that does not allow this.';
  if (error instanceof NotNullConstraintViolationException) return 'A required value is missing.';
  return ERROR_CODES.CONFLICT.message;
}

/**
 * Fastify error handler for Core apps (`app.setErrorHandler(appExceptionHandler)`): the error table's
 * status and the envelope for every error. A 5xx is logged with the full error (in development the
 * pretty log shows it at once); its body stays generic in every environment — failing closed, so no
 * configuration mistake can put internals in a response.
 */
export function appExceptionHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body, headers } = toErrorResponse(error);
  if (status >= 500) request.log.error({ err: error }, 'request failed');
  if (headers !== undefined) void reply.headers(headers);
  void reply.code(status).type('application/json; charset=utf-8').send(body);
}

/**
 * Options of a route Core registers outside `CoreAPIRoute` (docs, OpenAPI, health): hidden from the
 * document, and answering errors in the envelope even when the app sets its error handler after
 * loading the plugin (Fastify copies the handler into each route when the route is registered).
 */
export const CORE_PLAIN_ROUTE = { schema: { hide: true }, errorHandler: appExceptionHandler } as const;

/** Says that a route match does not in fact serve the URL, from the parameters it matched. */
export type MatchFilter = (params: Readonly<Record<string, string | undefined>>) => boolean;

/**
 * The app's answer when no route matched: 405 with `Allow` when the URL is served for other methods
 * (`DELETE /tasks`), else 404. Neither quotes the URL.
 */
export const notFoundHandler = notFoundHandlerIgnoring();

function notFoundHandlerIgnoring(ignore?: MatchFilter): (request: FastifyRequest, reply: FastifyReply) => void {
  return function notFound(request, reply) {
    const allow = allowedMethods(request.server, request.url, ignore);
    // A handler that found nothing and called `reply.callNotFound()` lands here for its own method.
    appExceptionHandler(allow.includes(request.method) ? unknownRoute() : methodNotAllowedOr404(allow), request, reply);
  };
}

/**
 * The methods the app serves at `url`, in Fastify's order. A match with an empty parameter does not
 * count (`/tasks/` matches `/tasks/:id` with an empty id), nor one `ignore` rejects (a by-id route
 * matched by a word its ids can never be, such as `search`).
 */
export function allowedMethods(app: FastifyInstance, url: string, ignore?: MatchFilter): string[] {
  const path = url.split('?', 1)[0]!;
  return app.supportedMethods.filter((method) => {
    const found = app.findRoute({ method: method as HTTPMethods, url: path });
    if (found === null) return false;
    const params = found.params as Record<string, string | undefined>;
    return !Object.values(params).includes('') && !(ignore?.(params) ?? false);
  });
}

/** 405 for a URL served by `allow`; 404 when nothing serves it. */
export function methodNotAllowedOr404(allow: readonly string[]): AppException {
  return allow.length > 0 ? methodNotAllowed(allow) : unknownRoute();
}

function methodNotAllowed(allow: readonly string[]): MethodNotAllowedError {
  const message = `This URL serves ${allow.join(', ')}.`;
  return new MethodNotAllowedError(allow, undefined, [{ path: 'method', message, reason: 'method_not_allowed' }]);
}

function unknownRoute(): NotFoundError {
  const { message, path, reason } = FASTIFY_CODES.FST_ERR_NOT_FOUND!;
  return new NotFoundError(message, [{ path, message, reason }]);
}

/**
 * Fastify's `frameworkErrors` hook for the errors its router raises before any route or hook runs (a URL
 * that is not valid percent-encoding, a path parameter over `maxParamLength`): the envelope instead of
 * Fastify's own body, which quotes the whole URL. A too-long parameter is a 414 naming the parameter.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  appExceptionHandler(error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? uriTooLong(request) : error, request, reply);
}

function uriTooLong(request: FastifyRequest): AppException {
  const app = request.server;
  const max = app.initialConfig.routerOptions?.maxParamLength ?? app.initialConfig.maxParamLength ?? 100;
  // Route the URL again with each over-long segment shortened: the parameters that then hold the
  // stand-in are the ones that were too long.
  const standIn = '_';
  const path = request.url.split('?', 1)[0]!;
  const shortened = path
    .split('/')
    .map((segment) => (segment.length > max ? standIn : segment))
    .join('/');
  const found = app.findRoute({ method: request.method as HTTPMethods, url: shortened });
  const names = Object.entries(found?.params ?? {})
    .filter(([, value]) => value === standIn)
    .map(([name]) => name);
  const details: ErrorDetail[] =
    names.length > 0
      ? names.map((name) => ({
          path: `params.${name}`,
          reason: 'too_long',
          message: `params.${name} is longer than ${max} characters.`,
        }))
      : [{ path: 'url', reason: 'too_long', message: `A part of the URL is longer than ${max} characters.` }];
  return new AppException('URI_TOO_LONG', undefined, details);
}

interface OptionsHolder {
  frameworkErrors?: unknown;
}

/**
 * Answers every error of the app in the envelope, on `app` and its children: the error handler, the
 * not-found handler (404, or 405 with `Allow`; `ignoreMatch` as in `allowedMethods`), and Fastify's
 * router errors (`frameworkErrorHandler`).
 *
 * Fastify reads `frameworkErrors` only from the options the app was created with, and keeps them under
 * an internal symbol; an app that passed `Fastify({ frameworkErrors })` keeps its own. Setting it here
 * means an app gets the 414 and 400 envelopes by updating the runtime, without changing its `main.ts`.
 */
export function useCoreErrors(app: FastifyInstance, options: { ignoreMatch?: MatchFilter } = {}): void {
  app.setErrorHandler(appExceptionHandler);
  app.setNotFoundHandler(options.ignoreMatch ? notFoundHandlerIgnoring(options.ignoreMatch) : notFoundHandler);
  const created = creationOptions(app);
  if (created !== undefined && created.frameworkErrors == null) created.frameworkErrors = frameworkErrorHandler;
}

/** The options object Fastify created the root instance with (children reach it through their prototype). */
function creationOptions(app: FastifyInstance): OptionsHolder | undefined {
  for (
    let instance: object | null = app;
    instance !== null;
    instance = Object.getPrototypeOf(instance) as object | null
  ) {
    const symbol = Object.getOwnPropertySymbols(instance).find((s) => s.description === 'fastify.options');
    if (symbol !== undefined) return (instance as Record<symbol, OptionsHolder | undefined>)[symbol];
  }
  return undefined;
}
