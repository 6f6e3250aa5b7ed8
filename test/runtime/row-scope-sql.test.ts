/**
 * What row filters cost a caller whose roles filter nothing: nothing. The same requests, as the admin,
 * send the same statements (text, order, number of parameters) whether the policies have row filters
 * or not; and a member reading a table its roles do not filter sends what the admin sends.
 */
import { expect, it } from 'vitest';
import { dbManager, type PolicyDocument } from '@core/runtime';
import { describePerDatabase } from '../helpers/databases.js';
import {
  ADMIN,
  POLICIES,
  scopeApi,
  seedWorld,
  startScopeApp,
  UNFILTERED,
  type ScopeApp,
  type World,
} from './row-scope-app.js';

type Step = (ctx: ScopeApp, w: World, token: string) => Promise<unknown>;

/** Reads and writes over every path the scope touches: list, search, by id, includes, relation paths, writes. */
const STEPS: Step[] = [
  (ctx, _w, t) => ctx.call(t, 'GET', '/tasks/?include=project,comments,labels'),
  (ctx, w, t) =>
    ctx.call(t, 'POST', '/tasks/search', {
      filters: [
        { field: 'project.name', op: 'eq', value: w.projects.apollo.name },
        { field: 'comments.body', op: 'isnull', value: false },
        { field: 'project.id', op: 'eq', value: w.projects.apollo.id },
      ],
      sort: [{ field: 'project.name' }],
      include: ['project.owner', 'labels'],
      limit: 1,
    }),
  (ctx, w, t) => ctx.call(t, 'GET', `/tasks/${w.tasks.a1.id}?include=project,comments`),
  (ctx, w, t) =>
    ctx.call(t, 'PATCH', `/tasks/${w.tasks.a2.id}`, { title: 'renamed', project_id: w.projects.apollo.id }),
  (ctx, w, t) => ctx.call(t, 'PUT', `/tasks/${w.tasks.a2.id}`, { title: 'replaced', tag_ids: [w.labels.green.id] }),
  (ctx, w, t) => ctx.call(t, 'POST', '/comments/', { body: 'new', task_id: w.tasks.a1.id, author_id: w.users.ann.id }),
  (ctx, w, t) => ctx.call(t, 'DELETE', `/comments/${w.comments.bobOnB1.id}`),
  (ctx, w, t) => ctx.call(t, 'GET', `/projects/${w.projects.apollo.id}?include=tasks.comments`),
];

/** The statements of each step: their text and how many values they bind. */
async function record(ctx: ScopeApp, w: World, token: string, steps: Step[] = STEPS): Promise<string[][]> {
  const out: string[][] = [];
  for (const step of steps) {
    const { result, sql } = await ctx.statements(() => step(ctx, w, token));
    const status = (result as { statusCode: number }).statusCode;
    expect(status, JSON.stringify((result as { body: string }).body)).toBeLessThan(300);
    out.push(sql.map((q) => `${q.sql} [${q.params.length}]`));
  }
  return out;
}

async function withApp<T>(
  url: string,
  policies: PolicyDocument,
  fn: (ctx: ScopeApp, w: World) => Promise<T>,
): Promise<T> {
  const app = await startScopeApp(url, policies);
  try {
    const ctx = scopeApi('sqlite', app, dbManager.db);
    return await fn(ctx, await seedWorld(ctx));
  } finally {
    await app.close();
    await dbManager.close();
  }
}

describePerDatabase('row filters: no cost without a filter', ({ url }) => {
  it('the admin sends the same statements with and without row filters in the policies', async () => {
    const without = await withApp(url(), UNFILTERED, (ctx, w) => record(ctx, w, ADMIN));
    const withFilters = await withApp(url(), POLICIES, (ctx, w) => record(ctx, w, ADMIN));
    expect(withFilters).toEqual(without);
    // The steps did reach the paths the scope would change (the control).
    expect(without.flat().some((sql) => sql.includes('left join'))).toBe(true);
    expect(without.flat().some((sql) => sql.includes('exists ('))).toBe(true);
  });

  it('a member reading what its roles do not filter sends what the admin sends', async () => {
    const steps: Step[] = [
      (ctx, _w, t) => ctx.call(t, 'GET', '/users/'),
      (ctx, w, t) => ctx.call(t, 'GET', `/users/${w.users.ann.id}`),
      (ctx, _w, t) => ctx.call(t, 'POST', '/users/search', { filters: [{ field: 'name', op: 'eq', value: 'ann' }] }),
    ];
    const [admin, member] = await withApp(url(), POLICIES, async (ctx, w) => [
      await record(ctx, w, ADMIN, steps),
      await record(ctx, w, w.tokens.ann, steps),
    ]);
    expect(member).toEqual(admin);
    expect(admin).toHaveLength(3);
  });
});
