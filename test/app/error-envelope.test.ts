/**
 * One error path for everything: whatever raised an error (Core, Fastify's router or body parser, a
 * plugin, Node), the response is the error envelope — it validates against `ErrorEnvelopeSchema`, its
 * code is the error table's code for the status, every detail has a `path` — and it never quotes the
 * URL. Also the 405s (`Allow`), the 414 for an over-long id, and the paths of 401, 403 and 404.
 *
 * A small `memos` resource with a string primary key shows that `search` stays a valid id where ids are
 * free strings.
 */
import { p } from '@mikro-orm/core';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { expect, it } from 'vitest';
import {
  AppException,
  Base,
  BaseRepository,
  BaseRouter,
  BaseService,
  container,
  ContextSchema,
  CoreAPIRoute,
  defineModel,
  ERROR_CODES,
  ErrorEnvelopeSchema,
  Inject,
  ServiceUnavailableError,
  type SchemaInput,
} from '@core/runtime';
import { describeFixtureApp } from './helpers.js';

class Memo extends Base {
  static override readonly tableName = 'memos';
  declare code: string;
  declare text: string;
}

defineModel(Memo, {
  code: p.string().length(100).primary(),
  text: p.string().length(200),
});

class MemoIn extends ContextSchema {
  static override readonly __model__ = 'memos';
  static override readonly fields = Type.Object({
    code: Type.String({ maxLength: 100 }),
    text: Type.String({ maxLength: 200 }),
  });
}
type MemoInput = SchemaInput<typeof MemoIn>;

class MemoOut extends ContextSchema {
  static override readonly __model__ = 'memos';
  static override readonly fields = Type.Object({ code: Type.String(), text: Type.String() });
}

class MemoRepository extends BaseRepository<Memo, MemoInput, MemoInput> {
  constructor() {
    super({ model: Memo });
  }
}

class MemoService extends BaseService<Memo, MemoInput, MemoInput> {
  constructor(repository = Inject(MemoRepository)) {
    super({ model: Memo, repository });
  }
}

class MemoRouter extends BaseRouter<MemoInput, MemoInput> {
  readonly model = Memo;
  readonly createSchema = MemoIn;
  readonly updateSchema = MemoIn;
  readonly schemaOut = MemoOut;
  readonly service = MemoService;
  readonly prefix = '/memos';
}

/** What a plugin or a dependency may throw from inside a Core route. */
const THROWN: Record<string, () => unknown> = {
  // Fastify's own 5xx errors carry a code and a message naming internals.
  'fastify-500': () =>
    Object.assign(new Error('select secret_column from users'), { code: 'FST_ERR_SOMETHING', statusCode: 500 }),
  'plugin-502': () => Object.assign(new Error('upstream 10.0.0.7:5432 refused'), { statusCode: 502 }),
  'plugin-503': () => Object.assign(new Error('pool of 10.0.0.7 exhausted'), { statusCode: 503 }),
  // A 4xx the table does not have, with a message that quotes the input.
  'plugin-429': () => Object.assign(new Error('too many requests from secret-client-id'), { statusCode: 429 }),
  'unavailable-30': () => new ServiceUnavailableError(undefined, [], 30),
  'unavailable-unknown': () => new ServiceUnavailableError(),
  'bare-app-exception': () => new AppException('CONFLICT'),
  'thrown-string': () => 'a string, not an Error',
};

async function configure(app: FastifyInstance): Promise<void> {
  container.scoped(MemoRepository).scoped(MemoService);
  await app.register(new MemoRouter().router);
  app.route(
    CoreAPIRoute({
      method: 'GET',
      url: '/raise/:kind',
      handler: async (request) => {
        throw THROWN[(request.params as { kind: string }).kind]!();
      },
    }),
  );
}

/** The envelope, exactly as the error table says it must be for this status. */
function expectEnvelope(
  res: LightMyRequestResponse,
  status: number,
  code: string,
): { message: string; details: { path: string; message: string; reason?: string }[] } {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = res.json();
  expect([...Value.Errors(ErrorEnvelopeSchema, body)], res.body).toEqual([]);
  expect(body.error.code).toBe(code);
  expect(ERROR_CODES[body.error.code as keyof typeof ERROR_CODES].status).toBe(status);
  return { message: body.message, details: body.error.details };
}

const ID = '00000000-0000-4000-8000-000000000000';
const LONG = 'q'.repeat(5000);
const JSON_TYPE = { 'content-type': 'application/json' };

describeFixtureApp(
  'every error answers the envelope',
  (ctx) => {
    const cases: {
      what: string;
      method: 'GET' | 'POST' | 'DELETE';
      url: string;
      headers?: Record<string, string>;
      payload?: string;
      status: number;
      code: string;
    }[] = [
      { what: 'an unknown route', method: 'GET', url: '/no-such-route', status: 404, code: 'NOT_FOUND' },
      { what: 'an unknown route under a resource', method: 'GET', url: '/tasks/a/b', status: 404, code: 'NOT_FOUND' },
      {
        what: 'a method the URL does not serve',
        method: 'DELETE',
        url: '/tasks/',
        status: 405,
        code: 'METHOD_NOT_ALLOWED',
      },
      { what: 'a 5,000-character id', method: 'GET', url: `/tasks/${LONG}`, status: 414, code: 'URI_TOO_LONG' },
      {
        what: 'bad percent-encoding under a resource',
        method: 'GET',
        url: '/tasks/%zz',
        status: 400,
        code: 'BAD_REQUEST',
      },
      { what: 'bad percent-encoding elsewhere', method: 'GET', url: '/%E0%A4%A', status: 400, code: 'BAD_REQUEST' },
      {
        what: 'malformed JSON',
        method: 'POST',
        url: '/tasks/',
        headers: JSON_TYPE,
        payload: '{"title":',
        status: 400,
        code: 'BAD_REQUEST',
      },
      // The router's own 404 route reads bodies too.
      {
        what: 'malformed JSON to an unknown route',
        method: 'POST',
        url: '/tasks/a/b',
        headers: JSON_TYPE,
        payload: '{"title":',
        status: 400,
        code: 'BAD_REQUEST',
      },
      {
        what: 'a body that is not JSON',
        method: 'POST',
        url: '/tasks/',
        headers: { 'content-type': 'text/plain' },
        payload: '{"title":"x"}',
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
      },
      {
        what: 'a body over 1 MiB',
        method: 'POST',
        url: '/tasks/',
        headers: JSON_TYPE,
        payload: JSON.stringify({ title: 'x'.repeat(1024 * 1024) }),
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
      },
      { what: 'a missing record', method: 'GET', url: `/tasks/${ID}`, status: 404, code: 'NOT_FOUND' },
      {
        what: 'an id that is not a uuid',
        method: 'GET',
        url: '/tasks/not-a-uuid',
        status: 422,
        code: 'VALIDATION_ERROR',
      },
      {
        what: 'a query parameter of the wrong type',
        method: 'GET',
        url: '/tasks/?limit=many',
        status: 422,
        code: 'VALIDATION_ERROR',
      },
      { what: "Fastify's own 500", method: 'GET', url: '/raise/fastify-500', status: 500, code: 'INTERNAL_ERROR' },
      { what: "a plugin's 502", method: 'GET', url: '/raise/plugin-502', status: 500, code: 'INTERNAL_ERROR' },
      { what: 'a thrown string', method: 'GET', url: '/raise/thrown-string', status: 500, code: 'INTERNAL_ERROR' },
      { what: "a plugin's 503", method: 'GET', url: '/raise/plugin-503', status: 503, code: 'SERVICE_UNAVAILABLE' },
      {
        what: "a plugin's 429, which the table does not have",
        method: 'GET',
        url: '/raise/plugin-429',
        status: 400,
        code: 'BAD_REQUEST',
      },
      {
        what: 'a ServiceUnavailableError',
        method: 'GET',
        url: '/raise/unavailable-unknown',
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
      },
      {
        what: 'an AppException without details',
        method: 'GET',
        url: '/raise/bare-app-exception',
        status: 409,
        code: 'CONFLICT',
      },
    ];
    it.each(cases)(
      '$what → $status $code, in the envelope',
      async ({ method, url, headers, payload, status, code }) => {
        const res = await ctx.request('admin', {
          method,
          url,
          headers: headers ?? {},
          ...(payload === undefined ? {} : { payload }),
        });
        expectEnvelope(res, status, code);
        // Nothing internal, and nothing of the URL.
        expect(res.body).not.toMatch(/secret|10\.0\.0\.7|qqqq|%zz|FST_ERR|Error:/);
      },
    );

    it('401 and 403 point at the credential: the Authorization header, or the cookie it came in', async () => {
      const cases = [
        [{}, 401, 'headers.authorization'],
        [{ authorization: 'Bearer not-a-jwt' }, 401, 'headers.authorization'],
        [{ authorization: 'Bearer ' }, 401, 'headers.authorization'],
        [{ cookie: 'access_token=not-a-jwt' }, 401, 'headers.cookie'],
        [{ authorization: `Bearer ${ctx.token(['viewer'])}` }, 403, 'headers.authorization'],
        [{ cookie: `theme=dark; access_token=${ctx.token(['viewer'])}` }, 403, 'headers.cookie'],
      ] as const;
      for (const [headers, status, path] of cases) {
        const res = await ctx.app.inject({ method: 'POST', url: '/tasks/', headers, payload: { title: 'x' } });
        const { details } = expectEnvelope(res, status, status === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN');
        expect(
          details.map((d) => d.path),
          JSON.stringify(headers),
        ).toEqual([path]);
      }
      expect(await ctx.countTasks()).toBe(0);
    });

    it('404 for a missing record points at params.id and does not quote the id', async () => {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
        const res = await ctx.request('admin', {
          method,
          url: `/tasks/${ID}`,
          ...(method === 'PUT' || method === 'PATCH' ? { payload: { title: 'x' } } : {}),
        });
        const { message, details } = expectEnvelope(res, 404, 'NOT_FOUND');
        expect(details).toEqual([{ path: 'params.id', message, reason: 'not_found' }]);
        expect(res.body).not.toContain(ID);
      }
    });

    it('404 for an unknown route does not quote the URL or its query', async () => {
      const res = await ctx.request('admin', { method: 'GET', url: '/private-area/report-2024?token=s3cr3t' });
      const { details } = expectEnvelope(res, 404, 'NOT_FOUND');
      expect(details).toEqual([{ path: 'url', message: 'No route matches this URL.', reason: 'unknown_route' }]);
      expect(res.body).not.toMatch(/private|report|s3cr3t/);
    });

    it.each([
      ['DELETE', '/tasks/', 'GET, HEAD, POST'],
      ['PUT', '/tasks/', 'GET, HEAD, POST'],
      ['PATCH', '/tasks/', 'GET, HEAD, POST'],
      ['DELETE', '/tasks', 'GET, HEAD, POST'],
      ['PUT', '/tasks', 'GET, HEAD, POST'],
      ['OPTIONS', '/tasks/', 'GET, HEAD, POST'],
      ['GET', '/tasks/search', 'POST'],
      ['PUT', '/tasks/search', 'POST'],
      ['PATCH', '/tasks/search', 'POST'],
      ['DELETE', '/tasks/search', 'POST'],
      ['OPTIONS', '/tasks/search', 'POST'],
      ['POST', `/tasks/${ID}`, 'GET, HEAD, DELETE, PATCH, PUT'],
      ['PUT', '/health', 'GET, HEAD'],
    ] as const)('405: %s %s, Allow: %s', async (method, url, allow) => {
      // As anonymous: which methods a URL serves is not a secret, and the 405 comes before the guard.
      const { result: res, sql } = await ctx.countSql(() => ctx.request('anonymous', { method, url }));
      const { details } = expectEnvelope(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toBe(allow);
      expect(details).toEqual([{ path: 'method', message: `This URL serves ${allow}.`, reason: 'method_not_allowed' }]);
      expect(sql).toEqual([]);
    });

    it('405 comes before the body is read: PUT /tasks/ with a malformed body', async () => {
      const res = await ctx.request('admin', {
        method: 'PUT',
        url: '/tasks/',
        headers: { 'content-type': 'application/json' },
        payload: '{"title":',
      });
      expectEnvelope(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.allow).toBe('GET, HEAD, POST');
    });

    it('the routes that do serve those URLs still answer', async () => {
      expect((await ctx.request('admin', { method: 'GET', url: '/tasks/' })).statusCode).toBe(200);
      expect((await ctx.request('admin', { method: 'POST', url: '/tasks/search', payload: {} })).statusCode).toBe(200);
      const task = await ctx.createTask({ title: 'still here' });
      expect((await ctx.request('admin', { method: 'GET', url: `/tasks/${task.id}` })).statusCode).toBe(200);
    });

    it('where ids are free strings, `search` is an id like any other', async () => {
      await ctx.db.orm.em.fork().getConnection().execute('delete from memos');
      const missing = await ctx.request('admin', { method: 'GET', url: '/memos/search' });
      expect(expectEnvelope(missing, 404, 'NOT_FOUND').details[0]!.path).toBe('params.id');

      const created = await ctx.request('admin', {
        method: 'POST',
        url: '/memos/',
        payload: { code: 'search', text: 'a memo called search' },
      });
      expect(created.statusCode, created.body).toBe(201);
      const read = await ctx.request('admin', { method: 'GET', url: '/memos/search' });
      expect(read.statusCode).toBe(200);
      expect(read.json().data).toEqual({ code: 'search', text: 'a memo called search' });
      // An empty id is still never an id.
      const empty = await ctx.request('admin', { method: 'DELETE', url: '/memos/' });
      expectEnvelope(empty, 405, 'METHOD_NOT_ALLOWED');
      expect(empty.headers.allow).toBe('GET, HEAD, POST');
    });

    it.each(['GET', 'PUT', 'PATCH', 'DELETE'] as const)(
      '414: %s with a 5,000-character id, naming params.id, quoting nothing',
      async (method) => {
        const { result: res, sql } = await ctx.countSql(() =>
          ctx.request('admin', {
            method,
            url: `/tasks/${LONG}?x=1`,
            ...(method === 'PUT' || method === 'PATCH' ? { payload: { title: 'x' } } : {}),
          }),
        );
        const { details } = expectEnvelope(res, 414, 'URI_TOO_LONG');
        expect(details).toEqual([
          { path: 'params.id', message: 'params.id is longer than 100 characters.', reason: 'too_long' },
        ]);
        expect(res.body).not.toContain('qqqq');
        expect(res.body.length).toBeLessThan(400);
        expect(sql).toEqual([]);
      },
    );

    it('414 and 400 for the URL over a real socket', async () => {
      const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      const long = await fetch(`${address}/memos/${LONG}`);
      expect(long.status).toBe(414);
      expect(long.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const body = (await long.json()) as unknown;
      expect(Value.Check(ErrorEnvelopeSchema, body)).toBe(true);
      expect(body).toMatchObject({ error: { code: 'URI_TOO_LONG', details: [{ path: 'params.id' }] } });

      const bad = await fetch(`${address}/tasks/%zz`);
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({
        error: { code: 'BAD_REQUEST', details: [{ path: 'url', reason: 'invalid_url' }] },
      });
    });

    it('503 from a ServiceUnavailableError that knows when: Retry-After', async () => {
      const res = await ctx.request('admin', { method: 'GET', url: '/raise/unavailable-30' });
      expectEnvelope(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('30');
      const unknown = await ctx.request('admin', { method: 'GET', url: '/raise/unavailable-unknown' });
      expect(unknown.headers['retry-after']).toBeUndefined();
    });

    it('a 500 from Fastify or a plugin says nothing of it', async () => {
      for (const kind of ['fastify-500', 'plugin-502']) {
        const res = await ctx.request('admin', { method: 'GET', url: `/raise/${kind}` });
        expect(res.json()).toEqual({
          success: false,
          message: 'Internal server error.',
          data: null,
          error: {
            code: 'INTERNAL_ERROR',
            details: [{ path: '', message: 'Internal server error.', reason: 'internal_error' }],
          },
        });
      }
    });
  },
  { configure },
);
