/**
 * The one way a body gets in: application/json (any spelling) → parse → prune → validate. Odd
 * Content-Type spellings take exactly that path, prototype-poisoning bodies are refused, and a Core
 * route sees the exact bytes sent on `request.rawBody` (`CoreRequest`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { expect, it } from 'vitest';
import { CoreAPIRoute, CoreJSONResponse, type CoreRequest } from '@core/runtime';
import { describeFixtureApp } from './helpers.js';

const seenByHook: (Buffer | undefined)[] = [];

function configure(app: FastifyInstance): void {
  app.route(
    CoreAPIRoute({
      method: 'POST',
      url: '/custom/raw',
      action: 'tasks:view',
      preHandler: async (request: FastifyRequest) => {
        seenByHook.push((request as CoreRequest).rawBody);
      },
      handler: async (request) => {
        const raw = (request as CoreRequest).rawBody;
        return new CoreJSONResponse({
          hex: raw?.toString('hex') ?? null,
          same: raw === seenByHook.at(-1),
          body: request.body ?? null,
        });
      },
    }),
  );
}

const SPELLINGS = [
  'Application/JSON',
  'APPLICATION/JSON; CHARSET=UTF-8',
  'application/json ;x',
  'application/json\t;charset=utf-8',
  'application/json; charset=utf-8',
];

describeFixtureApp(
  'request bodies',
  (ctx) => {
    it.each(SPELLINGS)(
      'Content-Type %j: parsed, the restricted field pruned, the rest validated and written',
      async (contentType) => {
        const payload = JSON.stringify({
          title: `spelled ${contentType}`,
          priority: 'low',
          assignee_email: 'smuggled@example.com',
        });
        const res = await ctx.request('editor', {
          method: 'POST',
          url: '/tasks/',
          headers: { 'content-type': contentType },
          payload,
        });
        expect(res.statusCode, res.body).toBe(201);
        expect(res.json().data).not.toHaveProperty('assignee_email');
        expect(await ctx.readTask(res.json().data.id)).toMatchObject({
          title: `spelled ${contentType}`,
          priority: 'low',
          assignee_email: null,
        });
      },
    );

    it.each(SPELLINGS)('Content-Type %j: an invalid body is still a 422', async (contentType) => {
      const payload = JSON.stringify({ title: 42, assignee_email: 'smuggled@example.com' });
      const res = await ctx.request('editor', {
        method: 'POST',
        url: '/tasks/',
        headers: { 'content-type': contentType },
        payload,
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().error.details).toEqual([expect.objectContaining({ path: 'title' })]);
      expect(await ctx.countTasks()).toBe(0);
    });

    it.each(SPELLINGS)('Content-Type %j on PATCH: the restricted field pruned', async (contentType) => {
      const task = await ctx.createTask({ title: 'kept', assignee_email: 'owner@example.com' });
      const payload = JSON.stringify({ priority: 'high', assignee_email: 'smuggled@example.com' });
      const res = await ctx.request('editor', {
        method: 'PATCH',
        url: `/tasks/${task.id}`,
        headers: { 'content-type': contentType },
        payload,
      });
      expect(res.statusCode).toBe(200);
      expect(await ctx.readTask(task.id)).toMatchObject({ priority: 'high', assignee_email: 'owner@example.com' });
    });

    it.each([
      ['__proto__ at the top', '{"title":"x","__proto__":{"is_completed":true}}'],
      ['__proto__ nested', '{"title":"x","description":{"__proto__":{"polluted":true}}}'],
      ['constructor.prototype', '{"title":"x","constructor":{"prototype":{"polluted":true}}}'],
      ['escaped __proto__ key', '{"title":"x","\\u005f_proto__":{"is_completed":true}}'],
    ])('prototype poisoning (%s) → 400 BAD_REQUEST, nothing written', async (_what, payload) => {
      const res = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'BAD_REQUEST' } });
      expect(await ctx.countTasks()).toBe(0);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    });

    it('a Core route reads request.rawBody: the exact bytes sent, the same Buffer for every reader', async () => {
      const bytes = Buffer.from('{ "title" :\t"raw ✓ é",\n  "n": 1.50, "nested": {"a": [1, 2]} }\n', 'utf8');
      const res = await ctx.request('viewer', {
        method: 'POST',
        url: '/custom/raw',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        payload: bytes,
      });
      expect(res.statusCode).toBe(200);
      const data = res.json().data;
      expect(data.hex).toBe(bytes.toString('hex'));
      expect(data.same).toBe(true);
      expect(data.body).toEqual({ title: 'raw ✓ é', n: 1.5, nested: { a: [1, 2] } });
    });

    it('rawBody of an empty JSON body is empty and the body undefined', async () => {
      const res = await ctx.request('viewer', {
        method: 'POST',
        url: '/custom/raw',
        headers: { 'content-type': 'application/json' },
        payload: '',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ hex: '', same: true, body: null });
    });
  },
  { configure },
);
