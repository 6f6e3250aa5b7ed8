/**
 * Fields bound to a token claim by a row scope, where the create and update schemas require them:
 * comments' `task_id` (required) is bound to the `task` claim, for a role by the policies' row filters
 * and for some tokens by a scope written in code. Those callers may leave it out of a POST or PUT body
 * (and `?schema=true` says so); every other caller must still send it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FilterNode, type PolicyDocument, registerRowScope } from '@core/runtime';
import { Comment } from '../../fixtures/golden/relation-graph/expected/src/apps/comments/models.js';
import { ADMIN, describeScopeApp, signClaims, UNFILTERED, type Json, type ScopeApp } from './row-scope-app.js';

const BOUND_TO_TASK: FilterNode = { field: 'task_id', op: 'eq', value: { $claim: 'task' } };

const POLICIES: PolicyDocument = {
  roles: {
    admin: { permissions: ['*'], restricted_fields: [] },
    commenter: {
      permissions: ['comments:*', 'tasks:view', 'tasks:listview'],
      restricted_fields: [],
      row_filters: { comments: [BOUND_TO_TASK] },
    },
    anonymous: { permissions: [], restricted_fields: [] },
  },
};

/** The suite for callers whose comments are bound to their `task` claim (`bound` signs such a token). */
function boundFieldSuite(ctx: ScopeApp, bound: (claims: Json) => string): void {
  let tasks: { mine: Json; other: Json };
  let token: string;

  beforeAll(async () => {
    tasks = {
      mine: await ctx.admin('POST', '/tasks/', { title: 'mine' }),
      other: await ctx.admin('POST', '/tasks/', { title: 'other' }),
    };
    token = bound({ sub: 'c', task: tasks.mine.id });
  });

  const storedTask = async (id: unknown) =>
    (await ctx.rows('select task_id from comments where id = ?', [id]))[0]?.['task_id'];

  it('a create without the bound field is 201, with the claim’s value stored', async () => {
    const res = await ctx.call(token, 'POST', '/comments/', { body: 'no task sent' });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data as Json;
    expect(data.task_id).toBe(tasks.mine.id);
    expect(await storedTask(data.id)).toBe(tasks.mine.id);
  });

  it('a value the client sends for the bound field is accepted and ignored', async () => {
    const res = await ctx.call(token, 'POST', '/comments/', { body: 'other task sent', task_id: tasks.other.id });
    expect(res.statusCode, res.body).toBe(201);
    expect(await storedTask(res.json().data.id)).toBe(tasks.mine.id);
  });

  it('a caller whose scope binds nothing still gets 422 without the required field', async () => {
    const res = await ctx.call(ADMIN, 'POST', '/comments/', { body: 'admin, no task' });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error.code).toBe('VALIDATION_ERROR');
    expect(res.json().error.details).toContainEqual(expect.objectContaining({ path: 'task_id' }));
  });

  it('a token without the claim is refused with 403, not asked for the field', async () => {
    const res = await ctx.call(bound({ sub: 'c' }), 'POST', '/comments/', { body: 'no claim' });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.details[0].reason).toBe('row_filter');
  });

  it('a replace without the bound field is 200 and keeps the stored value; the admin gets 422', async () => {
    const created = (await ctx.call(token, 'POST', '/comments/', { body: 'to replace' })).json().data as Json;
    const res = await ctx.call(token, 'PUT', `/comments/${created.id}`, { body: 'replaced' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ body: 'replaced', task_id: tasks.mine.id });
    expect(await storedTask(created.id)).toBe(tasks.mine.id);

    const admin = await ctx.call(ADMIN, 'PUT', `/comments/${created.id}`, { body: 'admin replace' });
    expect(admin.statusCode, admin.body).toBe(422);
    expect(admin.json().error.details).toContainEqual(expect.objectContaining({ path: 'task_id' }));
  });

  it('?schema=true documents the bound field as optional for that caller only', async () => {
    for (const [method, url] of [
      ['POST', '/comments/?schema=true'],
      ['PUT', `/comments/${tasks.mine.id}?schema=true`],
    ] as const) {
      const mine = await ctx.call(token, method, url, {});
      expect(mine.statusCode, mine.body).toBe(200);
      expect(Object.keys(mine.json().data.properties)).toContain('task_id');
      expect(mine.json().data.required).toEqual(['body']);
      const admin = await ctx.call(ADMIN, method, url, {});
      expect(admin.statusCode, admin.body).toBe(200);
      expect(admin.json().data.required).toEqual(['body', 'task_id']);
    }
  });

  it('the caller’s OpenAPI document agrees: the bound field is optional in its create and replace bodies', async () => {
    const required = async (who: string) => {
      const res = await ctx.call(who, 'GET', '/docs/json');
      expect(res.statusCode, res.body).toBe(200);
      const schemas = res.json().components.schemas as Record<string, { required?: string[] }>;
      return [schemas['CommentCreate']?.required, schemas['CommentUpdate']?.required];
    };
    expect(await required(token)).toEqual([['body'], ['body']]);
    expect(await required(ADMIN)).toEqual([
      ['body', 'task_id'],
      ['body', 'task_id'],
    ]);
  });
}

describeScopeApp('claim-bound required fields: row filters', POLICIES, (ctx: ScopeApp) => {
  boundFieldSuite(ctx, (claims) => signClaims({ ...claims, roles: ['commenter'] }));
});

describeScopeApp(
  'claim-bound required fields: a row scope in code',
  UNFILTERED,
  (ctx: ScopeApp) => {
    afterAll(() => registerRowScope(Comment, null));
    // Tokens marked `scoped` are bound to their `task` claim, claim or not; other tokens are not scoped.
    boundFieldSuite(ctx, (claims) => signClaims({ ...claims, roles: ['admin'], scoped: true }));
  },
  () => registerRowScope(Comment, (ctx) => (ctx.claims?.['scoped'] === true ? [BOUND_TO_TASK] : null)),
);
