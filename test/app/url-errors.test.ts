/**
 * A refusal names the part of the URL the client got wrong: `query.limit`, `query.offset`,
 * `query.cursor` and `query.include` on the list and get routes (an include item is reported as
 * `query.include`, its message naming the item), `params.id` for an id. A search names the same keys
 * by their place in its body. Ids are uuids in their canonical 8-4-4-4-12 form only, refused before
 * the caller's credentials are looked at.
 */
import type { LightMyRequestResponse } from 'fastify';
import { beforeEach, expect, it } from 'vitest';
import { describeFixtureApp } from './helpers.js';

interface Detail {
  path: string;
  message: string;
  reason?: string;
}

function refusal(res: LightMyRequestResponse, status = 422): { message: string; details: Detail[] } {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as { success: boolean; message: string; error: { code: string; details: Detail[] } };
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(status === 422 ? 'VALIDATION_ERROR' : 'FORBIDDEN');
  return { message: body.message, details: body.error.details };
}

const ID = '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21';

describeFixtureApp('errors name the part of the URL that is wrong', (ctx) => {
  let cursor: string;

  beforeEach(async () => {
    for (const title of ['a', 'b', 'c']) await ctx.createTask({ title });
    const page = await ctx.request('admin', { method: 'GET', url: '/tasks/?limit=1' });
    cursor = (page.json() as { meta: { next_cursor: string } }).meta.next_cursor;
    expect(typeof cursor).toBe('string');
  });

  it.each([
    ['limit=0', 'query.limit', 'invalid_limit'],
    ['limit=501', 'query.limit', 'invalid_limit'],
    ['offset=-1', 'query.offset', 'invalid_offset'],
    ['cursor=AAAA', 'query.cursor', 'invalid_cursor'],
    ['include=nope', 'query.include', 'unknown_relation'],
    ['include=a..b', 'query.include', 'unknown_field'],
  ])('GET /tasks/?%s → 422 at %s', async (query, path, reason) => {
    const { message, details } = refusal(await ctx.request('admin', { method: 'GET', url: `/tasks/?${query}` }));
    expect(details).toEqual([expect.objectContaining({ path, reason })]);
    expect(message.startsWith(`${path}: `)).toBe(true);
  });

  it('GET /tasks/ with an altered cursor or a cursor and an offset → 422 at query.cursor', async () => {
    const altered = `${cursor.slice(0, 10)}${cursor[10] === 'A' ? 'B' : 'A'}${cursor.slice(11)}`;
    expect(refusal(await ctx.request('admin', { method: 'GET', url: `/tasks/?cursor=${altered}` })).details).toEqual([
      expect.objectContaining({ path: 'query.cursor', reason: 'invalid_cursor' }),
    ]);
    const both = refusal(await ctx.request('admin', { method: 'GET', url: `/tasks/?offset=0&cursor=${cursor}` }));
    expect(both.details.map((d) => d.path)).toEqual(['query.cursor']);
  });

  it('an include item is reported at query.include, its message saying which item', async () => {
    for (const url of ['/tasks/?include=nope', `/tasks/${ID}?include=nope`]) {
      const { message, details } = refusal(await ctx.request('viewer', { method: 'GET', url }));
      expect(details).toHaveLength(1);
      expect(details[0]).toMatchObject({ path: 'query.include', reason: 'unknown_relation' });
      expect(details[0]!.message).toMatch(/^item 1: 'nope' is not a relation of tasks/);
      expect(message).toBe(`query.include: ${details[0]!.message}`);
    }
    const empty = refusal(await ctx.request('viewer', { method: 'GET', url: `/tasks/${ID}?include=nope,` }));
    expect(empty.details).toEqual([expect.objectContaining({ path: 'query.include', reason: 'invalid_request' })]);
    expect(empty.details[0]!.message).toMatch(/^item 2: /);
    const tooMany = refusal(
      await ctx.request('admin', {
        method: 'GET',
        url: `/tasks/?include=${Array.from({ length: 9 }, (_, i) => `r${i}`).join(',')}`,
      }),
    );
    expect(tooMany.details).toEqual([expect.objectContaining({ path: 'query.include', reason: 'too_many_includes' })]);
  });

  it('the same keys in a search body keep their body paths', async () => {
    const search = (body: unknown): Promise<LightMyRequestResponse> =>
      ctx.request('admin', { method: 'POST', url: '/tasks/search', payload: body as object });
    expect(refusal(await search({ limit: 0 })).details).toEqual([
      expect.objectContaining({ path: 'limit', reason: 'invalid_limit' }),
    ]);
    expect(refusal(await search({ offset: -1 })).details).toEqual([
      expect.objectContaining({ path: 'offset', reason: 'invalid_offset' }),
    ]);
    expect(refusal(await search({ cursor: 'AAAA' })).details).toEqual([
      expect.objectContaining({ path: 'cursor', reason: 'invalid_cursor' }),
    ]);
    expect(refusal(await search({ include: ['nope'] })).details).toEqual([
      expect.objectContaining({ path: 'include[0]', reason: 'unknown_relation' }),
    ]);
  });

  const NOT_CANONICAL = [`urn:uuid:${ID}`, `%7B${ID}%7D`, ID.replaceAll('-', ''), `${ID.slice(0, 8)}_${ID.slice(9)}`];

  it.each(['GET', 'PUT', 'PATCH', 'DELETE'] as const)(
    '%s of an id that is not a canonical uuid → 422 at params.id, whoever asks',
    async (method) => {
      const payload = method === 'PUT' || method === 'PATCH' ? { payload: { title: 'x' } } : {};
      for (const id of NOT_CANONICAL) {
        for (const headers of [ctx.auth('admin'), {}, { authorization: 'Bearer not.a.token' }]) {
          const res = await ctx.app.inject({
            method,
            url: `/tasks/${id}`,
            headers: { ...headers, 'content-type': 'application/json' },
            ...payload,
          });
          const { details } = refusal(res);
          expect(
            details.map((d) => d.path),
            `${method} ${id}`,
          ).toEqual(['params.id']);
        }
      }
      expect(await ctx.countTasks()).toBe(3);
    },
  );

  it('a canonical uuid in either case still names a record', async () => {
    const [task] = (await ctx.request('admin', { method: 'GET', url: '/tasks/?limit=1' })).json().data as {
      id: string;
    }[];
    for (const id of [task!.id, task!.id.toUpperCase()]) {
      expect((await ctx.request('admin', { method: 'GET', url: `/tasks/${id}` })).statusCode).toBe(200);
    }
    const missing = await ctx.request('admin', { method: 'DELETE', url: `/tasks/${ID.toUpperCase()}` });
    expect(missing.statusCode).toBe(404);
  });
});
