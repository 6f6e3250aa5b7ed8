/**
 * One endpoint of a `BaseRouter` changed in a subclass, the way an app changes its generated
 * `routers.ts`: a hook added to `get`, a handler replaced, `delete` and `search` left out. The other
 * endpoints keep answering as the scaffolded router does, and the OpenAPI document describes the
 * changed routes as before (or not at all, once left out).
 */
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import { expect, it } from 'vitest';
import { CoreJSONResponse, type CoreRouteOptions, type ResourceRoutes, type RouterService } from '@core/runtime';
import type { TaskCreateInput, TaskUpdateInput } from '../../fixtures/apps/tasks/src/apps/tasks/schemas.js';
import { TaskRouter } from '../../fixtures/apps/tasks/src/apps/tasks/routers.js';
import { describeFixtureApp } from './helpers.js';

const cachePrivately: onSendHookHandler = (_request, reply, payload, done) => {
  reply.header('cache-control', 'private, max-age=60');
  done(null, payload);
};

/** GET /:id also sends Cache-Control; the six other routes are the scaffolded ones. */
class CachedTaskRouter extends TaskRouter {
  override readonly prefix: string = '/cached-tasks';

  protected override get(resource: ResourceRoutes): CoreRouteOptions | undefined {
    const route = super.get(resource);
    return route && { ...route, onSend: cachePrivately };
  }
}

/** No DELETE /:id and no POST /search; GET / answers with a handler of its own. */
class KeptTaskRouter extends TaskRouter {
  override readonly prefix: string = '/kept-tasks';

  protected override delete(): undefined {
    return undefined;
  }

  protected override search(): undefined {
    return undefined;
  }

  protected override list(resource: ResourceRoutes): CoreRouteOptions | undefined {
    const route = super.list(resource);
    return route && { ...route, handler: async () => new CoreJSONResponse({ listed: 'by the subclass' }) };
  }
}

/** A service whose `get` answers with a copy of the row: the copy carries no ETag of its own. */
class CopyingTaskRouter extends TaskRouter {
  override readonly prefix: string = '/copied-tasks';

  protected override resolveService(): RouterService<TaskCreateInput, TaskUpdateInput> {
    const service = super.resolveService();
    return Object.assign(Object.create(service) as typeof service, {
      get: async (id: unknown, options?: { include?: string[]; etag?: boolean }) => ({
        ...(await service.get(id, options)),
      }),
    });
  }
}

async function configure(app: FastifyInstance): Promise<void> {
  await app.register(new CachedTaskRouter().router);
  await app.register(new KeptTaskRouter().router);
  await app.register(new CopyingTaskRouter().router);
}

describeFixtureApp(
  'a router subclass that overrides one endpoint',
  (ctx) => {
    it('GET /:id runs the added hook and Core’s handler: same body and ETag as the scaffolded route', async () => {
      const task = await ctx.createTask({ title: 'cached' });
      const changed = await ctx.request('viewer', { method: 'GET', url: `/cached-tasks/${task.id}` });
      const scaffolded = await ctx.request('viewer', { method: 'GET', url: `/tasks/${task.id}` });
      expect(changed.statusCode).toBe(200);
      expect(changed.headers['cache-control']).toBe('private, max-age=60');
      expect(scaffolded.headers['cache-control']).toBeUndefined();
      expect(changed.json()).toEqual(scaffolded.json());
      expect(changed.headers.etag).toBe(scaffolded.headers.etag);
      expect(changed.headers.vary).toBe(scaffolded.headers.vary);
    });

    it('GET /:id of a service whose `get` drops the row’s tag still sends the record’s ETag', async () => {
      const task = await ctx.createTask({ title: 'copied' });
      const copied = await ctx.request('viewer', { method: 'GET', url: `/copied-tasks/${task.id}` });
      const scaffolded = await ctx.request('viewer', { method: 'GET', url: `/tasks/${task.id}` });
      expect(copied.statusCode).toBe(200);
      expect(copied.json()).toEqual(scaffolded.json());
      expect(copied.headers.etag).toBe(scaffolded.headers.etag);
      const written = await ctx.request('admin', {
        method: 'PATCH',
        url: `/copied-tasks/${task.id}`,
        payload: { title: 'changed' },
        headers: { 'if-match': String(copied.headers.etag) },
      });
      expect(written.statusCode).toBe(200);
    });

    it('GET /:id keeps its guard and its id check before the hook’s handler runs', async () => {
      const task = await ctx.createTask({ title: 'guarded' });
      const anonymous = await ctx.request('anonymous', { method: 'GET', url: `/cached-tasks/${task.id}` });
      const scaffolded = await ctx.request('anonymous', { method: 'GET', url: `/tasks/${task.id}` });
      expect(anonymous.statusCode).toBe(scaffolded.statusCode);
      expect(anonymous.statusCode).not.toBe(200);
      expect(anonymous.json()).toEqual(scaffolded.json());

      const badId = await ctx.request('admin', { method: 'GET', url: '/cached-tasks/not-a-uuid' });
      expect(badId.statusCode).toBe(422);
      // The reserved word `search` in the id's place is still a 405, from the by-id routes' first hook.
      const reserved = await ctx.request('admin', { method: 'GET', url: '/cached-tasks/search' });
      expect(reserved.statusCode).toBe(405);
      expect(reserved.headers.allow).toBe('POST');
    });

    it('the other endpoints of the subclass answer as the scaffolded ones, without the hook', async () => {
      const created = await ctx.request('admin', { method: 'POST', url: '/cached-tasks/', payload: { title: 'one' } });
      expect(created.statusCode).toBe(201);
      const id = created.json().data.id as string;
      expect(created.headers.location).toBe(`/cached-tasks/${id}`);
      const patched = await ctx.request('admin', {
        method: 'PATCH',
        url: `/cached-tasks/${id}`,
        payload: { title: 'two' },
      });
      expect(patched.statusCode).toBe(200);
      expect(patched.json().data.title).toBe('two');
      const listed = await ctx.request('admin', { method: 'GET', url: '/cached-tasks/' });
      expect(listed.statusCode).toBe(200);
      expect(listed.json().data.map((t: { id: string }) => t.id)).toEqual([id]);
      expect(listed.headers['cache-control']).toBeUndefined();
      const deleted = await ctx.request('admin', { method: 'DELETE', url: `/cached-tasks/${id}` });
      expect(deleted.statusCode).toBe(200);
      expect(await ctx.readTask(id)).toBeNull();
    });

    it('a left-out DELETE /:id is a 405 naming the methods the URL still serves; the record stays', async () => {
      const task = await ctx.createTask({ title: 'kept' });
      const res = await ctx.request('admin', { method: 'DELETE', url: `/kept-tasks/${task.id}` });
      expect(res.statusCode).toBe(405);
      expect(res.json()).toMatchObject({ success: false, error: { code: 'METHOD_NOT_ALLOWED' } });
      const allow = String(res.headers.allow).split(', ');
      expect(allow).toEqual(expect.arrayContaining(['GET', 'PUT', 'PATCH']));
      expect(allow).not.toContain('DELETE');
      expect(await ctx.readTask(task.id)).toMatchObject({ title: 'kept' });
      // The scaffolded router still deletes.
      expect((await ctx.request('admin', { method: 'DELETE', url: `/tasks/${task.id}` })).statusCode).toBe(200);
    });

    it('a left-out POST /search is a 404, as for any URL nothing serves', async () => {
      const res = await ctx.request('admin', { method: 'POST', url: '/kept-tasks/search', payload: {} });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
      expect((await ctx.request('admin', { method: 'POST', url: '/tasks/search', payload: {} })).statusCode).toBe(200);
    });

    it('a replaced handler answers for its route, behind the route’s guard', async () => {
      const res = await ctx.request('viewer', { method: 'GET', url: '/kept-tasks/' });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ listed: 'by the subclass' });
      const anonymous = await ctx.request('anonymous', { method: 'GET', url: '/kept-tasks/' });
      expect(anonymous.statusCode).toBe((await ctx.request('anonymous', { method: 'GET', url: '/tasks/' })).statusCode);
      expect(anonymous.statusCode).not.toBe(200);
    });

    it('the OpenAPI document describes a changed route as the scaffolded one, and a left-out one not at all', async () => {
      const doc = (await ctx.app.inject({ method: 'GET', url: '/docs/json' })).json();
      const paths = doc.paths as Record<string, Record<string, unknown>>;
      expect(paths['/cached-tasks/{id}']!.get).toEqual(paths['/tasks/{id}']!.get);
      expect(paths['/kept-tasks']!.get).toEqual(paths['/tasks']!.get);
      expect(paths['/kept-tasks']!.get).toBeDefined();
      expect(Object.keys(paths['/kept-tasks/{id}']!).sort()).toEqual(['get', 'patch', 'put']);
      expect(Object.keys(paths['/tasks/{id}']!).sort()).toEqual(['delete', 'get', 'patch', 'put']);
      expect(paths['/kept-tasks/search']).toBeUndefined();
    });
  },
  { configure },
);
