import { ERROR_CODES, type ErrorCode } from '../errors.js';
import type { ResourceOperation } from '../http/route-doc.js';

/**
 * What a route does that decides which errors it can answer. Each fact stands for code paths of the
 * runtime, so the statuses below are the ones those paths raise:
 * - `guarded`: `assertPermission` before the handler → 401 (no or bad credential), 403 (not granted);
 *   a row filter refusing a write is a 403 too;
 * - `byId`: the `{id}` parameter → 404 (no such row, or one outside the caller's row filter), 414 (over
 *   the router's parameter length), 422 (not a valid id);
 * - `body`: a JSON body read by Core's parser → 400 (not JSON), 413 (over the limit), 415 (not
 *   `application/json`), 422 (fails the schema);
 * - `conditional`: `If-Match` honoured → 412;
 * - `writes`: a unit of work that can violate a unique or foreign key → 409;
 * - `query`: validated query parameters (`limit`, `cursor`, `include`) → 422;
 * - `paths`: relation paths or fields named by the caller (`include`, search filters and sorts) → 403
 *   for a restricted one, 422 for an unknown one.
 * Every route can also answer 400 (a URL that is not valid percent-encoding), 500 and 503.
 */
export interface RouteFacts {
  readonly guarded: boolean;
  readonly byId: boolean;
  readonly body: boolean;
  readonly conditional: boolean;
  readonly writes: boolean;
  readonly query: boolean;
  readonly paths: boolean;
}

const OPERATION_FACTS: Record<ResourceOperation, Omit<RouteFacts, 'guarded'>> = {
  create: { byId: false, body: true, conditional: false, writes: true, query: false, paths: false },
  get: { byId: true, body: false, conditional: false, writes: false, query: true, paths: true },
  replace: { byId: true, body: true, conditional: true, writes: true, query: false, paths: false },
  update: { byId: true, body: true, conditional: true, writes: true, query: false, paths: false },
  delete: { byId: true, body: false, conditional: true, writes: true, query: false, paths: false },
  list: { byId: false, body: false, conditional: false, writes: false, query: true, paths: true },
  search: { byId: false, body: true, conditional: false, writes: false, query: false, paths: true },
};

export function resourceFacts(operation: ResourceOperation, guarded: boolean): RouteFacts {
  return { ...OPERATION_FACTS[operation], guarded };
}

/** A Core route the document knows nothing more of than its guard (a router's own extra routes). */
export function customFacts(guarded: boolean): RouteFacts {
  return { guarded, byId: false, body: false, conditional: false, writes: false, query: false, paths: false };
}

/** The error codes a route with these facts can answer, in status order. */
export function errorCodesOf(facts: RouteFacts): ErrorCode[] {
  const codes = new Set<ErrorCode>(['BAD_REQUEST', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE']);
  if (facts.guarded) codes.add('UNAUTHENTICATED').add('FORBIDDEN');
  if (facts.byId) codes.add('NOT_FOUND').add('URI_TOO_LONG').add('VALIDATION_ERROR');
  if (facts.body) codes.add('PAYLOAD_TOO_LARGE').add('UNSUPPORTED_MEDIA_TYPE').add('VALIDATION_ERROR');
  if (facts.conditional) codes.add('PRECONDITION_FAILED');
  if (facts.writes) codes.add('CONFLICT');
  if (facts.query) codes.add('VALIDATION_ERROR');
  if (facts.paths) codes.add('FORBIDDEN').add('VALIDATION_ERROR');
  return [...codes].sort((a, b) => ERROR_CODES[a].status - ERROR_CODES[b].status);
}

/** The name of the reusable response of an error code: `NOT_FOUND` → `NotFound`. */
export function errorResponseName(code: ErrorCode): string {
  return code
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}
