/**
 * Restricted fields through HTTP (docs/http.md, "Restrictions and introspection"): the viewer and editor roles have
 * `tasks.assignee_email` restricted. Pruned from bodies (never an error, never written), masked from
 * every response, absent from introspection, forbidden in search, and `Vary: Authorization, Cookie`
 * on JSON answers exactly when the caller's restricted set is non-empty.
 */
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { expect, it } from 'vitest';
import { CoreAPIRoute, CoreJSONResponse } from '@core/runtime';
import { describeFixtureApp, type Role } from './helpers.js';

const SECRET_EMAIL = 'hidden-assignee@example.com';

/** Two Core routes of the test's own: one setting `Vary` itself, one answering plain text. */
function customRoutes(app: FastifyInstance): void {
  app.route(
    CoreAPIRoute({
      method: 'GET',
      url: '/custom/vary',
      action: 'tasks:view',
      handler: async (_request, reply) => {
        reply.header('vary', 'Accept-Encoding, authorization');
        return new CoreJSONResponse({ ok: true });
      },
    }),
  );
  app.route(
    CoreAPIRoute({
      method: 'GET',
      url: '/custom/text',
      action: 'tasks:view',
      handler: async (_request, reply) => {
        reply.type('text/plain; charset=utf-8');
        return 'plain text';
      },
    }),
  );
}

describeFixtureApp(
  'restricted fields (viewer, editor)',
  (ctx) => {
    const seed = () => ctx.createTask({ title: 'seeded', assignee_email: SECRET_EMAIL });

    it('editor create: the restricted field is pruned silently, never written, never echoed', async () => {
      const { result: res, sql } = await ctx.countSql(() =>
        ctx.request('editor', {
          method: 'POST',
          url: '/tasks/',
          payload: { title: 'by editor', assignee_email: SECRET_EMAIL },
        }),
      );
      expect(res.statusCode).toBe(201);
      const data = res.json().data;
      expect(data).toEqual({
        id: data.id,
        title: 'by editor',
        description: null,
        priority: 'medium',
        is_completed: false,
      });
      expect(res.body).not.toContain(SECRET_EMAIL);
      expect(JSON.stringify(sql)).not.toContain(SECRET_EMAIL);
      expect(await ctx.readTask(data.id)).toMatchObject({ title: 'by editor', assignee_email: null });
    });

    it('a restricted field is pruned before validation: an invalid value for it is not an error', async () => {
      const res = await ctx.request('editor', {
        method: 'POST',
        url: '/tasks/',
        payload: { title: 'typed', assignee_email: { not: 'a string' } },
      });
      expect(res.statusCode).toBe(201);
      expect(await ctx.readTask(res.json().data.id)).toMatchObject({ assignee_email: null });
    });

    it.each([
      ['PATCH', { assignee_email: 'mallory@example.com' }, {}],
      ['PATCH', { title: 'renamed', assignee_email: 'mallory@example.com' }, { title: 'renamed' }],
      ['PUT', { title: 'replaced', assignee_email: 'mallory@example.com' }, { title: 'replaced' }],
      ['PUT', { title: 'nulled', assignee_email: null }, { title: 'nulled' }],
    ] as const)('editor %s %j: the stored restricted value stays', async (method, payload, change) => {
      const task = await seed();
      const res = await ctx.request('editor', { method, url: `/tasks/${task.id}`, payload });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).not.toHaveProperty('assignee_email');
      expect(res.body).not.toContain('mallory');
      expect(await ctx.readTask(task.id)).toMatchObject({ ...change, assignee_email: SECRET_EMAIL });
    });

    it.each([
      ['viewer', 'GET', '/tasks/:id'],
      ['viewer', 'GET', '/tasks/'],
      ['viewer', 'POST', '/tasks/search'],
      ['editor', 'GET', '/tasks/:id'],
      ['editor', 'GET', '/tasks'],
      ['editor', 'POST', '/tasks/search'],
      ['editor', 'PATCH', '/tasks/:id'],
      ['editor', 'PUT', '/tasks/:id'],
      ['editor', 'POST', '/tasks/'],
    ] as const)('%s %s %s: the restricted field is masked from the response', async (role, method, path) => {
      const task = await seed();
      const payload =
        method === 'PATCH'
          ? { priority: 'low' }
          : method === 'PUT' || path === '/tasks/'
            ? { title: 'seeded' }
            : undefined;
      const res = await ctx.request(role, {
        method,
        url: path.replace(':id', task.id),
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode).toBeLessThan(300);
      const data: unknown = res.json().data;
      const rows = (Array.isArray(data) ? data : [data]) as Record<string, unknown>[];
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows)
        expect(Object.keys(row)).toEqual(['id', 'title', 'description', 'priority', 'is_completed']);
      expect(res.body).not.toContain('assignee_email');
      expect(res.body).not.toContain(SECRET_EMAIL);
    });

    it('admin sees the field on the same routes', async () => {
      const task = await seed();
      for (const url of [`/tasks/${task.id}`, '/tasks/']) {
        const res = await ctx.request('admin', { method: 'GET', url });
        expect(res.body).toContain(SECRET_EMAIL);
      }
      const search = await ctx.request('admin', { method: 'POST', url: '/tasks/search', payload: {} });
      expect(search.json().data[0].assignee_email).toBe(SECRET_EMAIL);
    });

    const varyCases: [Role, HTTPMethods, string, number, string | undefined][] = [
      ['viewer', 'GET', '/tasks/', 200, 'Authorization, Cookie'],
      ['viewer', 'GET', '/tasks/:id', 200, 'Authorization, Cookie'],
      ['viewer', 'POST', '/tasks/search', 200, 'Authorization, Cookie'],
      ['viewer', 'GET', '/tasks/?schema=true', 200, 'Authorization, Cookie'],
      ['editor', 'POST', '/tasks/', 201, 'Authorization, Cookie'],
      ['editor', 'PATCH', '/tasks/:id', 200, 'Authorization, Cookie'],
      ['editor', 'DELETE', '/tasks/:id', 200, 'Authorization, Cookie'],
      // Error answers of a Core route are JSON too, and depend on the credentials as much.
      ['viewer', 'DELETE', '/tasks/:id', 403, 'Authorization, Cookie'],
      ['admin', 'GET', '/tasks/', 200, undefined],
      ['admin', 'GET', '/tasks/:id', 200, undefined],
      ['admin', 'POST', '/tasks/search', 200, undefined],
      ['admin', 'POST', '/tasks/', 201, undefined],
      ['admin', 'GET', '/tasks/?schema=true', 200, undefined],
      // Anonymous has an empty restricted set in the fixture's policies.
      ['anonymous', 'GET', '/tasks/', 401, undefined],
      // Not a Core route: the not-found handler.
      ['viewer', 'GET', '/no/such/route', 404, undefined],
    ];
    it.each(varyCases)('%s %s %s → %i, Vary %s', async (role, method, path, status, vary) => {
      const task = await seed();
      const payload =
        method === 'POST' && path === '/tasks/'
          ? { title: 'v' }
          : method === 'PATCH'
            ? { title: 'v' }
            : method === 'POST'
              ? {}
              : undefined;
      const res = await ctx.request(role, {
        method,
        url: path.replace(':id', task.id),
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode).toBe(status);
      expect(res.headers['vary']).toBe(vary);
    });

    it('Vary: existing values kept, compared case-insensitively, never duplicated', async () => {
      for (let i = 0; i < 2; i++) {
        const viewer = await ctx.request('viewer', { method: 'GET', url: '/custom/vary' });
        expect(viewer.statusCode).toBe(200);
        expect(viewer.headers['vary']).toBe('Accept-Encoding, authorization, Cookie');
      }
      const admin = await ctx.request('admin', { method: 'GET', url: '/custom/vary' });
      expect(admin.headers['vary']).toBe('Accept-Encoding, authorization');
    });

    it('Vary is added to JSON responses only: a Core route answering text/plain gets none', async () => {
      const res = await ctx.request('viewer', { method: 'GET', url: '/custom/text' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('plain text');
      expect(res.headers['vary']).toBeUndefined();
    });

    it.each([
      ['viewer', 'GET', '/tasks/?schema=true', 'TaskOut'],
      ['viewer', 'GET', '/tasks/:id?schema=true', 'TaskOut'],
      ['editor', 'POST', '/tasks/?schema=true', 'TaskCreate'],
      ['editor', 'PUT', '/tasks/:id?schema=true', 'TaskUpdate'],
      ['editor', 'PATCH', '/tasks/:id?schema=true', 'TaskUpdate'],
    ] as const)(
      '%s %s %s: no restricted field in the schema, listed in meta.restricted_fields',
      async (role, method, path, title) => {
        const task = await seed();
        const res = await ctx.request(role, { method, url: path.replace(':id', task.id) });
        expect(res.statusCode).toBe(200);
        const { data, meta, message } = res.json();
        expect(message).toBe('Schema generated successfully');
        expect(data.title).toBe(title);
        expect(data.properties).not.toHaveProperty('assignee_email');
        expect(data.required).not.toContain('assignee_email');
        expect(meta).toEqual({ restricted_fields: ['tasks.assignee_email'] });
      },
    );

    it('admin introspection lists the field and no restriction', async () => {
      const res = await ctx.request('admin', { method: 'GET', url: '/tasks/?schema=true' });
      expect(res.json().data.properties).toHaveProperty('assignee_email');
      expect(res.json().meta).toEqual({ restricted_fields: [] });
    });

    it.each([
      ['filter', { filters: [{ field: 'assignee_email', op: 'eq', value: SECRET_EMAIL }] }],
      ['filter isnull', { filters: [{ field: 'assignee_email', op: 'isnull', value: false }] }],
      [
        'filter in a nested group',
        {
          filters: [
            {
              op: 'or',
              items: [
                { field: 'title', op: 'eq', value: 'x' },
                { op: 'and', items: [{ field: 'assignee_email', op: 'like', value: '%hidden%' }] },
              ],
            },
          ],
        },
      ],
      ['sort', { sort: [{ field: 'assignee_email', order: 'asc' }] }],
    ])('viewer search with a restricted field in a %s → 403 FORBIDDEN, no SQL sent', async (_what, payload) => {
      await seed();
      const { result: res, sql } = await ctx.countSql(() =>
        ctx.request('viewer', { method: 'POST', url: '/tasks/search', payload }),
      );
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'FORBIDDEN' } });
      expect(res.body).not.toContain(SECRET_EMAIL);
      expect(sql).toEqual([]);
    });

    it('the same search is allowed for admin', async () => {
      await seed();
      const res = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/search',
        payload: {
          filters: [{ field: 'assignee_email', op: 'eq', value: SECRET_EMAIL }],
          sort: [{ field: 'assignee_email', order: 'asc' }],
        },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toHaveLength(1);
    });
  },
  { configure: customRoutes },
);
