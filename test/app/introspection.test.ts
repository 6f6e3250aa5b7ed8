/**
 * `?schema=true` (docs/http.md, "Restrictions and introspection"): which schema each route answers, the JSON
 * Schema's shape, that the handler never runs (nothing written, no SQL), that DELETE has none, and
 * that a router with `exposeSchemas = false` ignores the parameter.
 */
import type { FastifyInstance } from 'fastify';
import { expect, it } from 'vitest';
import { TaskRouter } from '../../fixtures/apps/tasks/src/apps/tasks/routers.js';
import { describeFixtureApp } from './helpers.js';

/** The fixture's router under another prefix, with introspection turned off. */
class QuietTaskRouter extends TaskRouter {
  override readonly prefix = '/quiet-tasks';
  override readonly exposeSchemas = false;
}

const TASK_OUT = {
  title: 'TaskOut',
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    title: { type: 'string', maxLength: 255 },
    description: { type: ['string', 'null'], maxLength: 1024 },
    priority: { type: 'string', maxLength: 50 },
    is_completed: { type: 'boolean' },
    assignee_email: { type: ['string', 'null'], maxLength: 255 },
  },
  required: ['id', 'title', 'description', 'priority', 'is_completed', 'assignee_email'],
};

const TASK_CREATE = {
  title: 'TaskCreate',
  type: 'object',
  properties: {
    title: { type: 'string', maxLength: 255 },
    description: { type: ['string', 'null'], maxLength: 1024, default: null },
    priority: { type: 'string', maxLength: 50, default: 'medium' },
    assignee_email: { type: ['string', 'null'], maxLength: 255, default: null },
  },
  required: ['title'],
};

const TASK_UPDATE_PROPERTIES = {
  title: { type: 'string', maxLength: 255 },
  description: { type: ['string', 'null'], maxLength: 1024, default: null },
  priority: { type: 'string', maxLength: 50, default: 'medium' },
  is_completed: { type: 'boolean', default: false },
  assignee_email: { type: ['string', 'null'], maxLength: 255, default: null },
};

describeFixtureApp(
  'schema introspection',
  (ctx) => {
    it.each([
      ['GET', '/tasks/?schema=true', TASK_OUT],
      ['GET', '/tasks?schema=true', TASK_OUT],
      ['GET', '/tasks/:id?schema=true', TASK_OUT],
      ['POST', '/tasks/?schema=true', TASK_CREATE],
      [
        'PUT',
        '/tasks/:id?schema=true',
        { title: 'TaskUpdate', type: 'object', properties: TASK_UPDATE_PROPERTIES, required: ['title'] },
      ],
      // A PATCH body requires nothing.
      [
        'PATCH',
        '/tasks/:id?schema=true',
        { title: 'TaskUpdate', type: 'object', properties: TASK_UPDATE_PROPERTIES, required: [] },
      ],
    ] as const)('%s %s answers its JSON Schema', async (method, path, expected) => {
      const task = await ctx.createTask({ title: 'exists' });
      const res = await ctx.request('admin', { method, url: path.replace(':id', task.id) });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        success: true,
        message: 'Schema generated successfully',
        data: expected,
        meta: { restricted_fields: [] },
      });
    });

    it('POST /tasks/search?schema=true answers the SearchRequest schema', async () => {
      const res = await ctx.request('admin', { method: 'POST', url: '/tasks/search?schema=true', payload: {} });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.message).toBe('Schema generated successfully');
      expect(body.meta).toEqual({ restricted_fields: [] });
      expect(body.data).toMatchObject({ title: 'SearchRequest', type: 'object', required: expect.any(Array) });
      expect(Object.keys(body.data.properties)).toEqual(
        expect.arrayContaining(['filters', 'include', 'sort', 'limit', 'offset', 'cursor']),
      );
      const sort = JSON.stringify(body.data.properties.sort);
      expect(sort).toContain('asc');
      expect(sort).toContain('desc');
    });

    it("the viewer's search schema lists its restriction in meta", async () => {
      const res = await ctx.request('viewer', { method: 'POST', url: '/tasks/search?schema=true' });
      expect(res.json()).toMatchObject({
        message: 'Schema generated successfully',
        data: { title: 'SearchRequest' },
        meta: { restricted_fields: ['tasks.assignee_email'] },
      });
    });

    it('a view of a missing record still answers the schema (the handler does not run)', async () => {
      const res = await ctx.request('admin', {
        method: 'GET',
        url: '/tasks/00000000-0000-4000-8000-000000000000?schema=true',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data.title).toBe('TaskOut');
    });

    it.each([
      ['POST', '/tasks/?schema=true', { title: 'should not be created' }],
      ['POST', '/tasks/?schema=true', { title: 42 }],
      ['PUT', '/tasks/:id?schema=true', { title: 'should not replace' }],
      ['PATCH', '/tasks/:id?schema=true', { title: 'should not patch' }],
      ['POST', '/tasks/search?schema=true', { filters: [{ field: 'nope', op: 'eq', value: 1 }] }],
    ] as const)('%s %s with a body writes nothing and sends no SQL', async (method, path, payload) => {
      const task = await ctx.createTask({ title: 'original', priority: 'high' });
      const { result: res, sql } = await ctx.countSql(() =>
        ctx.request('admin', { method, url: path.replace(':id', task.id), payload }),
      );
      expect(res.statusCode).toBe(200);
      expect(res.json().message).toBe('Schema generated successfully');
      expect(sql).toEqual([]);
      expect(await ctx.countTasks()).toBe(1);
      expect(await ctx.readTask(task.id)).toEqual(task);
    });

    it('only schema=true introspects: schema=false and schema=1 run the handler', async () => {
      for (const flag of ['false', '1']) {
        const res = await ctx.request('admin', {
          method: 'POST',
          url: `/tasks/?schema=${flag}`,
          payload: { title: `flag ${flag}` },
        });
        expect(res.statusCode, flag).toBe(201);
        expect(res.json().message).toBe('Success');
      }
      expect(await ctx.countTasks()).toBe(2);
    });

    it('DELETE has no introspection: ?schema=true deletes', async () => {
      const task = await ctx.createTask({ title: 'delete me' });
      const res = await ctx.request('admin', { method: 'DELETE', url: `/tasks/${task.id}?schema=true` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, message: 'Success', data: null, meta: null });
      expect(await ctx.countTasks()).toBe(0);
    });

    it('introspection is still guarded: anonymous 401, a viewer introspecting create 403', async () => {
      expect((await ctx.request('anonymous', { method: 'GET', url: '/tasks/?schema=true' })).statusCode).toBe(401);
      const viewer = await ctx.request('viewer', { method: 'POST', url: '/tasks/?schema=true' });
      expect(viewer.statusCode).toBe(403);
      expect(viewer.json().error.code).toBe('FORBIDDEN');
    });

    it('a router with exposeSchemas = false ignores schema=true: GET lists', async () => {
      const task = await ctx.createTask({ title: 'listed' });
      const res = await ctx.request('admin', { method: 'GET', url: '/quiet-tasks/?schema=true' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, message: 'Success', data: [task], meta: null });
      const view = await ctx.request('admin', { method: 'GET', url: `/quiet-tasks/${task.id}?schema=true` });
      expect(view.json()).toEqual({ success: true, message: 'Success', data: task, meta: null });
    });

    it('a router with exposeSchemas = false ignores schema=true: POST creates, PATCH updates', async () => {
      const res = await ctx.request('admin', {
        method: 'POST',
        url: '/quiet-tasks/?schema=true',
        payload: { title: 'created anyway' },
      });
      expect(res.statusCode).toBe(201);
      expect(res.headers['location']).toBe(`/quiet-tasks/${res.json().data.id}`);
      const patched = await ctx.request('admin', {
        method: 'PATCH',
        url: `/quiet-tasks/${res.json().data.id}?schema=true`,
        payload: { priority: 'low' },
      });
      expect(patched.json().data).toMatchObject({ title: 'created anyway', priority: 'low' });
      expect(await ctx.countTasks()).toBe(1);
    });
  },
  {
    configure: async (app: FastifyInstance) => {
      await app.register(new QuietTaskRouter().router);
    },
  },
);
