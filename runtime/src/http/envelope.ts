import { ERROR_CODES, type ErrorCode, type ErrorDetail } from '../errors.js';

/** The success envelope every Core route answers with. */
export interface SuccessEnvelope<T = unknown, Meta = unknown> {
  success: true;
  message: string;
  data: T;
  meta: Meta | null;
}

/** The error envelope (contract §7). */
export interface ErrorEnvelope {
  success: false;
  message: string;
  data: null;
  error: { code: ErrorCode; details: ErrorDetail[] };
}

/** `meta` of a paginated list or search response. */
export interface PageMeta {
  limit: number;
  offset: number | null;
  next_cursor: string | null;
  has_more: boolean;
}

export function errorEnvelope(code: ErrorCode, message: string = ERROR_CODES[code].message, details: ErrorDetail[] = []): ErrorEnvelope {
  return { success: false, message, data: null, error: { code, details } };
}
