import { ForbiddenError, ValidationError } from '../errors.js';

/**
 * Why a search request was refused, as a machine-readable `reason` in the error detail. The detail's
 * `path` is the JSON path inside the request (`filters[1].items[0].field`).
 */
export type IssueReason =
  | 'invalid_request'
  | 'required'
  | 'max_depth'
  | 'too_many_filters'
  | 'too_many_values'
  | 'too_many_sort_keys'
  | 'too_many_includes'
  | 'too_many_joins'
  | 'value_too_long'
  | 'path_too_deep'
  | 'unknown_field'
  | 'unknown_relation'
  | 'unknown_operator'
  | 'invalid_operator'
  | 'invalid_value'
  | 'invalid_sort'
  | 'invalid_limit'
  | 'invalid_offset'
  | 'invalid_cursor'
  | 'cursor_mismatch'
  | 'include_too_large'
  | 'restricted';

export function invalid(path: string, message: string, reason: IssueReason): ValidationError {
  return new ValidationError(`${path}: ${message}`, [{ path, message, reason }]);
}

export function forbidden(path: string, target: string): ForbiddenError {
  const message = `'${target}' is restricted for the current user: remove it from the request`;
  return new ForbiddenError(`${path}: ${message}`, [{ path, message, reason: 'restricted' }]);
}

/** Short, safe rendering of a received value for an error message. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string')
    return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  return `${typeof value} ${String(value)}`;
}
