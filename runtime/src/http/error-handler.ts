import {
  ConstraintViolationException,
  ForeignKeyConstraintViolationException,
  NotNullConstraintViolationException,
  UniqueConstraintViolationException,
} from '@mikro-orm/core';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppException, ERROR_CODES, type ErrorCode, type ErrorDetail } from '../errors.js';
import { errorEnvelope, type ErrorEnvelope } from './envelope.js';

/** Fastify's own request errors, by code, mapped onto the contract's table. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_BAD_URL: 'BAD_REQUEST',
  FST_ERR_NOT_FOUND: 'NOT_FOUND',
};

const STATUS_CODES: Partial<Record<number, ErrorCode>> = Object.fromEntries(
  Object.entries(ERROR_CODES).map(([code, { status }]) => [status, code as ErrorCode]),
);

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

export interface ErrorResponse {
  status: number;
  body: ErrorEnvelope;
}

/**
 * Turns anything thrown during a request into the contract's status and error envelope. Pure, so the
 * mapping is testable without a server. Nothing internal (stack, SQL, driver message) ever reaches the
 * body — an unexpected error is a bare 500 and its details go to the log — and a constraint violation
 * never echoes the offending value.
 */
export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof AppException) {
    return { status: error.statusCode, body: errorEnvelope(error.code, error.message, error.details) };
  }
  if (error instanceof ConstraintViolationException) {
    return { status: 409, body: errorEnvelope('CONFLICT', constraintMessage(error)) };
  }
  const fastifyError = error as Partial<FastifyError> & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    const where = fastifyError.validationContext ?? 'request';
    const details: ErrorDetail[] = fastifyError.validation.map((issue) => ({
      path: validationPath(where, issue),
      message: issue.message ?? 'is invalid',
    }));
    return { status: 422, body: errorEnvelope('VALIDATION_ERROR', `The ${where} is not valid.`, details) };
  }
  const mapped = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  const status = fastifyError.statusCode;
  const code = mapped ?? (status && status >= 400 && status < 500 ? (STATUS_CODES[status] ?? 'BAD_REQUEST') : undefined);
  if (code) return { status: ERROR_CODES[code].status, body: errorEnvelope(code) };
  return { status: 500, body: errorEnvelope('INTERNAL_ERROR') };
}

function validationPath(where: string, issue: ValidationIssue): string {
  const missing = issue.params?.missingProperty;
  const pointer = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const tail = typeof missing === 'string' ? (pointer ? `${pointer}.${missing}` : missing) : pointer;
  return tail ? `${where}.${tail}` : where;
}

function constraintMessage(error: ConstraintViolationException): string {
  if (error instanceof UniqueConstraintViolationException) return 'A record with the same unique value already exists.';
  if (error instanceof ForeignKeyConstraintViolationException) return 'The record is referenced by, or refers to, a record that does not allow this.';
  if (error instanceof NotNullConstraintViolationException) return 'A required value is missing.';
  return ERROR_CODES.CONFLICT.message;
}

/**
 * Fastify error handler for Core apps (`app.setErrorHandler(appExceptionHandler)`): the contract's
 * envelope and status for every error. A 5xx is logged with the full error (in development the pretty
 * log shows it at once); its body stays generic in every environment — failing closed, so no
 * configuration mistake can put internals in a response.
 */
export function appExceptionHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = toErrorResponse(error);
  if (status >= 500) request.log.error({ err: error }, 'request failed');
  void reply.code(status).type('application/json; charset=utf-8').send(body);
}

/** 404 for unknown routes, in the same envelope. */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  void reply
    .code(404)
    .type('application/json; charset=utf-8')
    .send(errorEnvelope('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}.`));
}
