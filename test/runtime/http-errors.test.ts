import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { appExceptionHandler, ConflictError, ForbiddenError, notFoundHandler, toErrorResponse, useCoreRequest } from '@core/runtime';

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
  app.get<{ Params: { id: string } }>(
    '/items/:id',
    { schema: { params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] } } },
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
    const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': contentType }, payload: '{"a":1}' });
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
    const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'The body is not valid JSON.', data: null, error: { code: 'BAD_REQUEST', details: [] } });
  });

  it('prototype poisoning is refused', async () => {
    const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"__proto__":{"admin":true}}' });
    expect(res.statusCode).toBe(400);
  });

  it('a body over 1 MiB is 413 PAYLOAD_TOO_LARGE', async () => {
    const payload = JSON.stringify({ blob: 'x'.repeat(1024 * 1024) });
    const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('error envelope', () => {
  it('unknown route → 404 NOT_FOUND', async () => {
    const res = await app.inject({ method: 'GET', url: '/nope?token=abc' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'NOT_FOUND' } });
    expect(res.body).not.toContain('token=abc');
  });

  it('params failing their schema → 422 VALIDATION_ERROR with the path', async () => {
    const res = await app.inject({ method: 'GET', url: '/items/not-a-uuid' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'params.id' }] });
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

  it.each(['production', 'development', undefined])('an unexpected error is a bare 500 (ENVIRONMENT=%s)', async (environment) => {
    const previous = process.env.ENVIRONMENT;
    if (environment === undefined) delete process.env.ENVIRONMENT;
    else process.env.ENVIRONMENT = environment;
    try {
      const res = await app.inject({ method: 'GET', url: '/boom' });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ success: false, message: 'Internal server error.', data: null, error: { code: 'INTERNAL_ERROR', details: [] } });
      expect(res.body).not.toMatch(/secret_column|at .*\.ts/);
    } finally {
      process.env.ENVIRONMENT = previous;
    }
  });

  it('toErrorResponse keeps the details of an AppException', () => {
    const { status, body } = toErrorResponse(new ConflictError('Taken.', [{ path: 'title', message: 'must be unique' }]));
    expect(status).toBe(409);
    expect(body.error.details).toEqual([{ path: 'title', message: 'must be unique' }]);
  });
});
