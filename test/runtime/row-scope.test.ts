/**
 * Row filters on the read side, through HTTP (policies in `row-scope-app.ts`): list, search, cursors,
 * by id, includes, relation paths in filters and sorts, for two members, a member who is also an
 * auditor, tokens lacking a claim or carrying it with the wrong type, and an admin.
 */
import { beforeAll, expect, it } from 'vitest';
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

describeScopeApp('row filters: reads', POLICIES, (ctx: ScopeApp) => {
  let w: World;
  beforeAll(async () => {
    w = await seedWorld(ctx);
  });

  const list = async (token: string, url: string) => {
    const res = await ctx.call(token, 'GET', url);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: Json[]; meta: { next_cursor: string | null; has_more: boolean } | null };
  };
  const search = async (token: string, table: string, body: Json = {}) => {
    const res = await ctx.call(token, 'POST', `/${table}/search`, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: Json[]; meta: { next_cursor: string | null; has_more: boolean } | null };
  };

  it('list and search: each member sees exactly its rows, the admin every row', async () => {
    const { a1, a2, b1, b2, n1 } = w.tasks;
    for (const [token, expected] of [
      [w.tokens.ann, [a1, a2]],
      [w.tokens.bob, [b1, b2]],
      [ADMIN, [a1, a2, b1, b2, n1]],
    ] as const) {
      expect(ids((await list(token, '/tasks/')).data)).toEqual(ids(expected));
      expect(ids((await search(token, 'tasks')).data)).toEqual(ids(expected));
    }
    const { apollo, borealis, square } = w.projects;
    expect(ids((await list(w.tokens.ann, '/projects/')).data)).toEqual(ids([apollo, square]));
    expect(ids((await list(w.tokens.bob, '/projects/')).data)).toEqual(ids([borealis, square]));
    expect(ids((await list(w.tokens.ann, '/comments/')).data)).toEqual(ids([w.comments.annOnA1]));
    expect(ids((await list(w.tokens.ann, '/labels/')).data)).toEqual(ids([w.labels.red, w.labels.green]));
  });

  it('a search cannot leave the filter: a top-level or, an id list, a negation', async () => {
    const everyId = Object.values(w.tasks).map((t) => t.id);
    const escapes = [
      [
        {
          op: 'or',
          items: [
            { field: 'id', op: 'in', value: everyId },
            { field: 'points', op: 'gte', value: 0 },
          ],
        },
      ],
      [{ field: 'project_id', op: 'eq', value: w.projects.borealis.id }],
      [{ field: 'project.owner_id', op: 'ne', value: w.users.ann.id }],
    ];
    expect(ids((await search(w.tokens.ann, 'tasks', { filters: escapes[0] })).data)).toEqual(
      ids([w.tasks.a1, w.tasks.a2]),
    );
    expect((await search(w.tokens.ann, 'tasks', { filters: escapes[1] })).data).toEqual([]);
    expect((await search(w.tokens.ann, 'tasks', { filters: escapes[2] })).data).toEqual([]);
  });

  it('a cursor walk yields the caller’s rows once each, and has_more counts only them', async () => {
    for (const [token, expected] of [
      [w.tokens.ann, [w.tasks.a1, w.tasks.a2]],
      [w.tokens.bob, [w.tasks.b1, w.tasks.b2]],
    ] as const) {
      const seen: string[] = [];
      let page = await search(token, 'tasks', { sort: [{ field: 'points', order: 'desc' }], limit: 1 });
      seen.push(...page.data.map((r) => r.id as string));
      while (page.meta?.next_cursor) {
        page = await search(token, 'tasks', {
          sort: [{ field: 'points', order: 'desc' }],
          limit: 1,
          cursor: page.meta.next_cursor,
        });
        seen.push(...page.data.map((r) => r.id as string));
      }
      const byPoints = [...expected].sort((x, y) => (y.points as number) - (x.points as number));
      expect(seen).toEqual(byPoints.map((t) => t.id));
      expect((await list(token, '/tasks/?limit=2')).meta).toMatchObject({ has_more: false, next_cursor: null });
    }
  });

  it('by id: a row outside the filter answers the bytes of a missing id', async () => {
    for (const url of [`/tasks/${w.tasks.b1.id}`, `/tasks/${w.tasks.b1.id}?include=comments`]) {
      const hidden = await ctx.call(w.tokens.ann, 'GET', url);
      const missing = await ctx.call(w.tokens.ann, 'GET', url.replace(w.tasks.b1.id as string, unknownId()));
      expectSame404(hidden, missing);
    }
    const own = await ctx.call(w.tokens.ann, 'GET', `/tasks/${w.tasks.a1.id}`);
    expect(own.statusCode).toBe(200);
    expect(own.headers.etag).toBeDefined();
  });

  it('includes: hidden rows are left out of to-many includes, at every level', async () => {
    const a1 = (await ctx.call(w.tokens.ann, 'GET', `/tasks/${w.tasks.a1.id}?include=comments,labels,project`)).json()
      .data as Json;
    expect(ids(a1.comments as Json[])).toEqual(ids([w.comments.annOnA1]));
    expect(ids(a1.labels as Json[])).toEqual(ids([w.labels.red]));
    expect((a1.project as Json).id).toBe(w.projects.apollo.id);
    // The project is visible, its task (bob's project's task) is not: scopes do not nest.
    const square = (await ctx.call(w.tokens.ann, 'GET', `/projects/${w.projects.square.id}?include=tasks`)).json()
      .data as Json;
    expect(square.tasks).toEqual([]);
    const projects = (await list(w.tokens.ann, '/projects/?include=tasks.comments')).data;
    const apollo = projects.find((p) => p.id === w.projects.apollo.id)!;
    expect(ids(apollo.tasks as Json[])).toEqual(ids([w.tasks.a1, w.tasks.a2]));
    const a1Nested = (apollo.tasks as Json[]).find((t) => t.id === w.tasks.a1.id)!;
    expect(ids(a1Nested.comments as Json[])).toEqual(ids([w.comments.annOnA1]));
    // The admin sees everything the members do not.
    const all = (await ctx.call(ADMIN, 'GET', `/tasks/${w.tasks.a1.id}?include=comments,labels`)).json().data as Json;
    expect((all.comments as Json[]).length).toBe(2);
    expect((all.labels as Json[]).length).toBe(2);
  });

  it('a to-one include of a hidden row reads null; the foreign key keeps its stored value', async () => {
    // carol views every task (auditor), but sees only her own or public projects (member).
    const res = await list(w.tokens.carol, '/tasks/?include=project');
    expect(ids(res.data)).toEqual(ids(Object.values(w.tasks)));
    const byId = new Map(res.data.map((t) => [t.id, t]));
    expect(byId.get(w.tasks.a1.id)).toMatchObject({ project_id: w.projects.apollo.id, project: null });
    expect(byId.get(w.tasks.b2.id)).toMatchObject({
      project_id: w.projects.square.id,
      project: { id: w.projects.square.id },
    });
    const one = await ctx.call(w.tokens.carol, 'GET', `/tasks/${w.tasks.b1.id}?include=project`);
    expect(one.json().data).toMatchObject({ project_id: w.projects.borealis.id, project: null });
  });

  it('a relation path in a filter never matches a hidden row, as if it did not exist', async () => {
    const names = (name: unknown) => [{ field: 'project.name', op: 'eq', value: name }];
    expect((await search(w.tokens.carol, 'tasks', { filters: names(w.projects.apollo.name) })).data).toEqual([]);
    expect(ids((await search(w.tokens.carol, 'tasks', { filters: names(w.projects.square.name) })).data)).toEqual(
      ids([w.tasks.b2]),
    );
    // `project.id` names the project, which carol cannot see; `project_id` is the task's own column.
    const byProjectId = [{ field: 'project.id', op: 'eq', value: w.projects.apollo.id }];
    expect((await search(w.tokens.carol, 'tasks', { filters: byProjectId })).data).toEqual([]);
    const byKey = [{ field: 'project_id', op: 'eq', value: w.projects.apollo.id }];
    expect(ids((await search(w.tokens.carol, 'tasks', { filters: byKey })).data)).toEqual(
      ids([w.tasks.a1, w.tasks.a2]),
    );
    // A hidden project matches `isnull` as a missing one does.
    const noProject = [{ field: 'project.name', op: 'isnull', value: true }];
    expect(ids((await search(w.tokens.carol, 'tasks', { filters: noProject })).data)).toEqual(
      ids([w.tasks.a1, w.tasks.a2, w.tasks.b1, w.tasks.n1]),
    );
    // Through a to-many relation: bob's task b2 in the public square is hidden from ann.
    const byTask = (title: unknown) => [{ field: 'tasks.title', op: 'eq', value: title }];
    expect((await search(w.tokens.ann, 'projects', { filters: byTask(w.tasks.b2.title) })).data).toEqual([]);
    expect(ids((await search(w.tokens.bob, 'projects', { filters: byTask(w.tasks.b2.title) })).data)).toEqual(
      ids([w.projects.square]),
    );
  });

  it('a sort through a relation orders a hidden row as a missing one', async () => {
    const sorted = async (field: string) =>
      (await search(w.tokens.carol, 'tasks', { sort: [{ field, order: 'asc' }, { field: 'points' }] })).data.map(
        (t) => t.id,
      );
    // NULL sorts first: every task but b2 has no visible project for carol, ordered by points.
    const expected = [w.tasks.a2, w.tasks.b1, w.tasks.a1, w.tasks.n1, w.tasks.b2].map((t) => t.id);
    expect(await sorted('project.name')).toEqual(expected);
    expect(await sorted('project.id')).toEqual(expected);
  });

  it('a token without the claim sees no row its filter reads the claim for, never every row', async () => {
    expect((await list(w.tokens.nosub, '/tasks/')).data).toEqual([]);
    expect((await list(w.tokens.nosub, '/comments/')).data).toEqual([]);
    // The other branch of the projects' or does not need the claim.
    expect(ids((await list(w.tokens.nosub, '/projects/')).data)).toEqual(ids([w.projects.square]));
    expect((await list(w.tokens.nosub, '/labels/')).data).toEqual([]);
    const hidden = await ctx.call(w.tokens.nosub, 'GET', `/tasks/${w.tasks.a1.id}`);
    expectSame404(hidden, await ctx.call(w.tokens.nosub, 'GET', `/tasks/${unknownId()}`));
  });

  it('a claim of the wrong type matches no row: `in` with a string', async () => {
    expect((await list(w.tokens.oddColors, '/labels/')).data).toEqual([]);
    // Its other filters still work: the sub is right.
    expect(ids((await list(w.tokens.oddColors, '/tasks/')).data)).toEqual(ids([w.tasks.a1, w.tasks.a2]));
  });

  it('two roles: a row is visible when a role granting the action sees it', async () => {
    // view: auditor grants it without a filter → every task; update: only member → her filter.
    expect((await ctx.call(w.tokens.carol, 'GET', `/tasks/${w.tasks.a1.id}`)).statusCode).toBe(200);
    const hidden = await ctx.call(w.tokens.carol, 'PATCH', `/tasks/${w.tasks.a1.id}`, { title: 'mine now' });
    const missing = await ctx.call(w.tokens.carol, 'PATCH', `/tasks/${unknownId()}`, { title: 'mine now' });
    expectSame404(hidden, missing);
    // Projects: only member grants projects:view, so its filter applies even beside the auditor role.
    expect(ids((await list(w.tokens.carol, '/projects/')).data)).toEqual(ids([w.projects.square]));
  });
});
