/**
 * Each relation kind of the generated relation graph, end to end over HTTP: many-to-one (task →
 * project), one-to-many (task → comments, project → tasks), many-to-many (task ↔ labels, written as
 * `tag_ids`), one-to-one (profile ↔ user, both directions); unknown related ids; delete rules.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { describeRelationApp, seedGraph, type Json } from './relation-app.js';

const ids = (rows: unknown): string[] => (rows as Json[]).map((r) => r.id as string).sort();

describeRelationApp('relation kinds', (ctx) => {
  it('many-to-one: project_id is set on create, changed by PUT/PATCH, cleared with null, and returned', async () => {
    const a = await ctx.ok('POST', '/projects/', { name: 'A' });
    const b = await ctx.ok('POST', '/projects/', { name: 'B' });
    const task = await ctx.ok('POST', '/tasks/', { title: 't', project_id: a.id });
    expect(task.project_id).toBe(a.id);
    expect(task).not.toHaveProperty('project'); // not embedded unless included

    const patched = await ctx.ok('PATCH', `/tasks/${task.id}`, { project_id: b.id });
    expect(patched.project_id).toBe(b.id);
    expect((await ctx.ok('GET', `/tasks/${task.id}`)).project_id).toBe(b.id);

    const put = await ctx.ok('PUT', `/tasks/${task.id}`, { title: 't2', project_id: a.id });
    expect(put.project_id).toBe(a.id);
    // PUT is a replace: the absent key returns to its default (null).
    expect((await ctx.ok('PUT', `/tasks/${task.id}`, { title: 't3' })).project_id).toBeNull();
    await ctx.ok('PATCH', `/tasks/${task.id}`, { project_id: a.id });
    expect((await ctx.ok('PATCH', `/tasks/${task.id}`, { project_id: null })).project_id).toBeNull();
  });

  it('many-to-one: ?include=project embeds the project on view and list; a null link embeds null', async () => {
    const g = await seedGraph(ctx);
    const orphan = await ctx.ok('POST', '/tasks/', { title: 'orphan' });
    const view = await ctx.ok('GET', `/tasks/${g.task.id}?include=project`);
    expect(view.project).toEqual(g.project);
    const list = await ctx.ok<Json[]>('GET', '/tasks/?include=project');
    const byId = new Map(list.map((t) => [t.id, t]));
    expect(byId.get(g.task.id)?.project).toEqual(g.project);
    expect(byId.get(orphan.id)?.project).toBeNull();
  });

  it('one-to-many: ?include=comments on a task and ?include=tasks on a project', async () => {
    const g = await seedGraph(ctx);
    const bare = await ctx.ok('POST', '/tasks/', { title: 'bare', project_id: g.project.id });
    const view = await ctx.ok('GET', `/tasks/${g.task.id}?include=comments`);
    expect(ids(view.comments)).toEqual(ids(g.comments));
    expect((view.comments as Json[]).find((c) => c.body === 'first')).toEqual(g.comments[0]);
    expect((await ctx.ok('GET', `/tasks/${bare.id}?include=comments`)).comments).toEqual([]);

    const project = await ctx.ok('GET', `/projects/${g.project.id}?include=tasks`);
    expect(ids(project.tasks)).toEqual([g.task.id, bare.id].sort());
  });

  it('many-to-many: tag_ids sets the labels on create, replaces them on PUT/PATCH; ?include=labels both ways', async () => {
    const g = await seedGraph(ctx);
    const view = await ctx.ok('GET', `/tasks/${g.task.id}?include=labels`);
    expect(ids(view.labels)).toEqual(ids(g.labels));
    expect(view).not.toHaveProperty('tag_ids');

    const third = await ctx.ok('POST', '/labels/', { name: 'docs' });
    await ctx.ok('PATCH', `/tasks/${g.task.id}`, { tag_ids: [third.id] });
    expect(ids((await ctx.ok('GET', `/tasks/${g.task.id}?include=labels`)).labels)).toEqual([third.id]);
    // A PATCH without tag_ids leaves the labels alone.
    await ctx.ok('PATCH', `/tasks/${g.task.id}`, { title: 'renamed' });
    expect(ids((await ctx.ok('GET', `/tasks/${g.task.id}?include=labels`)).labels)).toEqual([third.id]);
    await ctx.ok('PUT', `/tasks/${g.task.id}`, { title: 'again', tag_ids: [g.labels[0]!.id, third.id] });
    expect(ids((await ctx.ok('GET', `/tasks/${g.task.id}?include=labels`)).labels)).toEqual(
      [g.labels[0]!.id, third.id].sort(),
    );
    await ctx.ok('PATCH', `/tasks/${g.task.id}`, { tag_ids: [] });
    expect((await ctx.ok('GET', `/tasks/${g.task.id}?include=labels`)).labels).toEqual([]);

    // The inverse side: a label's tasks.
    await ctx.ok('PATCH', `/tasks/${g.task.id}`, { tag_ids: [third.id] });
    const label = await ctx.ok('GET', `/labels/${third.id}?include=tasks`);
    expect(ids(label.tasks)).toEqual([g.task.id]);
  });

  it('one-to-one: profile → user (owning side, user_id) and user → profile (inverse side)', async () => {
    const g = await seedGraph(ctx);
    const lonely = await ctx.ok('POST', '/users/', { email: 'bob@example.com', name: 'Bob', password_hash: 'x' });
    expect(g.profile.user_id).toBe(g.user.id);
    const profile = await ctx.ok('GET', `/profiles/${g.profile.id}?include=user`);
    expect(profile.user).toEqual(g.user);
    expect(profile.user).not.toHaveProperty('password_hash');

    const user = await ctx.ok('GET', `/users/${g.user.id}?include=profile`);
    expect(user.profile).toEqual(g.profile);
    expect((await ctx.ok('GET', `/users/${lonely.id}?include=profile`)).profile).toBeNull();

    // The owning key is unique: a second profile for the same user is a conflict, not a 500.
    const dup = await ctx.call('admin', 'POST', '/profiles/', { user_id: g.user.id });
    expect(dup.status, JSON.stringify(dup.body)).toBe(409);
    expect(dup.body.error?.code).toBe('CONFLICT');
    expect(dup.body.message).toContain('user_id');
  });

  it.each([
    [
      'POST /tasks/ with an unknown project_id',
      'POST',
      '/tasks/',
      () => ({ title: 't', project_id: randomUUID() }),
      'project_id',
    ],
    [
      'POST /tasks/ with an unknown tag id',
      'POST',
      '/tasks/',
      () => ({ title: 't', tag_ids: [randomUUID()] }),
      'tag_ids',
    ],
    [
      'POST /comments/ with an unknown task_id',
      'POST',
      '/comments/',
      () => ({ body: 'b', task_id: randomUUID() }),
      'task_id',
    ],
    [
      'POST /comments/ with an unknown author_id',
      'POST',
      '/comments/',
      () => ({ body: 'b', task_id: 'TASK', author_id: randomUUID() }),
      'author_id',
    ],
    ['POST /profiles/ with an unknown user_id', 'POST', '/profiles/', () => ({ user_id: randomUUID() }), 'user_id'],
    [
      'POST /projects/ with an unknown owner_id',
      'POST',
      '/projects/',
      () => ({ name: 'p', owner_id: randomUUID() }),
      'owner_id',
    ],
    [
      'PATCH /tasks/{id} with an unknown project_id',
      'PATCH',
      '/tasks/TASK',
      () => ({ project_id: randomUUID() }),
      'project_id',
    ],
    [
      'PATCH /tasks/{id} with an unknown tag id',
      'PATCH',
      '/tasks/TASK',
      () => ({ tag_ids: [randomUUID()] }),
      'tag_ids',
    ],
    [
      'PUT /tasks/{id} with an unknown project_id',
      'PUT',
      '/tasks/TASK',
      () => ({ title: 't', project_id: randomUUID() }),
      'project_id',
    ],
  ] as const)('%s → 422 naming the key, never 500, and nothing written', async (_name, method, path, makeBody, key) => {
    const task = await ctx.ok('POST', '/tasks/', { title: 'existing' });
    const body = JSON.parse(JSON.stringify(makeBody()).replace('"TASK"', JSON.stringify(task.id))) as Json;
    const before = {
      tasks: await ctx.count('tasks'),
      comments: await ctx.count('comments'),
      profiles: await ctx.count('profiles'),
    };
    const res = await ctx.call('admin', method, path.replace('TASK', task.id as string), body);
    // The runtime checks related ids before writing: a 422 naming the key (a 409 from the
    // database's foreign key would also be acceptable, but is not what Core does).
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error?.code).toBe('VALIDATION_ERROR');
    expect(res.body.error?.details).toEqual([expect.objectContaining({ path: key, reason: 'not_found' })]);
    expect({
      tasks: await ctx.count('tasks'),
      comments: await ctx.count('comments'),
      profiles: await ctx.count('profiles'),
    }).toEqual(before);
    const after = await ctx.ok('GET', `/tasks/${task.id}?include=labels`);
    expect(after).toMatchObject({ title: 'existing', project_id: null, labels: [] });
  });

  it('a malformed related id is a 422 naming the field', async () => {
    const res = await ctx.call('admin', 'POST', '/tasks/', { title: 't', project_id: 'not-a-uuid' });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.error?.details)).toContain('project_id');
  });

  it('on_delete cascade: deleting a task deletes its comments; deleting a user deletes its profile', async () => {
    const g = await seedGraph(ctx);
    await ctx.ok('DELETE', `/tasks/${g.task.id}`);
    expect(await ctx.count('comments')).toBe(0);
    // The pivot rows of the task's labels go too; the labels stay.
    expect(await ctx.count('labels')).toBe(2);
    for (const label of g.labels) expect((await ctx.ok('GET', `/labels/${label.id}?include=tasks`)).tasks).toEqual([]);

    await ctx.ok('DELETE', `/users/${g.user.id}`);
    expect(await ctx.count('profiles')).toBe(0);
    expect((await ctx.call('admin', 'GET', `/profiles/${g.profile.id}`)).status).toBe(404);
  });

  it('on_delete restrict: a user who wrote comments cannot be deleted (409, nothing deleted)', async () => {
    const g = await seedGraph(ctx);
    const res = await ctx.call('admin', 'DELETE', `/users/${g.user.id}`);
    expect(res.status).toBe(409);
    expect(res.body.error?.code).toBe('CONFLICT');
    expect(res.body.message).toMatch(
      /^Cannot delete this users record: (comments|other) records still refer to it\. Delete or reassign them first\.$/,
    );
    expect((await ctx.call('admin', 'GET', `/users/${g.user.id}`)).status).toBe(200);
    expect((await ctx.ok('GET', `/comments/${g.comments[0]!.id}`)).author_id).toBe(g.user.id);
  });

  it('on_delete set null: deleting a project nulls task.project_id; deleting a user nulls project.owner_id', async () => {
    const g = await seedGraph(ctx);
    await ctx.ok('DELETE', `/projects/${g.project.id}`);
    expect((await ctx.ok('GET', `/tasks/${g.task.id}`)).project_id).toBeNull();

    // The user's comments restrict deletes: remove them first.
    for (const comment of g.comments) await ctx.ok('DELETE', `/comments/${comment.id}`);
    const other = await ctx.ok('POST', '/projects/', { name: 'Other', owner_id: g.user.id });
    await ctx.ok('DELETE', `/users/${g.user.id}`);
    expect((await ctx.ok('GET', `/projects/${other.id}`)).owner_id).toBeNull();
  });

  it('deleting a label removes it from its tasks (pivot rows), not the tasks', async () => {
    const g = await seedGraph(ctx);
    await ctx.ok('DELETE', `/labels/${g.labels[0]!.id}`);
    expect(ids((await ctx.ok('GET', `/tasks/${g.task.id}?include=labels`)).labels)).toEqual([g.labels[1]!.id]);
  });
});
