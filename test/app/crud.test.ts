/**
 * The seven scaffolded endpoints of the fixture app (the route table of docs/http.md): statuses, the envelope,
 * `Location`, both spellings of the collection path, PUT as a replace, PATCH as a partial update and
 * DELETE answering `data: null`.
 */
import type { FastifyInstance } from 'fastify';
import { expect, it } from 'vitest';
import { TaskRouter } from '../../fixtures/apps/tasks/src/apps/tasks/routers.js';
import { describeFixtureApp } from './helpers.js';

/** The fixture's router mounted a second time under an API prefix, as apps that version their API do. */
async function mountUnderApiPrefix(app: FastifyInstance): Promise<void> {
  await app.register(async (api) => api.register(new TaskRouter().router), { prefix: '/api/v1' });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MISSING_ID = '00000000-0000-4000-8000-000000000000';

describeFixtureApp(
  'the seven task endpoints',
  (ctx) => {
    it.each(['/tasks/', '/tasks'])(
      'POST %s creates: 201, the envelope exactly, Location of the new record',
      async (url) => {
        const res = await ctx.request('admin', {
          method: 'POST',
          url,
          payload: { title: 'Write docs', assignee_email: 'ann@example.com' },
        });
        expect(res.statusCode).toBe(201);
        const body = res.json();
        expect(Object.keys(body)).toEqual(['success', 'message', 'data', 'meta']);
        expect(body).toEqual({
          success: true,
          message: 'Success',
          data: {
            id: expect.stringMatching(UUID),
            title: 'Write docs',
            description: null,
            priority: 'medium',
            is_completed: false,
            assignee_email: 'ann@example.com',
          },
          meta: null,
        });
        expect(res.headers['location']).toBe(`/tasks/${body.data.id}`);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        // The Location really names the record.
        const again = await ctx.request('admin', { method: 'GET', url: String(res.headers['location']) });
        expect(again.json().data).toEqual(body.data);
      },
    );

    it('a router mounted under a prefix answers a Location that names the record where it is served', async () => {
      const res = await ctx.request('admin', {
        method: 'POST',
        url: '/api/v1/tasks/',
        payload: { title: 'versioned' },
      });
      expect(res.statusCode).toBe(201);
      const { id } = res.json().data;
      expect(res.headers['location']).toBe(`/api/v1/tasks/${id}`);
    });

    it('unknown and non-writable keys are dropped: a create cannot choose its id or is_completed, a PUT cannot move the record', async () => {
      const otherId = '00000000-0000-4000-8000-00000000abcd';
      const created = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/',
        payload: { title: 'mass', id: otherId, is_completed: true, owner: 'x' },
      });
      expect(created.statusCode).toBe(201);
      const task = created.json().data;
      expect(task.id).not.toBe(otherId);
      expect(task.is_completed).toBe(false);
      expect(task).not.toHaveProperty('owner');

      const put = await ctx.request('admin', {
        method: 'PUT',
        url: `/tasks/${task.id}`,
        payload: { title: 'moved?', id: otherId },
      });
      expect(put.json().data.id).toBe(task.id);
      expect(await ctx.readTask(otherId)).toBeNull();
    });

    it('the service hook runs on create: a priority outside low/medium/high becomes medium', async () => {
      const task = await ctx.createTask({ title: 'odd priority', priority: 'urgent' });
      expect(task.priority).toBe('medium');
      expect((await ctx.createTask({ title: 'high', priority: 'high' })).priority).toBe('high');
    });

    it('GET /tasks/{id} answers 200 with the record; an unknown id is 404 NOT_FOUND', async () => {
      const task = await ctx.createTask({ title: 'one', description: 'd', priority: 'low' });
      const res = await ctx.request('admin', { method: 'GET', url: `/tasks/${task.id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, message: 'Success', data: task, meta: null });

      const missing = await ctx.request('admin', { method: 'GET', url: `/tasks/${MISSING_ID}` });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ success: false, data: null, error: { code: 'NOT_FOUND' } });
    });

    it.each(['/tasks/', '/tasks'])('GET %s lists: 200, data an array of output objects, meta null', async (url) => {
      const a = await ctx.createTask({ title: 'a' });
      const b = await ctx.createTask({ title: 'b', assignee_email: 'b@example.com' });
      const res = await ctx.request('admin', { method: 'GET', url });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(Object.keys(body)).toEqual(['success', 'message', 'data', 'meta']);
      expect(body).toMatchObject({ success: true, message: 'Success', meta: null });
      expect(body.data).toHaveLength(2);
      expect(body.data).toEqual(expect.arrayContaining([a, b]));
      expect(res.headers['link']).toBeUndefined();
    });

    it('POST /tasks/search: 200, data the matching rows, meta null', async () => {
      await ctx.createTask({ title: 'alpha', priority: 'high' });
      const low = await ctx.createTask({ title: 'beta', priority: 'low' });
      await ctx.createTask({ title: 'gamma', priority: 'low' });
      const res = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/search',
        payload: {
          filters: [
            { field: 'priority', op: 'eq', value: 'low' },
            { field: 'title', op: 'startswith', value: 'b' },
          ],
          sort: [{ field: 'title', order: 'desc' }],
        },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, message: 'Success', data: [low], meta: null });

      const sorted = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/search',
        payload: { sort: [{ field: 'title', order: 'desc' }] },
      });
      expect(sorted.json().data.map((t: { title: string }) => t.title)).toEqual(['gamma', 'beta', 'alpha']);
      // An empty body is the empty search: every row.
      const all = await ctx.request('admin', { method: 'POST', url: '/tasks/search' });
      expect(all.statusCode).toBe(200);
      expect(all.json().data).toHaveLength(3);
    });

    it('PUT replaces: absent writable fields return to their defaults', async () => {
      const task = await ctx.createTask({
        title: 'full',
        description: 'desc',
        priority: 'high',
        assignee_email: 'ann@example.com',
      });
      await ctx.request('admin', { method: 'PATCH', url: `/tasks/${task.id}`, payload: { is_completed: true } });

      const res = await ctx.request('admin', {
        method: 'PUT',
        url: `/tasks/${task.id}`,
        payload: { title: 'replaced' },
      });
      expect(res.statusCode).toBe(200);
      const expected = {
        id: task.id,
        title: 'replaced',
        description: null,
        priority: 'medium',
        is_completed: false,
        assignee_email: null,
      };
      expect(res.json()).toEqual({ success: true, message: 'Success', data: expected, meta: null });
      expect(await ctx.readTask(task.id)).toEqual(expected);
    });

    it('PUT by a caller with restricted fields keeps their stored value (editor, checked as admin)', async () => {
      const task = await ctx.createTask({
        title: 'owned',
        description: 'desc',
        priority: 'high',
        assignee_email: 'ann@example.com',
      });
      const res = await ctx.request('editor', {
        method: 'PUT',
        url: `/tasks/${task.id}`,
        payload: { title: 'edited', assignee_email: 'mallory@example.com' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({
        id: task.id,
        title: 'edited',
        description: null,
        priority: 'medium',
        is_completed: false,
      });
      // Not reset to null by the replace, and not overwritten by the pruned input either.
      expect(await ctx.readTask(task.id)).toMatchObject({
        title: 'edited',
        description: null,
        assignee_email: 'ann@example.com',
      });
    });

    it('PUT needs the required fields of the update schema (422) and an existing id (404)', async () => {
      const task = await ctx.createTask({ title: 'keep me' });
      const invalid = await ctx.request('admin', {
        method: 'PUT',
        url: `/tasks/${task.id}`,
        payload: { priority: 'low' },
      });
      expect(invalid.statusCode).toBe(422);
      expect(invalid.json().error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [expect.objectContaining({ path: 'title' })],
      });
      expect(await ctx.readTask(task.id)).toMatchObject({ title: 'keep me', priority: 'medium' });

      const missing = await ctx.request('admin', {
        method: 'PUT',
        url: `/tasks/${MISSING_ID}`,
        payload: { title: 'x' },
      });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().error.code).toBe('NOT_FOUND');
    });

    it.each([
      [{ priority: 'low' }],
      [{ is_completed: true }],
      [{ description: null }],
      [{ title: 'renamed', assignee_email: null }],
    ])('PATCH %j changes only the fields present', async (patch) => {
      const task = await ctx.createTask({
        title: 'patch me',
        description: 'desc',
        priority: 'high',
        assignee_email: 'ann@example.com',
      });
      const res = await ctx.request('admin', { method: 'PATCH', url: `/tasks/${task.id}`, payload: patch });
      expect(res.statusCode).toBe(200);
      const expected = { ...task, ...patch };
      expect(res.json()).toEqual({ success: true, message: 'Success', data: expected, meta: null });
      expect(await ctx.readTask(task.id)).toEqual(expected);
    });

    it('PATCH with an empty body changes nothing; an unknown id is 404', async () => {
      const task = await ctx.createTask({ title: 'same', description: 'd' });
      const res = await ctx.request('admin', { method: 'PATCH', url: `/tasks/${task.id}`, payload: {} });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual(task);
      const missing = await ctx.request('admin', {
        method: 'PATCH',
        url: `/tasks/${MISSING_ID}`,
        payload: { title: 'x' },
      });
      expect(missing.statusCode).toBe(404);
    });

    it('DELETE answers 200 with data null; the record is gone; a second DELETE is 404', async () => {
      const task = await ctx.createTask({ title: 'doomed' });
      const res = await ctx.request('admin', { method: 'DELETE', url: `/tasks/${task.id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, message: 'Success', data: null, meta: null });
      expect(await ctx.readTask(task.id)).toBeNull();
      expect(await ctx.countTasks()).toBe(0);
      const again = await ctx.request('admin', { method: 'DELETE', url: `/tasks/${task.id}` });
      expect(again.statusCode).toBe(404);
      expect(again.json().error.code).toBe('NOT_FOUND');
    });

    it.each([
      ['POST', '/tasks/', 201],
      ['POST', '/tasks', 201],
      ['GET', '/tasks/:id', 200],
      ['PUT', '/tasks/:id', 200],
      ['PATCH', '/tasks/:id', 200],
      ['GET', '/tasks/', 200],
      ['GET', '/tasks', 200],
      ['POST', '/tasks/search', 200],
      ['DELETE', '/tasks/:id', 200],
    ] as const)('%s %s → %i with a success envelope', async (method, path, status) => {
      const task = await ctx.createTask({ title: 'target' });
      const payload = method === 'POST' || method === 'PUT' || method === 'PATCH' ? { title: 'x' } : undefined;
      const res = await ctx.request('admin', {
        method,
        url: path.replace(':id', task.id),
        ...(payload && !path.endsWith('search') ? { payload } : {}),
      });
      expect(res.statusCode).toBe(status);
      expect(res.json()).toMatchObject({ success: true, message: 'Success' });
    });
  },
  { configure: mountUnderApiPrefix },
);
