import { readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import {
  appExceptionHandler,
  ConflictError,
  ERROR_CODES,
  ErrorEnvelopeSchema,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
  toErrorResponse,
  useCoreErrors,
  useCoreRequest,
} from '@core/runtime';
import { notFoundHandler } from '../../runtime/src/http/error-handler.js';

let app: FastifyInstance;
const seen: { body: unknown; raw: string | undefined }[] = [];

beforeAll(async () => {
  app = Fastify({ bodyLimit: 1024 * 1024 });
  useCoreRequest(app);
  app.setErrorHandler(appExceptionHandler);
  app.setNotFoundHandler(notFoundHandler);
  app.post('/echo', async (request) => {
    seen.push({ body: request.body, raw: request.rawBody?.toString('utf8') });
    return { ok: true };
  });
  app.get('/boom', async () => {
    throw new Error('select secret_column from users -- internal detail');
  });
  app.get('/forbidden', async () => {
    throw new ForbiddenError();
  });
  app.get('/unique', async () => {
    throw new UniqueConstraintViolationException(new Error('duplicate key value (email)=(alice@example.com)'));
  });
  app.get(
    '/query',
    { schema: { querystring: { type: 'object', properties: { limit: { type: 'integer' } }, required: ['limit'] } } },
    async () => ({ ok: true }),
  );
  app.post(
    '/typed',
    {
      schema: {
        body: {
          type: 'object',
          properties: { items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } } },
        },
      },
    },
    async () => ({ ok: true }),
  );
  app.get<{ Params: { id: string } }>(
    '/items/:id',
    {
      schema: { params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] } },
    },
    async () => ({ ok: true }),
  );
  await app.ready();
});
afterAll(() => app.close());

describe('request bodies: parse → (prune → validate) is the only way in', () => {
  it.each([
    ['application/json', 200],
    ['Application/JSON', 200],
    ['application/json; charset=utf-8', 200],
    ['application/json ;x', 200],
    ['application/json\t;charset=utf-8', 200],
    ['\tapplication/json', 200],
    ['application/json, text/plain', 415],
    ['text/plain', 415],
    ['application/x-www-form-urlencoded', 415],
    ['application/jsonx', 415],
  ])('Content-Type %s → %i', async (contentType, status) => {
    const res = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': contentType },
      payload: '{"a":1}',
    });
    expect(res.statusCode).toBe(status);
    if (status === 415) expect(res.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('keeps the raw bytes for every later reader', async () => {
    seen.length = 0;
    const payload = '{ "title" : "raw ✓" }';
    await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload });
    expect(seen[0]).toEqual({ body: { title: 'raw ✓' }, raw: payload });
  });

  it('malformed JSON is 400 BAD_REQUEST', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"a":',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      message: 'The body is not valid JSON.',
      data: null,
      error: {
        code: 'BAD_REQUEST',
        details: [{ path: '', message: 'The body is not valid JSON.', reason: 'invalid_json' }],
      },
    });
  });

  it('prototype poisoning is refused', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"__proto__":{"admin":true}}',
    });
    expect(res.statusCode).toBe(400);
  });

  it('a body over 1 MiB is 413 PAYLOAD_TOO_LARGE', async () => {
    const payload = JSON.stringify({ blob: 'x'.repeat(1024 * 1024) });
    const res = await app.inject({
      method: 'POST',
      url: '/echo',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('error envelope', () => {
  it('unknown route → 404 NOT_FOUND, the URL not quoted', async () => {
    const res = await app.inject({ method: 'GET', url: '/nope-here?token=abc' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({
      success: false,
      data: null,
      error: { code: 'NOT_FOUND', details: [{ path: 'url', reason: 'unknown_route' }] },
    });
    expect(res.body).not.toMatch(/nope-here|token|abc/);
  });

  it('a path served for other methods → 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const res = await app.inject({ method: 'DELETE', url: '/echo' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.json().error).toEqual({
      code: 'METHOD_NOT_ALLOWED',
      details: [{ path: 'method', message: 'This URL serves POST.', reason: 'method_not_allowed' }],
    });
    const items = await app.inject({ method: 'PUT', url: '/items/00000000-0000-4000-8000-000000000000' });
    expect(items.statusCode).toBe(405);
    expect(items.headers.allow).toBe('GET, HEAD');
  });

  it.each([
    ['/items/not-a-uuid', { path: 'params.id', message: 'must match format "uuid"', reason: 'format' }],
    ['/query?limit=many', { path: 'query.limit', message: 'must be integer', reason: 'type' }],
    ['/query', { path: 'query.limit', message: "must have required property 'limit'", reason: 'required' }],
  ])('%s failing its schema → 422 VALIDATION_ERROR with the path', async (url, detail) => {
    const res = await app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toEqual({ code: 'VALIDATION_ERROR', details: [detail] });
  });

  it('a body failing a plain route schema → 422 with a dotted body path', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/typed',
      headers: { 'content-type': 'application/json' },
      payload: '{"items":[{"n":1},{"n":"x"}]}',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.details).toEqual([{ path: 'items[1].n', message: 'must be integer', reason: 'type' }]);
  });

  it('AppException subclasses keep their status and code', async () => {
    const res = await app.inject({ method: 'GET', url: '/forbidden' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('FORBIDDEN');
  });

  it('a unique violation is 409 and never echoes the value', async () => {
    const res = await app.inject({ method: 'GET', url: '/unique' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('CONFLICT');
    expect(res.body).not.toContain('alice@example.com');
  });

  it.each(['production', 'development', undefined])(
    'an unexpected error is a bare 500 (ENVIRONMENT=%s)',
    async (environment) => {
      const previous = process.env.ENVIRONMENT;
      if (environment === undefined) delete process.env.ENVIRONMENT;
      else process.env.ENVIRONMENT = environment;
      try {
        const res = await app.inject({ method: 'GET', url: '/boom' });
        expect(res.statusCode).toBe(500);
        expect(res.json()).toEqual({
          success: false,
          message: 'Internal server error.',
          data: null,
          error: {
            code: 'INTERNAL_ERROR',
            details: [{ path: '', message: 'Internal server error.', reason: 'internal_error' }],
          },
        });
        expect(res.body).not.toMatch(/secret_column|at .*\.ts/);
      } finally {
        process.env.ENVIRONMENT = previous;
      }
    },
  );

  it('toErrorResponse keeps the details of an AppException', () => {
    const { status, body } = toErrorResponse(
      new ConflictError('Taken.', [{ path: 'title', message: 'must be unique' }]),
    );
    expect(status).toBe(409);
    expect(body.error.details).toEqual([{ path: 'title', message: 'must be unique' }]);
  });

  it.each([
    [new NotFoundError(), 'url'],
    [new ForbiddenError('No.', [{ message: 'No.', reason: 'permission_denied' }]), 'headers.authorization'],
    [new ConflictError(), ''],
    [new ServiceUnavailableError(), ''],
    [new MethodNotAllowedError(['GET']), 'method'],
  ])('a detail without a path gets its code default: %s → %j', (error, path) => {
    const { body } = toErrorResponse(error);
    expect(Value.Check(ErrorEnvelopeSchema, body)).toBe(true);
    expect(body.error.details.map((d) => d.path)).toEqual([path]);
  });

  it('toErrorResponse gives the headers a status calls for', () => {
    expect(toErrorResponse(new MethodNotAllowedError(['GET', 'HEAD'])).headers).toEqual({ allow: 'GET, HEAD' });
    expect(toErrorResponse(new ServiceUnavailableError(undefined, [], 2.5)).headers).toEqual({ 'retry-after': '3' });
    expect(toErrorResponse(new ServiceUnavailableError()).headers).toBeUndefined();
  });
});

describe('useCoreErrors on a bare Fastify app', () => {
  let bare: FastifyInstance;
  beforeAll(async () => {
    bare = Fastify();
    await bare.register(async (scope) => {
      useCoreErrors(scope);
      scope.get('/things/:id', async () => ({ ok: true }));
    });
    await bare.ready();
  });
  afterAll(() => bare.close());

  it('answers an over-long parameter 414 URI_TOO_LONG naming it, without quoting it', async () => {
    const res = await bare.inject({ method: 'GET', url: `/things/${'w'.repeat(101)}` });
    expect(res.statusCode).toBe(414);
    expect(res.json().error).toEqual({
      code: 'URI_TOO_LONG',
      details: [{ path: 'params.id', message: 'params.id is longer than 100 characters.', reason: 'too_long' }],
    });
    expect(res.body).not.toContain('www');
    expect((await bare.inject({ method: 'GET', url: `/things/${'w'.repeat(100)}` })).statusCode).toBe(200);
  });

  it('answers a URL that is not valid percent-encoding 400 BAD_REQUEST at `url`', async () => {
    const res = await bare.inject({ method: 'GET', url: '/things/%zz-secret' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'BAD_REQUEST', details: [{ path: 'url', reason: 'invalid_url' }] });
    expect(res.body).not.toContain('secret');
  });

  it("keeps an app's own frameworkErrors", async () => {
    const own = Fastify({
      frameworkErrors: (_error, _request, reply) => void (reply as FastifyReply).code(400).send('own'),
    });
    useCoreErrors(own);
    own.get('/x/:id', async () => 'ok');
    const res = await own.inject({ method: 'GET', url: `/x/${'w'.repeat(101)}` });
    expect(res.body).toBe('own');
    await own.close();
  });
});

describe.each([
  ['README.md', '## HTTP in one screen'],
  ['docs/http.md', '## Statuses'],
])('the status table of %s', (file, heading) => {
  const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  const start = text.indexOf(heading);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end === -1 ? undefined : end);
  const rows = [...section.matchAll(/^\| (\d{3}) \| `([A-Z_]+)` \|/gm)].map(([, status, code]) => [
    Number(status),
    code,
  ]);

  it('lists exactly the statuses and codes of ERROR_CODES', () => {
    expect(start).toBeGreaterThan(-1);
    const table = Object.entries(ERROR_CODES).map(([code, { status }]) => [status, code]);
    expect(rows.sort()).toEqual(table.sort());
  });
});
