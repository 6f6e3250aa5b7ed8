/**
 * `injectFetch(app)`: a `fetch` that the app answers in-process, through Fastify's `inject` (no port,
 * no socket), so a test can call the app through its typed client (`core client`):
 *
 *   const api = createApiClient({ baseUrl: 'http://localhost', fetch: injectFetch(app) });
 *
 * The request's method, path and query, headers and body go to `inject`; its status, headers and body
 * come back as a `Response`. The host of the URL is not used.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';

/** A `fetch` for one `Request`: what openapi-fetch's `createClient({ fetch })` takes. */
export type InjectFetch = (request: Request) => Promise<Response>;

type InjectMethod = NonNullable<InjectOptions['method']>;

/** Statuses `new Response()` refuses a body for. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export function injectFetch(app: FastifyInstance): InjectFetch {
  const isMethod = (method: string): method is InjectMethod => app.supportedMethods.includes(method);
  return async (request) => {
    if (!isMethod(request.method))
      throw new TypeError(`injectFetch: ${request.method} is not an HTTP method Fastify serves`);
    const url = new URL(request.url);
    const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const res = await app.inject({
      method: request.method,
      url: `${url.pathname}${url.search}`,
      headers: Object.fromEntries(request.headers),
      ...(body === undefined ? {} : { payload: body }),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) headers.append(name, String(item));
    }
    const empty = NULL_BODY_STATUSES.has(res.statusCode) || request.method === 'HEAD';
    return new Response(empty ? null : res.rawPayload, {
      status: res.statusCode,
      statusText: res.statusMessage,
      headers,
    });
  };
}
