/**
 * Includes over HTTP: `?include=a,b.c` on list and view, `include` in the search body, nested paths up
 * to the bounded depth (3 relation hops), unknown relations and too-deep paths → 422 with no SQL, and
 * the number of statements of list/search with includes independent of the page size (no N+1).
 */
import { expect, it } from 'vitest';
import { describeRelationApp, seedGraph, type Json, type RelationApp } from './relation-app.js';

describeRelationApp('includes', (ctx) => {
  it('?include=project,comments.author,labels on view nests every level', async () => {
    const g = await seedGraph(ctx);
    const task = await ctx.ok('GET', `/tasks/${g.task.id}?include=project,comments.author,labels`);
    expect(task.project).toEqual(g.project);
    const comments = task.comments as Json[];
    expect(comments).toHaveLength(2);
    const first = comments.find((c) => c.body === 'first')!;
    const second = comments.find((c) => c.body === 'second')!;
    expect(first.author).toEqual(g.user);
    expect(second.author).toBeNull();
    expect((task.labels as Json[]).map((l) => l.name).sort()).toEqual(['bug', 'ui']);
  });

  it('three hops pass: comments.author.profile on a task, project.owner.profile on a task', async () => {
    const g = await seedGraph(ctx);
    const task = await ctx.ok('GET', `/tasks/${g.task.id}?include=comments.author.profile,project.owner.profile`);
    const first = (task.comments as Json[]).find((c) => c.body === 'first')!;
    expect((first.author as Json).profile).toEqual(g.profile);
    const owner = (task.project as Json).owner as Json;
    expect(owner.id).toBe(g.user.id);
    expect(owner.profile).toEqual(g.profile);
  });

  it('the same includes in a list and in a search body give the same rows', async () => {
    const g = await seedGraph(ctx);
    await seedGraph(ctx, '2');
    const list = await ctx.ok<Json[]>('GET', '/tasks/?include=project.owner,comments.author&limit=10');
    const search = await ctx.ok<Json[]>('POST', '/tasks/search', {
      include: ['project.owner', 'comments.author'],
      limit: 10,
    });
    expect(list).toHaveLength(2);
    const sortById = (rows: Json[]): Json[] => [...rows].sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(sortById(search)).toEqual(sortById(list));
    const mine = list.find((t) => t.id === g.task.id)!;
    expect(((mine.project as Json).owner as Json).id).toBe(g.user.id);
  });

  it('search filters and sorts through a relation path', async () => {
    const g = await seedGraph(ctx);
    await seedGraph(ctx, '2');
    const found = await ctx.ok<Json[]>('POST', '/tasks/search', {
      filters: [{ field: 'project.name', op: 'eq', value: 'Apollo' }],
      include: ['project'],
    });
    expect(found.map((t) => t.id)).toEqual([g.task.id]);
    const sorted = await ctx.ok<Json[]>('POST', '/tasks/search', { sort: [{ field: 'project.name', order: 'desc' }] });
    expect(sorted.map((t) => t.title)).toEqual(['T2', 'T']);
    // Three hops to a field is within the bound.
    const deep = await ctx.ok<Json[]>('POST', '/tasks/search', {
      filters: [{ field: 'comments.author.profile.bio', op: 'eq', value: 'hello' }],
    });
    expect(deep.map((t) => t.id).sort()).toEqual([g.task.id, sorted.find((t) => t.title === 'T2')!.id].sort());
    const none = await ctx.ok<Json[]>('POST', '/tasks/search', {
      filters: [{ field: 'comments.author.profile.bio', op: 'eq', value: 'nobody' }],
    });
    expect(none).toEqual([]);
  });

  it.each([
    ['an unknown relation on view', 'GET', '/tasks/ID?include=owner', undefined, 'owner'],
    ['an unknown nested relation on list', 'GET', '/tasks/?include=comments.nope', undefined, 'nope'],
    ['a field, not a relation', 'GET', '/tasks/?include=title', undefined, 'title'],
    ['an unknown relation in search', 'POST', '/tasks/search', { include: ['project.nope'] }, 'nope'],
    [
      'four hops on view',
      'GET',
      '/tasks/ID?include=comments.author.profile.user',
      undefined,
      'comments.author.profile.user',
    ],
    ['four hops on list', 'GET', '/tasks/?include=project.owner.profile.user', undefined, 'project.owner.profile.user'],
    [
      'four hops in search',
      'POST',
      '/tasks/search',
      { include: ['comments.task.project.owner'] },
      'comments.task.project.owner',
    ],
    [
      'a four-hop filter path',
      'POST',
      '/tasks/search',
      { filters: [{ field: 'comments.author.profile.user.name', op: 'eq', value: 'x' }] },
      'comments.author.profile.user.name',
    ],
  ] as const)('%s → 422, no data SQL', async (_name, method, path, body, mention) => {
    const g = await seedGraph(ctx);
    const { result: res, sql } = await ctx.countSql(() =>
      ctx.call('admin', method, path.replace('ID', g.task.id as string), body),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error?.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(res.body)).toContain(mention);
    expect(sql.map((q) => q.sql)).toEqual([]);
  });
});

/** Creates `n` tasks, each with a project (owned by a user with a profile), two comments with authors, two labels. */
async function seedMany(ctx: RelationApp, n: number): Promise<void> {
  const labels = [await ctx.ok('POST', '/labels/', { name: 'l1' }), await ctx.ok('POST', '/labels/', { name: 'l2' })];
  for (let i = 0; i < n; i++) {
    const user = await ctx.ok('POST', '/users/', { email: `u${i}@example.com`, name: `U${i}`, password_hash: 'x' });
    await ctx.ok('POST', '/profiles/', { user_id: user.id, bio: `bio ${i}` });
    const project = await ctx.ok('POST', '/projects/', { name: `P${i}`, owner_id: user.id, budget: i });
    const task = await ctx.ok('POST', '/tasks/', {
      title: `T${i}`,
      project_id: project.id,
      tag_ids: labels.map((l) => l.id),
    });
    await ctx.ok('POST', '/comments/', { body: `a${i}`, task_id: task.id, author_id: user.id });
    await ctx.ok('POST', '/comments/', { body: `b${i}`, task_id: task.id, author_id: user.id });
  }
}

describeRelationApp('includes: statements per request (no N+1)', (ctx) => {
  const INCLUDE = ['project.owner.profile', 'comments.author', 'labels'];

  it.each([
    ['list', (limit: number) => ctx.call('admin', 'GET', `/tasks/?include=${INCLUDE.join(',')}&limit=${limit}`)],
    ['search', (limit: number) => ctx.call('admin', 'POST', '/tasks/search', { include: INCLUDE, limit })],
  ] as const)(
    '%s with project.owner.profile, comments.author and labels: same statement count at 10 and 100 rows',
    async (_name, run) => {
      await seedMany(ctx, 100);
      const counts: number[] = [];
      for (const limit of [10, 100]) {
        const { result: res, sql } = await ctx.countSql(() => run(limit));
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const rows = res.body.data as Json[];
        expect(rows).toHaveLength(limit);
        for (const row of rows) {
          const comments = row.comments as Json[];
          expect(comments).toHaveLength(2);
          expect((comments[0]!.author as Json).id).toBeTypeOf('string');
          expect((row.labels as Json[]).length).toBe(2);
          expect((((row.project as Json).owner as Json).profile as Json).bio).toMatch(/^bio \d+$/);
        }
        counts.push(sql.length);
      }
      expect(counts[0], 'statements at limit=10 vs limit=100').toBe(counts[1]);
      // One page query (to-one includes joined, any depth) + one select-in per to-many include.
      expect(counts[0]).toBe(3);
    },
  );

  it('view with includes is a fixed number of statements too', async () => {
    await seedMany(ctx, 3);
    const [task] = await ctx.ok<Json[]>('GET', '/tasks/?limit=1');
    const { result: res, sql } = await ctx.countSql(() =>
      ctx.call('admin', 'GET', `/tasks/${task!.id}?include=${INCLUDE.join(',')}`),
    );
    expect(res.status).toBe(200);
    // The row with its includes (3), and its ETag: the stored row and the ids of its owned labels (2).
    expect(sql.length).toBe(5);
  });
});
