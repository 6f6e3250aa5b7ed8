/**
 * Plain Fastify routes (no `CoreAPIRoute`) next to the scaffolded ones, since hand-written
 * endpoints on a plain router must remain possible: not guarded, not enveloped, no `Vary`,
 * bodies not pruned — yet `Inject(TaskService)` works as a default parameter value, per request.
 */
import type { FastifyInstance } from 'fastify';
import { expect, it } from 'vitest';
import { Inject } from '@core/runtime';
import { TaskService } from '../../fixtures/apps/tasks/src/apps/tasks/services.js';
import { describeFixtureApp, type Role } from './helpers.js';

/** Numbers the service instances the plain route receives, to tell requests apart. */
const instanceIds = new WeakMap<object, number>();
let instances = 0;
const idOf = (instance: object): number => {
  let id = instanceIds.get(instance);
  if (id === undefined) instanceIds.set(instance, (id = ++instances));
  return id;
};

function configure(app: FastifyInstance): void {
  app.get('/plain/tasks', async (request, _reply, tasks = Inject(TaskService)) => {
    const page = await tasks.getList();
    return {
      isTaskService: tasks instanceof TaskService,
      instance: idOf(tasks),
      sameAsRequestScope: tasks === request.diScope.resolve(TaskService),
      sameOnSecondInject: tasks === Inject(TaskService),
      titles: page.items.map((t) => t.title),
    };
  });
  app.post('/plain/echo', async (request) => request.body);
}

describeFixtureApp(
  'plain routes',
  (ctx) => {
    it.each(['anonymous', 'viewer', 'admin'] as Role[])(
      'GET as %s: not guarded, not enveloped, no Vary; Inject resolves the request-scoped service',
      async (role) => {
        await ctx.createTask({ title: 'from the service' });
        const res = await ctx.request(role, { method: 'GET', url: '/plain/tasks' });
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expect(body).toEqual({
          isTaskService: true,
          instance: expect.any(Number),
          sameAsRequestScope: true,
          sameOnSecondInject: true,
          titles: ['from the service'],
        });
        expect(body).not.toHaveProperty('success');
        expect(res.headers['vary']).toBeUndefined();
      },
    );

    it('a bad credential does not stop a plain route', async () => {
      const res = await ctx.app.inject({
        method: 'GET',
        url: '/plain/tasks',
        headers: { authorization: 'Bearer not-a-token' },
      });
      expect(res.statusCode).toBe(200);
    });

    it('each request gets its own service instance', async () => {
      const a = (await ctx.request('admin', { method: 'GET', url: '/plain/tasks' })).json();
      const b = (await ctx.request('admin', { method: 'GET', url: '/plain/tasks' })).json();
      expect(a.instance).not.toBe(b.instance);
    });

    it("a plain route's body is not pruned or enveloped, even for a restricted caller", async () => {
      const payload = { title: 't', assignee_email: 'kept@example.com', extra: [1, 2] };
      const res = await ctx.request('viewer', { method: 'POST', url: '/plain/echo', payload });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(payload);
      expect(res.headers['vary']).toBeUndefined();
    });

    it("the app's own plain route /health is unguarded and bare", async () => {
      const res = await ctx.request('viewer', { method: 'GET', url: '/health' });
      expect(res.json()).toEqual({ status: 'ok' });
      expect(res.headers['vary']).toBeUndefined();
    });
  },
  { configure },
);
