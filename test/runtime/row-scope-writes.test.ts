/**
 * Row filters on the write side, through HTTP (policies in `row-scope-app.ts`): by-id verbs on a
 * hidden row, `If-Match` on one, fields bound to a claim, writes that would move a row out of the
 * filter, related ids of hidden rows, many-to-many links to hidden rows, and the statements a scoped
 * create sends.
 */
import { beforeAll, expect, it } from 'vitest';
import { ProjectRepository } from '../../fixtures/golden/relation-graph/expected/src/apps/projects/repositories.js';
import { loadPolicies, runWithContext } from '@core/runtime';
import {
  ADMIN,
  describeScopeApp,
  expectSame404,
  ids,
  POLICIES,
  seedWorld,
  unknownId,
  type Json,
  type ScopeApp,
  type World,
} from './row-scope-app.js';

describeScopeApp('row filters: writes', POLICIES, (ctx: ScopeApp) => {
  let w: World;
  beforeAll(async () => {
    w = await seedWorld(ctx);
  });

  const stored = async (table: string, id: unknown) => (await ctx.rows(`select * from ${table} where id = ?`, [id]))[0];

  it.each([
    ['PUT', { title: 'taken' }, undefined],
    ['PATCH', { title: 'taken' }, undefined],
    ['DELETE', undefined, undefined],
    ['PATCH', { title: 'taken' }, 'current'],
    ['PATCH', { title: 'taken' }, '"stale-tag-0000000000000"'],
    ['DELETE', undefined, '*'],
  ] as const)(
    '%s %j with If-Match %s on a hidden task: the bytes of a missing id, nothing changed',
    async (method, body, ifMatch) => {
      const target = w.tasks.b1.id as string;
      const before = await stored('tasks', target);
      const tag = (await ctx.call(w.tokens.bob, 'GET', `/tasks/${target}`)).headers.etag as string;
      const headers: Record<string, string> =
        ifMatch === undefined ? {} : { 'if-match': ifMatch === 'current' ? tag : ifMatch };
      const hidden = await ctx.call(w.tokens.ann, method, `/tasks/${target}`, body, headers);
      const missing = await ctx.call(w.tokens.ann, method, `/tasks/${unknownId()}`, body, headers);
      expectSame404(hidden, missing);
      expect(await stored('tasks', target)).toEqual(before);
    },
  );

  it('a hidden row with a hidden related id in the body fails as a missing row does', async () => {
    // Without If-Match the related ids are checked before the row is found missing: 422 for both.
    const body = { project_id: w.projects.borealis.id };
    const hidden = await ctx.call(w.tokens.ann, 'PATCH', `/tasks/${w.tasks.b1.id}`, body);
    const missing = await ctx.call(w.tokens.ann, 'PATCH', `/tasks/${unknownId()}`, body);
    expect(hidden.statusCode).toBe(422);
    expect(hidden.body).toBe(missing.body);
  });

  it('a create takes a field bound to a claim from the token, whatever the body says', async () => {
    for (const extra of [{ author_id: w.users.bob.id }, {}]) {
      const res = await ctx.call(w.tokens.ann, 'POST', '/comments/', {
        body: 'planted',
        task_id: w.tasks.a1.id,
        ...extra,
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data).toMatchObject({ author_id: w.users.ann.id });
      expect(await stored('comments', res.json().data.id)).toMatchObject({ author_id: w.users.ann.id });
    }
  });

  it('a create by a token without the bound claim is 403 and writes nothing', async () => {
    const before = await ctx.rows('select id from comments');
    const res = await ctx.call(w.tokens.nosub, 'POST', '/comments/', { body: 'x', task_id: w.tasks.a1.id });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ success: false, error: { code: 'FORBIDDEN' } });
    expect(await ctx.rows('select id from comments')).toEqual(before);
  });

  it('replace and patch keep a field bound to a claim as stored', async () => {
    const mine = w.comments.annOnA1;
    for (const [method, body] of [
      ['PATCH', { author_id: w.users.bob.id, body: 'patched' }],
      ['PUT', { author_id: w.users.bob.id, body: 'replaced', task_id: w.tasks.a1.id }],
      ['PUT', { body: 'replaced again', task_id: w.tasks.a1.id }],
    ] as const) {
      const res = await ctx.call(w.tokens.ann, method, `/comments/${mine.id}`, body);
      expect(res.statusCode, res.body).toBe(200);
      expect(await stored('comments', mine.id)).toMatchObject({ author_id: w.users.ann.id, body: body.body });
    }
  });

  it('a create whose row falls outside the filter is 403 and writes nothing', async () => {
    const count = async () => (await ctx.rows('select id from projects')).length;
    const before = await count();
    // The owner is inside an `or`, so it is not bound: a private project owned by bob is out of ann's rows.
    const res = await ctx.call(w.tokens.ann, 'POST', '/projects/', { name: 'Planted', owner_id: w.users.bob.id });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: { code: 'FORBIDDEN' } });
    expect(await count()).toBe(before);
    // The other branch lets it in (the control).
    const ok = await ctx.call(w.tokens.ann, 'POST', '/projects/', { name: 'Public planted', owner_id: w.users.bob.id });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(await count()).toBe(before + 1);
  });

  it.each([
    ['PATCH owner_id to bob', 'PATCH', { owner_id: 'BOB' }],
    ['PATCH owner_id to null', 'PATCH', { owner_id: null }],
    ['PUT leaving the owner out', 'PUT', { name: 'Apollo renamed' }],
  ] as const)('%s moves ann’s project out of her filter: 403, unchanged', async (_what, method, body) => {
    const id = w.projects.apollo.id as string;
    const before = await stored('projects', id);
    const payload = JSON.parse(JSON.stringify(body).replace('"BOB"', JSON.stringify(w.users.bob.id)));
    const res = await ctx.call(w.tokens.ann, method, `/projects/${id}`, payload);
    expect(res.statusCode).toBe(403);
    expect(await stored('projects', id)).toEqual(before);
  });

  it('moving a task into a project the caller sees but whose tasks it may not change is 403', async () => {
    const id = w.tasks.a2.id as string;
    const before = await stored('tasks', id);
    // ann sees the public square, but its tasks are bob's: the task would leave her filter.
    const res = await ctx.call(w.tokens.ann, 'PATCH', `/tasks/${id}`, { project_id: w.projects.square.id });
    expect(res.statusCode).toBe(403);
    expect(await stored('tasks', id)).toEqual(before);
    const ok = await ctx.call(w.tokens.ann, 'PATCH', `/tasks/${id}`, { title: 'a2 renamed' });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('a related id naming a hidden row is refused as an unknown one', async () => {
    const refusal = async (method: 'POST' | 'PATCH', url: string, body: Json) => {
      const res = await ctx.call(w.tokens.ann, method, url, body);
      expect(res.statusCode).toBe(422);
      const detail = res.json().error.details[0];
      return { path: detail.path, reason: detail.reason };
    };
    const hidden = await refusal('PATCH', `/tasks/${w.tasks.a1.id}`, { project_id: w.projects.borealis.id });
    const unknown = await refusal('PATCH', `/tasks/${w.tasks.a1.id}`, { project_id: unknownId() });
    expect(hidden).toEqual(unknown);
    expect(hidden).toEqual({ path: 'project_id', reason: 'not_found' });
    const hiddenTag = await refusal('PATCH', `/tasks/${w.tasks.a1.id}`, { tag_ids: [w.labels.blue.id] });
    expect(hiddenTag).toEqual({ path: 'tag_ids', reason: 'not_found' });
    const hiddenTask = await refusal('POST', '/comments/', { body: 'x', task_id: w.tasks.b1.id });
    expect(hiddenTask).toEqual(await refusal('POST', '/comments/', { body: 'x', task_id: unknownId() }));
  });

  it('PUT and PATCH of tag_ids keep the links to labels the caller cannot see', async () => {
    const task = w.tasks.a1;
    const linked = async () =>
      ids(((await ctx.call(ADMIN, 'GET', `/tasks/${task.id}?include=labels`)).json().data as Json).labels as Json[]);
    expect(await linked()).toEqual(ids([w.labels.red, w.labels.blue]));
    const put = await ctx.call(w.tokens.ann, 'PUT', `/tasks/${task.id}`, {
      title: task.title,
      project_id: w.projects.apollo.id,
      tag_ids: [w.labels.green.id],
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(await linked()).toEqual(ids([w.labels.green, w.labels.blue]));
    const seen = (await ctx.call(w.tokens.ann, 'GET', `/tasks/${task.id}?include=labels`)).json().data as Json;
    expect(ids(seen.labels as Json[])).toEqual(ids([w.labels.green]));
    const patch = await ctx.call(w.tokens.ann, 'PATCH', `/tasks/${task.id}`, { tag_ids: [] });
    expect(patch.statusCode, patch.body).toBe(200);
    expect(await linked()).toEqual(ids([w.labels.blue]));
  });

  it('delete of a hidden row leaves it; its owner can still delete it', async () => {
    const c = await ctx.admin('POST', '/comments/', {
      body: 'bob’s',
      task_id: w.tasks.b1.id,
      author_id: w.users.bob.id,
    });
    const hidden = await ctx.call(w.tokens.ann, 'DELETE', `/comments/${c.id}`);
    expectSame404(hidden, await ctx.call(w.tokens.ann, 'DELETE', `/comments/${unknownId()}`));
    expect(await stored('comments', c.id)).toBeDefined();
    expect((await ctx.call(w.tokens.bob, 'DELETE', `/comments/${c.id}`)).statusCode).toBe(200);
    expect(await stored('comments', c.id)).toBeUndefined();
  });

  it('a scoped create checks its row in the INSERT’s transaction; an unscoped one may send it alone', async () => {
    const policies = loadPolicies(POLICIES);
    const repository = new ProjectRepository();
    // No related id to check first: nothing else would keep the transaction.
    const create = (claims: Json, roles: string[], name: string) =>
      ctx.statements(() =>
        runWithContext(policies.contextFor({ sub: (claims.sub as string) ?? null, roles, claims }), () =>
          repository.create({ name }),
        ),
      );
    const member = await create({ sub: w.users.ann.id }, ['member'], 'Public direct');
    const verbs = member.sql.map((q) => q.sql.trim().split(/\s+/)[0]!.toLowerCase());
    expect(verbs.indexOf('begin')).toBeGreaterThanOrEqual(0);
    expect(verbs.indexOf('insert')).toBeGreaterThan(verbs.indexOf('begin'));
    // The check reads the written row inside the transaction, before the commit.
    expect(verbs.lastIndexOf('select')).toBeGreaterThan(verbs.indexOf('insert'));
    expect(verbs.indexOf('commit')).toBeGreaterThan(verbs.lastIndexOf('select'));
    expect(member.result).toMatchObject({ name: 'Public direct' });
    const admin = await create({ sub: 'root' }, ['admin'], 'Admin direct');
    const adminVerbs = admin.sql.map((q) => q.sql.trim().split(/\s+/)[0]!.toLowerCase());
    expect(adminVerbs).toEqual(['insert']);
  });
});
