/**
 * Pagination of list and search (docs/http.md, "Pagination"): `meta: null` plus a `Link` header without parameters,
 * `meta = { limit, offset, next_cursor, has_more }` with them, bounds and tampered cursors as 422.
 */
import type { FastifyInstance } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { TaskRouter } from '../../fixtures/apps/tasks/src/apps/tasks/routers.js';
import { describeFixtureApp, type TaskJson } from './helpers.js';

const ROWS = 55;

interface PageBody {
  data: TaskJson[];
  meta: { limit: number; offset: number | null; next_cursor: string | null; has_more: boolean } | null;
}

/** Flips one character in the middle of a cursor, keeping it valid base64url. */
function tamper(cursor: string): string {
  const at = Math.floor(cursor.length / 2);
  const swapped = cursor[at] === 'A' ? 'B' : 'A';
  return cursor.slice(0, at) + swapped + cursor.slice(at + 1);
}

/** The fixture's router mounted a second time under an API prefix. */
async function mountUnderApiPrefix(app: FastifyInstance): Promise<void> {
  await app.register(async (api) => api.register(new TaskRouter().router), { prefix: '/api/v1' });
}

describeFixtureApp(
  'pagination of list and search',
  (ctx) => {
    let ids: Set<string>;

    // Seeded once per database; only the last test removes rows.
    beforeAll(async () => {
      ids = new Set();
      for (let i = 0; i < ROWS; i++) {
        const task = await ctx.createTask({
          title: `task ${String(i).padStart(2, '0')}`,
          priority: i % 2 ? 'low' : 'high',
        });
        ids.add(task.id);
      }
    });

    it('a list without parameters: meta null, the default 50 rows, and a Link to the next page that completes the set', async () => {
      const first = await ctx.request('admin', { method: 'GET', url: '/tasks/' });
      expect(first.statusCode).toBe(200);
      const body = first.json() as PageBody;
      expect(body.meta).toBeNull();
      expect(body.data).toHaveLength(50);

      const link = String(first.headers['link'] ?? '');
      const match = /^<([^>]+)>; rel="next"$/.exec(link);
      expect(match, `Link header: ${link}`).not.toBeNull();
      const next = await ctx.request('admin', { method: 'GET', url: match![1]! });
      expect(next.statusCode).toBe(200);
      const rest = next.json() as PageBody;
      expect(rest.data).toHaveLength(ROWS - 50);
      // The followed link carries a cursor, so its answer is paginated: offset null in cursor mode.
      expect(rest.meta).toEqual({ limit: 50, offset: null, next_cursor: null, has_more: false });
      expect(next.headers['link']).toBeUndefined();

      const seen = [...body.data, ...rest.data].map((t) => t.id);
      expect(new Set(seen).size).toBe(ROWS);
      expect(new Set(seen)).toEqual(ids);
    });

    it('under a mount prefix, the Link header points where the router is served', async () => {
      const first = await ctx.request('admin', { method: 'GET', url: '/api/v1/tasks/' });
      expect(first.json().data).toHaveLength(50);
      const link = String(first.headers['link'] ?? '');
      expect(link).toMatch(/^<\/api\/v1\/tasks\/\?cursor=[^>]+>; rel="next"$/);
      const next = await ctx.request('admin', { method: 'GET', url: /^<([^>]+)>/.exec(link)![1]! });
      expect(next.statusCode).toBe(200);
      expect(next.json().data).toHaveLength(ROWS - 50);
    });

    it('limit and offset: meta = { limit, offset, next_cursor, has_more }', async () => {
      const res = await ctx.request('admin', { method: 'GET', url: '/tasks/?limit=10&offset=20' });
      expect(res.statusCode).toBe(200);
      const body = res.json() as PageBody;
      expect(body.data).toHaveLength(10);
      expect(body.meta).toEqual({ limit: 10, offset: 20, next_cursor: expect.any(String), has_more: true });
      expect(res.headers['link']).toBeUndefined();

      const last = (
        await ctx.request('admin', { method: 'GET', url: '/tasks/?limit=10&offset=50' })
      ).json() as PageBody;
      expect(last.data).toHaveLength(5);
      expect(last.meta).toEqual({ limit: 10, offset: 50, next_cursor: null, has_more: false });

      const onlyLimit = (await ctx.request('admin', { method: 'GET', url: '/tasks?limit=7' })).json() as PageBody;
      expect(onlyLimit.data).toHaveLength(7);
      expect(onlyLimit.meta).toMatchObject({ limit: 7, offset: 0, has_more: true });
    });

    it('offset pages do not overlap and cover every row', async () => {
      const seen: string[] = [];
      for (let offset = 0; offset < ROWS; offset += 20) {
        const page = (
          await ctx.request('admin', { method: 'GET', url: `/tasks?limit=20&offset=${offset}` })
        ).json() as PageBody;
        seen.push(...page.data.map((t) => t.id));
      }
      expect(seen).toHaveLength(ROWS);
      expect(new Set(seen)).toEqual(ids);
    });

    it('cursor mode walks every row once; offset is null in its meta', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const url: string = `/tasks/?limit=12${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page = (await ctx.request('admin', { method: 'GET', url })).json() as PageBody;
        if (cursor) expect(page.meta?.offset).toBeNull();
        expect(page.meta?.has_more).toBe(page.meta?.next_cursor !== null);
        seen.push(...page.data.map((t) => t.id));
        cursor = page.meta!.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(pages).toBe(5);
      expect(seen).toHaveLength(ROWS);
      expect(new Set(seen)).toEqual(ids);
    });

    it.each([
      ['limit=501', 422],
      ['limit=0', 422],
      ['limit=-1', 422],
      ['limit=500', 200],
      ['limit=1', 200],
    ])('GET /tasks?%s → %i', async (query, status) => {
      const res = await ctx.request('admin', { method: 'GET', url: `/tasks?${query}` });
      expect(res.statusCode).toBe(status);
      if (status === 422)
        expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'VALIDATION_ERROR' } });
    });

    it('a tampered (or foreign) cursor is 422 and sends no SQL', async () => {
      const first = (await ctx.request('admin', { method: 'GET', url: '/tasks?limit=5' })).json() as PageBody;
      const cursor = first.meta!.next_cursor!;
      for (const bad of [tamper(cursor), cursor.slice(0, -2), 'not-a-cursor', `${cursor}A`]) {
        const { result: res, sql } = await ctx.countSql(() =>
          ctx.request('admin', { method: 'GET', url: `/tasks?cursor=${encodeURIComponent(bad)}` }),
        );
        expect(res.statusCode, bad).toBe(422);
        expect(res.json().error.code).toBe('VALIDATION_ERROR');
        expect(sql).toEqual([]);
      }
    });

    it('search paginates through body keys: limit/offset, then cursors', async () => {
      const filters = [{ field: 'priority', op: 'eq', value: 'high' }];
      const high = Math.ceil(ROWS / 2); // rows with an even index are high
      const first = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/search',
        payload: { filters, limit: 10 },
      });
      expect(first.statusCode).toBe(200);
      const page = first.json() as PageBody;
      expect(page.data).toHaveLength(10);
      expect(page.data.every((t) => t.priority === 'high')).toBe(true);
      expect(page.meta).toEqual({ limit: 10, offset: 0, next_cursor: expect.any(String), has_more: true });

      const seen = page.data.map((t) => t.id);
      let cursor = page.meta!.next_cursor;
      while (cursor) {
        const next = (
          await ctx.request('admin', { method: 'POST', url: '/tasks/search', payload: { filters, limit: 10, cursor } })
        ).json() as PageBody;
        expect(next.meta?.offset).toBeNull();
        seen.push(...next.data.map((t) => t.id));
        cursor = next.meta!.next_cursor;
      }
      expect(seen).toHaveLength(high);
      expect(new Set(seen).size).toBe(high);

      const offset = (
        await ctx.request('admin', {
          method: 'POST',
          url: '/tasks/search',
          payload: { filters, limit: 10, offset: 20 },
        })
      ).json() as PageBody;
      expect(offset.data).toHaveLength(high - 20);
      expect(offset.meta).toEqual({ limit: 10, offset: 20, next_cursor: null, has_more: false });
    });

    it('search without pagination keys answers meta null (the default page of 50)', async () => {
      const res = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/search',
        payload: { sort: [{ field: 'title', order: 'asc' }] },
      });
      const body = res.json() as PageBody;
      expect(body.meta).toBeNull();
      expect(body.data).toHaveLength(50);
      expect(body.data[0]!.title).toBe('task 00');
    });

    it.each([[{ limit: 501 }], [{ limit: 0 }], [{ cursor: 'garbage' }]])(
      'search %j → 422 with no SQL',
      async (keys) => {
        const { result: res, sql } = await ctx.countSql(() =>
          ctx.request('admin', { method: 'POST', url: '/tasks/search', payload: keys }),
        );
        expect(res.statusCode).toBe(422);
        expect(res.json().error.code).toBe('VALIDATION_ERROR');
        expect(sql).toEqual([]);
      },
    );

    it('search: a tampered cursor, or a cursor presented with other filters, is 422', async () => {
      const filters = [{ field: 'priority', op: 'eq', value: 'high' }];
      const first = (
        await ctx.request('admin', { method: 'POST', url: '/tasks/search', payload: { filters, limit: 5 } })
      ).json() as PageBody;
      const cursor = first.meta!.next_cursor!;
      const tampered = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/search',
        payload: { filters, limit: 5, cursor: tamper(cursor) },
      });
      expect(tampered.statusCode).toBe(422);
      const otherFilters = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/search',
        payload: { filters: [{ field: 'priority', op: 'eq', value: 'low' }], limit: 5, cursor },
      });
      expect(otherFilters.statusCode).toBe(422);
      const ok = await ctx.request('admin', {
        method: 'POST',
        url: '/tasks/search',
        payload: { filters, limit: 5, cursor },
      });
      expect(ok.statusCode).toBe(200);
    });

    it('(last: removes rows) no Link header when every row fits in the page', async () => {
      await ctx.db.orm.em.fork().getConnection().execute(`delete from tasks where title >= 'task 10'`);
      const res = await ctx.request('admin', { method: 'GET', url: '/tasks' });
      expect(res.json().data).toHaveLength(10);
      expect(res.json().meta).toBeNull();
      expect(res.headers['link']).toBeUndefined();
    });
  },
  { cleanBetweenTests: false, configure: mountUnderApiPrefix },
);
