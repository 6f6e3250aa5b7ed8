/**
 * `injectFetch(app)`: a `fetch` answered by the app in-process, as the generated tests use it with the
 * typed client. What the request carries reaches the route (method, path and query, headers, body),
 * and what the route answers comes back as a `Response` (status, headers, repeated ones too, body),
 * also through openapi-fetch, and without a port.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { injectFetch } from '@core/runtime';

let app: FastifyInstance;

/** What the echo route answers. */
interface Echo {
  method: string;
  authorization: string | null;
  contentType: string | null;
  body: unknown;
}

/** The echo route as openapi-typescript would type it. */
interface paths {
  '/echo/{name}': {
    post: {
      parameters: { path: { name: string } };
      requestBody: { content: { 'application/json': { n: number } } };
      responses: { 201: { content: { 'application/json': Echo } } };
    };
  };
}

beforeAll(async () => {
  app = Fastify();
  app.all('/echo/*', async (request, reply) => {
    reply.header('set-cookie', ['a=1', 'b=2']).header('x-seen-path', request.url);
    return reply.code(201).send({
      method: request.method,
      authorization: request.headers.authorization ?? null,
      contentType: request.headers['content-type'] ?? null,
      body: request.body ?? null,
    });
  });
  app.delete('/empty', async (_request, reply) => reply.code(204).send());
  app.get('/text', async (_request, reply) => reply.type('text/plain').send('plain'));
  await app.ready();
});

afterAll(async () => {
  await app.close();
});

describe('injectFetch', () => {
  it('hands the method, path, query, headers and JSON body to the route, and returns its answer', async () => {
    const fetch = injectFetch(app);
    const response = await fetch(
      new Request('http://ignored.example/echo/a%20b?x=1&y=2', {
        method: 'PATCH',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Typed' }),
      }),
    );
    expect(response.status).toBe(201);
    expect(response.headers.get('x-seen-path')).toBe('/echo/a%20b?x=1&y=2');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      method: 'PATCH',
      authorization: 'Bearer t',
      contentType: 'application/json',
      body: { title: 'Typed' },
    });
  });

  it('sends no body when the request has none', async () => {
    const response = await injectFetch(app)(new Request('http://localhost/echo/get'));
    expect(await response.json()).toMatchObject({ method: 'GET', body: null, contentType: null });
  });

  it('answers a 204 and a HEAD without a body, and other content types as they are', async () => {
    const fetch = injectFetch(app);
    const empty = await fetch(new Request('http://localhost/empty', { method: 'DELETE' }));
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const head = await fetch(new Request('http://localhost/text', { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(await (await fetch(new Request('http://localhost/text'))).text()).toBe('plain');
  });

  it('refuses a method Fastify does not serve', async () => {
    await expect(injectFetch(app)(new Request('http://localhost/echo/x', { method: 'BREW' }))).rejects.toThrow(
      'injectFetch: BREW is not an HTTP method Fastify serves',
    );
  });

  it('serves openapi-fetch as its fetch: the request it builds, the answer it parses', async () => {
    const client = createClient<paths>({ baseUrl: 'http://localhost', fetch: injectFetch(app) });
    const { data, response } = await client.POST('/echo/{name}', {
      params: { path: { name: 'client' } },
      body: { n: 1 },
      headers: { authorization: 'Bearer c' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-seen-path')).toBe('/echo/client');
    expect(data).toEqual({
      method: 'POST',
      authorization: 'Bearer c',
      contentType: 'application/json',
      body: { n: 1 },
    });
  });
});
