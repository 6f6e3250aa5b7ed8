/**
 * Search errors as the HTTP client sees them: `POST /tasks/search` of the fixture app answers a
 * malformed filter tree with 422 VALIDATION_ERROR and a detail naming the JSON path, before any SQL.
 */
import { expect, it } from 'vitest';
import { describeFixtureApp } from '../app/helpers.js';

describeFixtureApp('search request errors over HTTP', (ctx) => {
  it.each([
    [
      'a filter without op',
      [
        { field: 'title', op: 'eq', value: 'x' },
        { field: 'priority', value: 'high' },
      ],
      'filters[1].op',
      /'op' is required: a filter is \{ field, op, value \} with op one of eq, ne/,
    ],
    [
      'a group without op',
      [{ items: [{ field: 'title', op: 'eq', value: 'x' }] }],
      'filters[0].op',
      /'op' is required: a group's op is 'and' or 'or'/,
    ],
    [
      'a filter without field',
      [{ op: 'or', items: [{ op: 'eq', value: 'x' }] }],
      'filters[0].items[0].field',
      /'field' is required/,
    ],
  ])('422 VALIDATION_ERROR for %s: reason required at %s, no SQL', async (_name, filters, path, message) => {
    const { result: res, sql } = await ctx.countSql(() =>
      ctx.request('admin', { method: 'POST', url: '/tasks/search', payload: { filters } }),
    );
    expect(res.statusCode, res.body).toBe(422);
    const body = res.json();
    expect(body).toMatchObject({ success: false, data: null, error: { code: 'VALIDATION_ERROR' } });
    expect(body.error.details).toEqual([{ path, reason: 'required', message: expect.stringMatching(message) }]);
    expect(body.message).toContain(path);
    expect(res.body).not.toMatch(/unknown operator|nothing/);
    expect(sql).toEqual([]);
  });
});
