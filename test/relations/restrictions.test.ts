/**
 * Restrictions through relations (policies in `relation-app.ts`):
 * - `noproject` has `tasks.project`: the relation cannot be included, filtered or sorted (403), its
 *   foreign key `project_id` is masked wherever tasks appear and pruned from task bodies;
 * - `nobudget` has `projects.budget`: masked wherever projects appear (directly, nested in a task, in
 *   a user's projects), forbidden as `project.budget` in filter/sort (403), pruned from project bodies;
 * - `?schema=true` documents the includable relations without what is restricted.
 */
import { expect, it } from 'vitest';
import { describeRelationApp, seedGraph, type Json } from './relation-app.js';

describeRelationApp('restricted relation tasks.project', (ctx) => {
  it('project_id is masked from view, list, search and nested tasks', async () => {
    const g = await seedGraph(ctx);
    const view = await ctx.call('noproject', 'GET', `/tasks/${g.task.id}`);
    expect(view.status).toBe(200);
    expect(view.body.data).toMatchObject({ id: g.task.id, title: 'T' });
    expect(view.body.data).not.toHaveProperty('project_id');
    for (const res of [
      await ctx.call('noproject', 'GET', '/tasks/'),
      await ctx.call('noproject', 'POST', '/tasks/search', {}),
    ]) {
      expect(res.status).toBe(200);
      const rows = res.body.data as Json[];
      expect(rows).toHaveLength(1);
      expect(rows[0]).not.toHaveProperty('project_id');
    }
    // Tasks nested under a project or a comment lose the key too.
    const project = await ctx.call('noproject', 'GET', `/projects/${g.project.id}?include=tasks`);
    expect(project.status).toBe(200);
    expect((project.body.data as Json).tasks as Json[]).toHaveLength(1);
    expect(((project.body.data as Json).tasks as Json[])[0]).not.toHaveProperty('project_id');
    const comment = await ctx.call('noproject', 'GET', `/comments/${g.comments[0]!.id}?include=task`);
    expect((comment.body.data as Json).task).toMatchObject({ id: g.task.id });
    expect((comment.body.data as Json).task).not.toHaveProperty('project_id');
    // The admin still sees it.
    expect((await ctx.ok('GET', `/tasks/${g.task.id}`)).project_id).toBe(g.project.id);
  });

  it.each([
    ['?include=project on view', 'GET', '/tasks/ID?include=project', undefined],
    ['?include=project on list', 'GET', '/tasks/?include=project', undefined],
    ['?include=project.owner on list', 'GET', '/tasks/?include=comments,project.owner', undefined],
    ['include in search', 'POST', '/tasks/search', { include: ['project'] }],
    ['a nested include through it, from comments', 'GET', '/comments/?include=task.project', undefined],
    [
      'filter project.name',
      'POST',
      '/tasks/search',
      { filters: [{ field: 'project.name', op: 'eq', value: 'Apollo' }] },
    ],
    ['filter project.id', 'POST', '/tasks/search', { filters: [{ field: 'project.id', op: 'eq', value: 'PROJECT' }] }],
    ['filter project_id', 'POST', '/tasks/search', { filters: [{ field: 'project_id', op: 'isnull', value: false }] }],
    [
      'filter in an or group',
      'POST',
      '/tasks/search',
      {
        filters: [
          {
            op: 'or',
            items: [
              { field: 'title', op: 'eq', value: 'x' },
              { field: 'project.budget', op: 'gt', value: 1 },
            ],
          },
        ],
      },
    ],
    ['sort project.name', 'POST', '/tasks/search', { sort: [{ field: 'project.name', order: 'asc' }] }],
    ['sort project_id', 'POST', '/tasks/search', { sort: [{ field: 'project_id', order: 'asc' }] }],
    [
      'filter task.project.name from comments',
      'POST',
      '/comments/search',
      { filters: [{ field: 'task.project.name', op: 'eq', value: 'x' }] },
    ],
  ] as const)('%s → 403, no data SQL', async (_name, method, path, body) => {
    const g = await seedGraph(ctx);
    const sent =
      body === undefined
        ? undefined
        : JSON.parse(JSON.stringify(body).replace('"PROJECT"', JSON.stringify(g.project.id)));
    const { result: res, sql } = await ctx.countSql(() =>
      ctx.call('noproject', method, path.replace('ID', g.task.id as string), sent),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body.error?.code).toBe('FORBIDDEN');
    expect(sql.map((q) => q.sql)).toEqual([]);
    // The same request is fine for the admin: the 403 is the restriction, not a bad request.
    expect((await ctx.call('admin', method, path.replace('ID', g.task.id as string), sent)).status).toBe(200);
  });

  it('project_id is pruned from create, PUT and PATCH bodies (stored value kept)', async () => {
    const g = await seedGraph(ctx);
    const other = await ctx.ok('POST', '/projects/', { name: 'Other' });
    const created = await ctx.call('noproject', 'POST', '/tasks/', { title: 'mine', project_id: g.project.id });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data).not.toHaveProperty('project_id');
    const id = (created.body.data as Json).id as string;
    expect((await ctx.ok('GET', `/tasks/${id}`)).project_id).toBeNull();

    const patched = await ctx.call('noproject', 'PATCH', `/tasks/${g.task.id}`, { title: 'p', project_id: other.id });
    expect(patched.status).toBe(200);
    const put = await ctx.call('noproject', 'PUT', `/tasks/${g.task.id}`, { title: 'q', project_id: other.id });
    expect(put.status).toBe(200);
    expect(await ctx.ok('GET', `/tasks/${g.task.id}`)).toMatchObject({ title: 'q', project_id: g.project.id });
    // Even an unknown id is pruned before anything looks at it.
    const bogus = await ctx.call('noproject', 'PATCH', `/tasks/${g.task.id}`, { project_id: 'not-a-uuid' });
    expect(bogus.status).toBe(200);
  });

  it('?schema=true leaves project_id and the project relation out, and lists the entry', async () => {
    const res = await ctx.call('noproject', 'GET', '/tasks/?schema=true');
    expect(res.status).toBe(200);
    const doc = res.body.data as Json;
    expect(doc.title).toBe('TaskOut');
    expect(Object.keys(doc.properties as Json)).not.toContain('project_id');
    expect(doc['x-relations']).toBeDefined();
    expect(Object.keys(doc['x-relations'] as Json).sort()).toEqual(['comments', 'labels']);
    expect((res.body.meta as Json).restricted_fields).toContain('tasks.project');
    // The create body documents no project_id either.
    const create = await ctx.call('noproject', 'POST', '/tasks/?schema=true', {});
    expect(Object.keys((create.body.data as Json).properties as Json)).not.toContain('project_id');
    // Admin: both are there.
    const admin = await ctx.call('admin', 'GET', '/tasks/?schema=true');
    expect(Object.keys((admin.body.data as Json).properties as Json)).toContain('project_id');
    expect(Object.keys((admin.body.data as Json)['x-relations'] as Json)).toContain('project');
  });
});

describeRelationApp('restricted target field projects.budget', (ctx) => {
  it('budget is masked wherever projects appear', async () => {
    const g = await seedGraph(ctx);
    const seen: Json[] = [];
    const view = await ctx.call('nobudget', 'GET', `/projects/${g.project.id}`);
    seen.push(view.body.data as Json);
    seen.push(...((await ctx.call('nobudget', 'GET', '/projects/')).body.data as Json[]));
    seen.push(...((await ctx.call('nobudget', 'POST', '/projects/search', {})).body.data as Json[]));
    seen.push((await ctx.call('nobudget', 'GET', `/tasks/${g.task.id}?include=project`)).body.data as Json);
    seen.push(...((await ctx.call('nobudget', 'GET', '/tasks/?include=project')).body.data as Json[]));
    seen.push(
      ...((await ctx.call('nobudget', 'POST', '/tasks/search', { include: ['project.owner'] })).body.data as Json[]),
    );
    seen.push(
      ...(((await ctx.call('nobudget', 'GET', `/users/${g.user.id}?include=projects`)).body.data as Json)
        .projects as Json[]),
    );
    const comment = (await ctx.call('nobudget', 'GET', `/comments/${g.comments[0]!.id}?include=task.project`)).body
      .data as Json;
    seen.push(comment.task as Json);
    const projects = seen.map((row) => ('project' in row ? (row.project as Json) : row));
    expect(projects).toHaveLength(8);
    for (const project of projects) {
      expect(project).toMatchObject({ id: g.project.id, name: 'Apollo' });
      expect(project).not.toHaveProperty('budget');
    }
    // Only the budget: the task's own fields and project_id are still there.
    expect(seen[3]).toMatchObject({ id: g.task.id, project_id: g.project.id });
    expect((await ctx.ok('GET', `/tasks/${g.task.id}?include=project`)).project).toMatchObject({ budget: 1000 });
  });

  it.each([
    ['filter project.budget on tasks', '/tasks/search', { filters: [{ field: 'project.budget', op: 'gt', value: 1 }] }],
    ['sort project.budget on tasks', '/tasks/search', { sort: [{ field: 'project.budget', order: 'desc' }] }],
    ['filter budget on projects', '/projects/search', { filters: [{ field: 'budget', op: 'isnull', value: false }] }],
    ['sort budget on projects', '/projects/search', { sort: [{ field: 'budget', order: 'asc' }] }],
    [
      'filter task.project.budget on comments',
      '/comments/search',
      { filters: [{ field: 'task.project.budget', op: 'eq', value: 1000 }] },
    ],
    [
      'filter projects.budget on users',
      '/users/search',
      { filters: [{ field: 'projects.budget', op: 'eq', value: 1000 }] },
    ],
  ] as const)('%s → 403, no data SQL', async (_name, path, body) => {
    await seedGraph(ctx);
    const { result: res, sql } = await ctx.countSql(() => ctx.call('nobudget', 'POST', path, body));
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body.error?.code).toBe('FORBIDDEN');
    expect(sql.map((q) => q.sql)).toEqual([]);
    expect((await ctx.call('admin', 'POST', path, body)).status).toBe(200);
  });

  it('the project include itself and the other project fields stay usable', async () => {
    const g = await seedGraph(ctx);
    const res = await ctx.call('nobudget', 'POST', '/tasks/search', {
      filters: [{ field: 'project.name', op: 'eq', value: 'Apollo' }],
      sort: [{ field: 'project.created_at', order: 'asc' }],
      include: ['project'],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((res.body.data as Json[]).map((t) => t.id)).toEqual([g.task.id]);
  });

  it('budget is pruned from project bodies (stored value kept)', async () => {
    const created = await ctx.call('nobudget', 'POST', '/projects/', { name: 'Mine', budget: 5 });
    expect(created.status).toBe(201);
    const id = (created.body.data as Json).id as string;
    expect((await ctx.ok('GET', `/projects/${id}`)).budget).toBeNull();
    await ctx.ok('PATCH', `/projects/${id}`, { budget: 7 });
    expect((await ctx.call('nobudget', 'PATCH', `/projects/${id}`, { budget: 9, name: 'Mine2' })).status).toBe(200);
    expect((await ctx.call('nobudget', 'PUT', `/projects/${id}`, { name: 'Mine3', budget: -1 })).status).toBe(200);
    expect(await ctx.ok('GET', `/projects/${id}`)).toMatchObject({ name: 'Mine3', budget: 7 });
  });

  it('?schema=true documents includable relations without budget', async () => {
    const tasks = await ctx.call('nobudget', 'GET', '/tasks/?schema=true');
    expect(tasks.status).toBe(200);
    const relations = (tasks.body.data as Json)['x-relations'] as Record<string, Json>;
    expect(Object.keys(relations).sort()).toEqual(['comments', 'labels', 'project']);
    const project = relations.project!;
    expect(Object.keys(project.properties as Json).sort()).toEqual(['created_at', 'id', 'name', 'owner_id']);
    expect(project.required).not.toContain('budget');
    expect((tasks.body.meta as Json).restricted_fields).toEqual(['projects.budget']);

    const projects = await ctx.call('nobudget', 'GET', '/projects/?schema=true');
    expect(Object.keys((projects.body.data as Json).properties as Json)).not.toContain('budget');
    const users = await ctx.call('nobudget', 'GET', `/users/?schema=true`);
    const userProjects = ((users.body.data as Json)['x-relations'] as Record<string, Json>).projects!;
    expect(Object.keys((userProjects.items as Json).properties as Json)).not.toContain('budget');

    const admin = await ctx.call('admin', 'GET', '/tasks/?schema=true');
    const adminProject = ((admin.body.data as Json)['x-relations'] as Record<string, Json>).project!;
    expect(Object.keys(adminProject.properties as Json)).toContain('budget');
    expect((admin.body.meta as Json).restricted_fields).toEqual([]);
  });
});

describeRelationApp('two restricted roles on the same reads', (ctx) => {
  it('each keeps its own mask when their requests alternate (compiled reads are kept per restriction set)', async () => {
    const g = await seedGraph(ctx);
    const first = (data: unknown): Json => (Array.isArray(data) ? data[0] : data) as Json;
    for (let round = 0; round < 2; round++) {
      for (const path of [`/tasks/${g.task.id}`, '/tasks/']) {
        const noproject = first((await ctx.call('noproject', 'GET', path)).body.data);
        const nobudget = first((await ctx.call('nobudget', 'GET', path)).body.data);
        expect(noproject).toMatchObject({ id: g.task.id });
        expect(noproject).not.toHaveProperty('project_id');
        expect(nobudget).toMatchObject({ id: g.task.id, project_id: g.project.id });
      }
    }
  });
});
