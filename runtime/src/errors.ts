/**
 * Every error Core raises on purpose, in one table: code → HTTP status and default message.
 * A throw site is one line (`throw new ValidationError('…', details)`); `appExceptionHandler`
 * turns any of them into the contract's error envelope. Codes are never reused or renamed.
 */
export const ERROR_CODES = {
  BAD_REQUEST: { status: 400, message: 'The request could not be parsed.' },
  UNAUTHENTICATED: { status: 401, message: 'Missing, invalid or expired credentials.' },
  FORBIDDEN: { status: 403, message: 'You are not allowed to do this.' },
  NOT_FOUND: { status: 404, message: 'Not found.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This method is not allowed here; see the Allow header.' },
  CONFLICT: { status: 409, message: 'The request conflicts with existing data.' },
  PRECONDITION_FAILED: { status: 412, message: 'The record changed since you read it; read it again.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  URI_TOO_LONG: { status: 414, message: 'The URL or one of its parameters is too long.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Send the body as application/json.' },
  VALIDATION_ERROR: { status: 422, message: 'The request is not valid.' },
  INTERNAL_ERROR: { status: 500, message: 'Internal server error.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'A service the request needs is unavailable; try again later.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * One problem inside an error response. `path` says where: a dotted path into the request body
 * (`title`, `filters[1].items[0].field`, `""` for the body itself), `params.<name>`, `query.<name>`
 * or `headers.<name>`, or `url` / `method` for the request line. A detail without one gets its
 * code's default path in the response (see `errorEnvelope`).
 */
export interface ErrorDetail {
  path?: string;
  message: string;
  /** A machine-readable reason, e.g. `unknown_field`, `max_depth`. */
  reason?: string;
}

/** Base application exception: carries a contract error code, its HTTP status and details. */
export class AppException extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: ErrorDetail[];

  constructor(code: ErrorCode, message?: string, details: ErrorDetail[] = [], options?: { cause?: unknown }) {
    super(message ?? ERROR_CODES[code].message, options);
    this.name = new.target.name;
    this.code = code;
    this.statusCode = ERROR_CODES[code].status;
    this.details = details;
  }
}

/** 422: input that fails validation (also raised by the search engine before any SQL). */
export class ValidationError extends AppException {
  constructor(
    message: string = ERROR_CODES.VALIDATION_ERROR.message,
    details: ErrorDetail[] = [],
    options?: { cause?: unknown },
  ) {
    super('VALIDATION_ERROR', message, details, options);
  }
}

/** 403: the action, field or relation path is not permitted in the active context. */
export class ForbiddenError extends AppException {
  constructor(message: string = ERROR_CODES.FORBIDDEN.message, details: ErrorDetail[] = []) {
    super('FORBIDDEN', message, details);
  }
}

/** 404: no such record (or route). */
export class NotFoundError extends AppException {
  constructor(message: string = ERROR_CODES.NOT_FOUND.message, details: ErrorDetail[] = []) {
    super('NOT_FOUND', message, details);
  }
}

/**
 * 405: the URL exists, but not for this method. `allow` lists the methods it does serve, sent as the
 * `Allow` header.
 */
export class MethodNotAllowedError extends AppException {
  readonly allow: readonly string[];

  constructor(
    allow: readonly string[],
    message: string = ERROR_CODES.METHOD_NOT_ALLOWED.message,
    details: ErrorDetail[] = [],
  ) {
    super('METHOD_NOT_ALLOWED', message, details);
    this.allow = allow;
  }
}

/** 409: a unique or foreign-key constraint was violated. */
export class ConflictError extends AppException {
  constructor(
    message: string = ERROR_CODES.CONFLICT.message,
    details: ErrorDetail[] = [],
    options?: { cause?: unknown },
  ) {
    super('CONFLICT', message, details, options);
  }
}

/** 412: an `If-Match` validator no longer matches the record; nothing was written. */
export class PreconditionFailedError extends AppException {
  constructor(message: string = ERROR_CODES.PRECONDITION_FAILED.message, details: ErrorDetail[] = []) {
    super('PRECONDITION_FAILED', message, details);
  }
}

/** 503: a dependency (database pool, identity provider keys) cannot serve the request now. */
export class ServiceUnavailableError extends AppException {
  /** Seconds a client should wait before trying again, sent as `Retry-After` when known. */
  readonly retryAfter: number | undefined;

  constructor(
    message: string = ERROR_CODES.SERVICE_UNAVAILABLE.message,
    details: ErrorDetail[] = [],
    retryAfter?: number,
  ) {
    super('SERVICE_UNAVAILABLE', message, details);
    this.retryAfter = retryAfter;
  }
}

/** 401: the caller could not be authenticated on a guarded route. */
export class UnauthenticatedError extends AppException {
  constructor(message: string = ERROR_CODES.UNAUTHENTICATED.message, details: ErrorDetail[] = []) {
    super('UNAUTHENTICATED', message, details);
  }
}

/** 400: the request itself is malformed (bad JSON, unparsable parameter). */
export class BadRequestError extends AppException {
  constructor(message: string = ERROR_CODES.BAD_REQUEST.message, details: ErrorDetail[] = []) {
    super('BAD_REQUEST', message, details);
  }
}

/** A JSON pointer (`/filters/1/field`) as a detail path (`filters[1].field`). */
export function pointerToPath(pointer: string): string {
  if (pointer === '' || pointer === '/') return '';
  let path = '';
  for (const raw of pointer.replace(/^\//, '').split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(key)) path += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) path += path ? `.${key}` : key;
    else path += `[${JSON.stringify(key)}]`;
  }
  return path;
}
