/**
 * Text no database stores as sent (U+0000, an unpaired surrogate) is refused with 422 naming the field
 * the client sent it in, even when a service hook would replace that value before the write: the
 * task service turns a priority other than low, medium or high into medium, and a priority holding
 * U+0000 is still a 422, with nothing written.
 */
import { expect, it } from 'vitest';
import { describeFixtureApp } from './helpers.js';

const UNSTORABLE: [string, string][] = [
  ['U+0000', 'a\u0000'],
  ['a lone high surrogate', 'x\ud800'],
  ['a lone low surrogate', '\udfff"'],
];

describeFixtureApp('unstorable text is refused as the client sent it', (ctx) => {
  it.each(UNSTORABLE)(
    'POST with %s in a priority the service would rewrite → 422 at priority, nothing written',
    async (_name, priority) => {
      const res = await ctx.request('admin', { method: 'POST', url: '/tasks/', payload: { title: 'x', priority } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.details).toEqual([
        expect.objectContaining({ path: 'priority', reason: 'invalid_character' }),
      ]);
      // The answer never echoes the character.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what must not appear
      expect(res.body).not.toMatch(/[\u0000\ud800-\udfff]/);
      expect(await ctx.countTasks()).toBe(0);
    },
  );

  it.each(['PUT', 'PATCH'] as const)(
    '%s with U+0000 in the priority → 422 at priority, the row unchanged',
    async (method) => {
      const task = await ctx.createTask({ title: 'keep', priority: 'high' });
      const res = await ctx.request('admin', {
        method,
        url: `/tasks/${task.id}`,
        payload: { title: 'changed', priority: 'lo\u0000w' },
      });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.details).toEqual([
        expect.objectContaining({ path: 'priority', reason: 'invalid_character' }),
      ]);
      expect(await ctx.readTask(task.id)).toMatchObject({ title: 'keep', priority: 'high' });
    },
  );

  it('a priority the service rewrites is still written as the service says', async () => {
    const res = await ctx.request('admin', {
      method: 'POST',
      url: '/tasks/',
      payload: { title: 'x', priority: 'urgent \u{1F525}' },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.priority).toBe('medium');
  });

  it('every field with such text is named, beside any other problem of the body', async () => {
    const res = await ctx.request('admin', {
      method: 'POST',
      url: '/tasks/',
      payload: { title: 't\u0000', description: '\ud800', priority: 'p'.repeat(51) },
    });
    expect(res.statusCode, res.body).toBe(422);
    const details = res.json().error.details as { path: string; reason: string }[];
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'title', reason: 'invalid_character' }),
        expect.objectContaining({ path: 'description', reason: 'invalid_character' }),
        expect.objectContaining({ path: 'priority', reason: 'maxLength' }),
      ]),
    );
  });
});
