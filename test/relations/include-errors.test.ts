/**
 * The `include` query parameter of the list and get routes is one parameter: a refused item (a
 * relation the caller may not see, a path too deep, an unknown name) is reported at `query.include`,
 * its message saying which item; the same include in a search body is reported at `include[i]`.
 */
import { expect, it } from 'vitest';
import { describeRelationApp, seedGraph, type HttpResult, type Json } from './relation-app.js';

function details(res: HttpResult): Json[] {
  return res.body.error?.details ?? [];
}

describeRelationApp('include refusals name query.include', (ctx) => {
  it('a restricted relation among the includes → 403 at query.include, on list and get', async () => {
    const g = await seedGraph(ctx);
    for (const path of ['/tasks/?include=labels,project', `/tasks/${g.task.id as string}?include=labels,project`]) {
      const res = await ctx.call('noproject', 'GET', path);
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(details(res)).toEqual([expect.objectContaining({ path: 'query.include', reason: 'restricted' })]);
      expect(String(details(res)[0]!.message)).toMatch(/^item 2: 'project'/);
    }
    const search = await ctx.call('noproject', 'POST', '/tasks/search', { include: ['labels', 'project'] });
    expect(search.status).toBe(403);
    expect(details(search)).toEqual([expect.objectContaining({ path: 'include[1]', reason: 'restricted' })]);
  });

  it('a path through more than three relations → 422 at query.include', async () => {
    const res = await ctx.call('admin', 'GET', '/comments/?include=task.project.owner.profile');
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(details(res)).toEqual([expect.objectContaining({ path: 'query.include', reason: 'path_too_deep' })]);
  });
});
