/**
 * The rows of the error table (`ERROR_CODES`) through the app's HTTP surface, each answer in the error
 * envelope `{ success: false, message, data: null, error: { code, details } }` with a `path` in every
 * detail. (503 and the errors Fastify and plugins raise: `error-envelope.test.ts`.)
 *
 * 409 needs a unique column, which the task app lacks, so this file adds a tiny `tags` resource
 * (`tags.name` unique) with its own router. (The fixture graph's `fixtures/models/label.ts` was not
 * used: it imports the graph's own `Task` model, whose `defineModel` replaces the app's `Task` in the
 * model registry, which is keyed by class name.)
 */
import { randomUUID } from 'node:crypto';
import { p } from '@mikro-orm/core';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Type } from 'typebox';
import { beforeEach, expect, it } from 'vitest';
import {
  Base,
  BaseRepository,
  BaseRouter,
  BaseService,
  container,
  ContextSchema,
  CoreAPIRoute,
  defineModel,
  Inject,
  type SchemaInput,
} from '@core/runtime';
import { describeFixtureApp } from './helpers.js';

class Tag extends Base {
  static override readonly tableName = 'tags';
  declare id: string;
  declare name: string;
}

defineModel(Tag, {
  id: p
    .uuid()
    .primary()
    .onCreate(() => randomUUID()),
  name: p.string().length(60).unique(),
});

class TagIn extends ContextSchema {
  static override readonly __model__ = 'tags';
  static override readonly fields = Type.Object({ name: Type.String({ maxLength: 60 }) });
}
type TagInput = SchemaInput<typeof TagIn>;

class TagOut extends ContextSchema {
  static override readonly __model__ = 'tags';
  static override readonly fields = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() });
}

class TagRepository extends BaseRepository<Tag, TagInput, TagInput> {
  constructor() {
    super({ model: Tag });
  }
}

class TagService extends BaseService<Tag, TagInput, TagInput> {
  constructor(repository = Inject(TagRepository)) {
    super({ model: Tag, repository });
  }
}

class TagRouter extends BaseRouter<TagInput, TagInput> {
  readonly model = Tag;
  readonly createSchema = TagIn;
  readonly updateSchema = TagIn;
  readonly schemaOut = TagOut;
  readonly service = TagService;
  readonly prefix = '/tags';
}

const INTERNAL = 'select secret_column from users -- internal detail';
const INTERNAL_DETAILS = [{ path: '', message: 'Internal server error.', reason: 'internal_error' }];

async function configure(app: FastifyInstance): Promise<void> {
  container.scoped(TagRepository).scoped(TagService);
  await app.register(new TagRouter().router);
  app.route(
    CoreAPIRoute({
      method: 'GET',
      url: '/custom/boom',
      action: 'tasks:view',
      handler: async () => {
        throw new Error(INTERNAL);
      },
    }),
  );
  app.get('/plain/boom', async () => {
    throw new TypeError(INTERNAL);
  });
}

/** The error envelope, exactly: keys, `data: null`, a code and details that each have a path. */
function expectError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
): { message: string; details: { path: string; message: string; reason?: string }[] } {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  const body = res.json();
  expect(Object.keys(body)).toEqual(['success', 'message', 'data', 'error']);
  expect(body).toMatchObject({ success: false, data: null, error: { code, details: expect.any(Array) } });
  expect(Object.keys(body.error)).toEqual(['code', 'details']);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(body.error.details.length).toBeGreaterThan(0);
  for (const detail of body.error.details) expect(typeof detail.path).toBe('string');
  return { message: body.message, details: body.error.details };
}

describeFixtureApp(
  'the error table through HTTP',
  (ctx) => {
    beforeEach(async () => {
      await ctx.db.orm.em.fork().getConnection().execute('delete from tags');
    });

    it('400 BAD_REQUEST: malformed JSON, nothing written', async () => {
      for (const payload of ['{"title":', '{title: "x"}', '{"title":"x"}}', "{'title':'x'}"]) {
        const res = await ctx.request('admin', {
          method: 'POST',
          url: '/tasks/',
          headers: { 'content-type': 'application/json' },
          payload,
        });
        const { message, details } = expectError(res, 400, 'BAD_REQUEST');
        expect(message).toBe('The body is not valid JSON.');
        expect(details).toEqual([{ path: '', message, reason: 'invalid_json' }]);
      }
      expect(await ctx.countTasks()).toBe(0);
    });

    it('401 UNAUTHENTICATED: no credential on a guarded route', async () => {
      for (const [method, url] of [
        ['GET', '/tasks/'],
        ['POST', '/tags/'],
      ] as const) {
        const res = await ctx.request('anonymous', {
          method,
          url,
          ...(method === 'POST' ? { payload: { name: 'x' } } : {}),
        });
        expect(expectError(res, 401, 'UNAUTHENTICATED').details).toEqual([
          expect.objectContaining({ path: 'headers.authorization', reason: 'credentials_required' }),
        ]);
      }
    });

    it('403 FORBIDDEN: an action the role lacks', async () => {
      const res = await ctx.request('viewer', { method: 'POST', url: '/tasks/', payload: { title: 'x' } });
      expect(expectError(res, 403, 'FORBIDDEN').details).toEqual([
        expect.objectContaining({ path: 'headers.authorization', reason: 'permission_denied' }),
      ]);
      // The editor may do anything to tasks, nothing to tags.
      expectError(await ctx.request('editor', { method: 'GET', url: '/tags/' }), 403, 'FORBIDDEN');
      expect(await ctx.countTasks()).toBe(0);
    });

    it.each([
      ['GET', '/tasks/00000000-0000-4000-8000-000000000000'],
      ['PATCH', '/tasks/00000000-0000-4000-8000-000000000000'],
      ['DELETE', '/tasks/00000000-0000-4000-8000-000000000000'],
      ['GET', '/nope'],
      ['POST', '/nope'],
      ['GET', '/tasks/a/b'],
      ['GET', '/tags/00000000-0000-4000-8000-000000000000'],
    ] as const)('404 NOT_FOUND: %s %s (a missing record or route)', async (method, url) => {
      const res = await ctx.request('admin', {
        method,
        url,
        ...(method === 'PATCH' ? { payload: { title: 'x' } } : {}),
      });
      const { details } = expectError(res, 404, 'NOT_FOUND');
      // A missing record is the id in the URL; an unknown route is the URL itself, never quoted.
      expect(details).toEqual([
        expect.objectContaining({ path: url.startsWith('/nope') || url.endsWith('/b') ? 'url' : 'params.id' }),
      ]);
      expect(res.body).not.toContain(url);
    });

    it.each([
      ['DELETE', '/tasks/', 'GET, HEAD, POST'],
      ['PATCH', '/tags/', 'GET, HEAD, POST'],
      ['GET', '/tasks/search', 'POST'],
      ['GET', '/tags/search', 'POST'],
    ] as const)('405 METHOD_NOT_ALLOWED: %s %s, with Allow: %s', async (method, url, allow) => {
      const res = await ctx.request('admin', { method, url });
      expect(expectError(res, 405, 'METHOD_NOT_ALLOWED').details).toEqual([
        expect.objectContaining({ path: 'method' }),
      ]);
      expect(res.headers.allow).toBe(allow);
    });

    it('414 URI_TOO_LONG: an id over the length limit, not echoed', async () => {
      const id = 'z'.repeat(5000);
      for (const url of [`/tasks/${id}`, `/tags/${id}`]) {
        const res = await ctx.request('admin', { method: 'GET', url });
        expect(expectError(res, 414, 'URI_TOO_LONG').details).toEqual([expect.objectContaining({ path: 'params.id' })]);
        expect(res.body).not.toContain('zzzz');
      }
    });

    it('409 CONFLICT: a duplicate unique value on create and on update, without echoing it', async () => {
      const name = 'unique-secret-name-42';
      const first = await ctx.request('admin', { method: 'POST', url: '/tags/', payload: { name } });
      expect(first.statusCode).toBe(201);
      const dup = await ctx.request('admin', { method: 'POST', url: '/tags/', payload: { name } });
      expect(expectError(dup, 409, 'CONFLICT').details).toEqual([
        expect.objectContaining({ path: 'name', reason: 'unique' }),
      ]);
      expect(dup.body).not.toContain(name);

      const other = await ctx.request('admin', { method: 'POST', url: '/tags', payload: { name: 'other' } });
      const clash = await ctx.request('admin', {
        method: 'PATCH',
        url: `/tags/${other.json().data.id}`,
        payload: { name },
      });
      expectError(clash, 409, 'CONFLICT');
      expect(clash.body).not.toContain(name);
      // Nothing half-written: the second tag still has its own name.
      const list = await ctx.request('admin', { method: 'GET', url: '/tags/' });
      expect(
        list
          .json()
          .data.map((t: { name: string }) => t.name)
          .sort(),
      ).toEqual(['other', name]);
    });

    it('413 PAYLOAD_TOO_LARGE: a body over 1 MiB, nothing written', async () => {
      const payload = JSON.stringify({ title: 'big', description: 'x'.repeat(1024 * 1024) });
      for (const url of ['/tasks/', '/tags/']) {
        const res = await ctx.request('admin', {
          method: 'POST',
          url,
          headers: { 'content-type': 'application/json' },
          payload,
        });
        expect(expectError(res, 413, 'PAYLOAD_TOO_LARGE').details).toEqual([expect.objectContaining({ path: '' })]);
      }
      // Just under the limit is parsed (and then fails validation on the 1024-character column).
      const under = JSON.stringify({ title: 'big', description: 'x'.repeat(1024 * 1024 - 64) });
      const res = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/',
        headers: { 'content-type': 'application/json' },
        payload: under,
      });
      expectError(res, 422, 'VALIDATION_ERROR');
      expect(await ctx.countTasks()).toBe(0);
    });

    it.each([
      ['text/plain'],
      ['text/plain; charset=utf-8'],
      ['application/x-www-form-urlencoded'],
      ['application/jsonx'],
      ['application/json-patch+json'],
    ])('415 UNSUPPORTED_MEDIA_TYPE: %s carrying JSON, nothing written', async (contentType) => {
      const res = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/',
        headers: { 'content-type': contentType },
        payload: '{"title":"smuggled"}',
      });
      expect(expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE').details).toEqual([
        expect.objectContaining({ path: 'headers.content-type' }),
      ]);
      expect(await ctx.countTasks()).toBe(0);
    });

    it.each([
      ['GET', '/tasks/not-a-uuid'],
      ['GET', '/tasks/12345'],
      ['PUT', '/tasks/not-a-uuid'],
      ['PATCH', '/tasks/not-a-uuid'],
      ['DELETE', '/tasks/not-a-uuid'],
    ] as const)('422 VALIDATION_ERROR: %s %s (id not a UUID), no SQL', async (method, url) => {
      const { result: res, sql } = await ctx.countSql(() =>
        ctx.request('admin', {
          method,
          url,
          ...(method === 'PUT' || method === 'PATCH' ? { payload: { title: 'x' } } : {}),
        }),
      );
      const { details } = expectError(res, 422, 'VALIDATION_ERROR');
      expect(details).toEqual([expect.objectContaining({ path: 'params.id' })]);
      expect(sql).toEqual([]);
    });

    it.each([
      [{}, 'title'],
      [{ title: 5 }, 'title'],
      [{ title: 'x'.repeat(256) }, 'title'],
      [{ title: 'ok', description: 5 }, 'description'],
      [{ title: 'ok', priority: 'x'.repeat(51) }, 'priority'],
      [[], ''],
      ['a string', ''],
      [null, ''],
    ])('422 VALIDATION_ERROR: body %j, with the path %j, no SQL', async (body, path) => {
      const { result: res, sql } = await ctx.countSql(() =>
        ctx.request('admin', {
          method: 'POST',
          url: '/tasks/',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        }),
      );
      const { details } = expectError(res, 422, 'VALIDATION_ERROR');
      expect(details.map((d) => d.path)).toContain(path);
      expect(sql).toEqual([]);
    });

    it('422 on PATCH: a present field with a wrong type', async () => {
      const task = await ctx.createTask({ title: 'x' });
      const res = await ctx.request('admin', {
        method: 'PATCH',
        url: `/tasks/${task.id}`,
        payload: { is_completed: 'yes' },
      });
      expect(expectError(res, 422, 'VALIDATION_ERROR').details).toEqual([
        expect.objectContaining({ path: 'is_completed' }),
      ]);
      expect(await ctx.readTask(task.id)).toEqual(task);
    });

    it('500 INTERNAL_ERROR from a Core route: nothing internal when ENVIRONMENT is not development', async () => {
      // The app was built with ENVIRONMENT=test through its settings; the process environment says nothing.
      const saved = process.env.ENVIRONMENT;
      delete process.env.ENVIRONMENT;
      try {
        for (const url of ['/custom/boom', '/plain/boom']) {
          const res = await ctx.request('admin', { method: 'GET', url });
          expect(res.statusCode).toBe(500);
          expect(res.json()).toEqual({
            success: false,
            message: 'Internal server error.',
            data: null,
            error: { code: 'INTERNAL_ERROR', details: INTERNAL_DETAILS },
          });
          expect(res.body).not.toMatch(/secret_column|Error|at .*\.ts/);
        }
      } finally {
        if (saved !== undefined) process.env.ENVIRONMENT = saved;
      }
    });

    it('500 INTERNAL_ERROR: also bare when the process environment says production', async () => {
      const saved = process.env.ENVIRONMENT;
      process.env.ENVIRONMENT = 'production';
      try {
        const res = await ctx.request('admin', { method: 'GET', url: '/custom/boom' });
        expect(res.json()).toEqual({
          success: false,
          message: 'Internal server error.',
          data: null,
          error: { code: 'INTERNAL_ERROR', details: INTERNAL_DETAILS },
        });
      } finally {
        if (saved === undefined) delete process.env.ENVIRONMENT;
        else process.env.ENVIRONMENT = saved;
      }
    });
  },
  { configure },
);
