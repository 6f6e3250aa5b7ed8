/**
 * A cursor carries the last row's sort values, so a sort on a long text column issues a long cursor:
 * every cursor the server issues must page, however long.
 */
import { expect, it } from 'vitest';
import { describeFixtureApp } from './helpers.js';

describeFixtureApp('a cursor over a long sort value', (ctx) => {
  it('pages with a next_cursor longer than 4 KiB', async () => {
    // 1,000 four-byte characters: about 5,400 characters of cursor once encoded.
    for (const mark of ['a', 'b', 'c']) await ctx.createTask({ title: mark, description: mark + '🎉'.repeat(1000) });
    const search = (extra: Record<string, unknown>) =>
      ctx.request('admin', {
        method: 'POST',
        url: '/tasks/search',
        payload: { sort: [{ field: 'description', order: 'asc' }], limit: 1, ...extra },
      });

    const first = await search({});
    expect(first.statusCode).toBe(200);
    const cursor = first.json<{ meta: { next_cursor: string } }>().meta.next_cursor;
    expect(cursor.length).toBeGreaterThan(4096);

    const second = await search({ cursor });
    expect(second.statusCode).toBe(200);
    expect(second.json<{ data: { title: string }[] }>().data.map((t) => t.title)).toEqual(['b']);
  });
});
