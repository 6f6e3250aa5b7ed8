import { Type, type Static } from 'typebox';
import { ERROR_CODES, type ErrorCode, type ErrorDetail } from '../errors.js';

/** The success envelope every Core route answers with. */
export interface SuccessEnvelope<T = unknown, Meta = unknown> {
  success: true;
  message: string;
  data: T;
  meta: Meta | null;
}

/** One entry of `error.details` as sent: unlike a thrown `ErrorDetail`, it always has a `path`. */
export interface EnvelopeDetail {
  path: string;
  message: string;
  reason?: string;
}

/** The error envelope: what every error response of a Core app is. */
export interface ErrorEnvelope {
  success: false;
  message: string;
  data: null;
  error: { code: ErrorCode; details: EnvelopeDetail[] };
}

/** `meta` of a paginated list or search response. */
export interface PageMeta {
  limit: number;
  offset: number | null;
  next_cursor: string | null;
  has_more: boolean;
}

/**
 * The error envelope as a JSON Schema, for documents and for checking responses: a code of the error
 * table, at least one detail, a `path` in each.
 */
export const ErrorEnvelopeSchema = Type.Object(
  {
    success: Type.Literal(false),
    message: Type.String({ minLength: 1 }),
    data: Type.Null(),
    error: Type.Object(
      {
        code: Type.Union(Object.keys(ERROR_CODES).map((code) => Type.Literal(code))),
        details: Type.Array(
          Type.Object(
            { path: Type.String(), message: Type.String({ minLength: 1 }), reason: Type.Optional(Type.String()) },
            { additionalProperties: false },
          ),
          { minItems: 1 },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'ErrorEnvelope' },
);

export type ErrorEnvelopeJson = Static<typeof ErrorEnvelopeSchema>;

/**
 * Where a detail points when whoever raised the error did not say: the part of the request each code
 * is about. `""` is the body as a whole, or the request as a whole when no one part of it is at fault.
 */
const DEFAULT_PATHS: Record<ErrorCode, string> = {
  BAD_REQUEST: '',
  UNAUTHENTICATED: 'headers.authorization',
  FORBIDDEN: 'headers.authorization',
  NOT_FOUND: 'url',
  METHOD_NOT_ALLOWED: 'method',
  CONFLICT: '',
  PRECONDITION_FAILED: 'headers.if-match',
  PAYLOAD_TOO_LARGE: '',
  URI_TOO_LONG: 'url',
  UNSUPPORTED_MEDIA_TYPE: 'headers.content-type',
  VALIDATION_ERROR: '',
  INTERNAL_ERROR: '',
  SERVICE_UNAVAILABLE: '',
};

/**
 * The error envelope for `code`. A client can always read `error.details[0].path`: with no details the
 * message becomes the one detail, and a detail without a path gets the code's default path.
 */
export function errorEnvelope(
  code: ErrorCode,
  message: string = ERROR_CODES[code].message,
  details: readonly ErrorDetail[] = [],
): ErrorEnvelope {
  const path = DEFAULT_PATHS[code];
  const sent: EnvelopeDetail[] =
    details.length === 0
      ? [{ path, message }]
      : details.map((detail) => {
          const entry: EnvelopeDetail = { path: detail.path ?? path, message: detail.message };
          if (detail.reason !== undefined) entry.reason = detail.reason;
          return entry;
        });
  return { success: false, message, data: null, error: { code, details: sent } };
}
