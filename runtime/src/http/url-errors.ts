import { AppException, type ErrorDetail } from '../errors.js';

/**
 * Where each key a service checks came from in the URL, by the key's name: `{ limit: 'query.limit' }`.
 * A detail about that key, or about anything inside it (`include[2]`), is reported at the URL part.
 */
export type UrlPlaces = Readonly<Record<string, string>>;

/** The list route: the page and include keys the search engine checks come from the query string. */
export const LIST_QUERY: UrlPlaces = {
  limit: 'query.limit',
  offset: 'query.offset',
  cursor: 'query.cursor',
  include: 'query.include',
};
/** The get route: the id from the path, the includes from the query string. */
export const VIEW_URL: UrlPlaces = { id: 'params.id', include: 'query.include' };
/** Routes that take only the id from the URL. */
export const ID_PARAM: UrlPlaces = { id: 'params.id' };

/**
 * `error` with its details moved to where the client sent the value, for a service call whose input
 * was read from the URL: `catch (error) { throw atUrl(error, LIST_QUERY); }`. Services and the search
 * engine name a problem by its key in the request object they were given (`limit`, `include[0]`,
 * `id`), as they do for a search body; on the list and by-id routes that object was built from the
 * query string and the path. An include item is reported as `query.include` (the list is one
 * parameter), the message saying which item (`item 2: …`). A catch rather than a wrapper: the
 * successful request pays nothing.
 */
export function atUrl(error: unknown, places: UrlPlaces): unknown {
  if (error instanceof AppException) relocate(error, places);
  return error;
}

function relocate(error: AppException, places: UrlPlaces): void {
  let first: { from: string; detail: ErrorDetail } | undefined;
  for (const [i, detail] of error.details.entries()) {
    if (detail.path === undefined) continue;
    const key = keyOf(detail.path);
    const to = places[key];
    if (to === undefined) continue;
    const item = /^\[(\d+)\]/.exec(detail.path.slice(key.length));
    const moved: ErrorDetail = {
      ...detail,
      path: to,
      message: item ? `item ${Number(item[1]) + 1}: ${detail.message}` : detail.message,
    };
    error.details[i] = moved;
    first ??= { from: detail.path, detail: moved };
  }
  // The engine's messages start with the path they are about (`include[0]: 'x' is not a relation`).
  if (first && error.message.startsWith(`${first.from}: `))
    error.message = `${first.detail.path}: ${first.detail.message}`;
}

/** The top-level key a detail path names: `include` for `include[1]`, `limit` for `limit`. */
function keyOf(path: string): string {
  const end = path.search(/[.[]/);
  return end === -1 ? path : path.slice(0, end);
}
