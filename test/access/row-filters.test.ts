/**
 * Row filters on the read side (docs/security.md): a `member` sees its own tasks and the projects that
 * are public or its own, in every list, search, cursor walk and include; a hidden row never matches a
 * filter or a sort through a relation path; a role without a filter for a table (`auditor`, `admin`)
 * sees every row; a token without the claim a filter reads sees no row.
 */
import { beforeAll, expect, it } from 'vitest';
import {
  ADMIN,
  describeAccessApp,
  idList,
  idSet,
  PROJECT_NAMES,
  seedWorld,
  type AccessApp,
  type Json,
  type TaskKey,
  type World,
} from './helpers.js';

interface Page {
  data: Json[];
  meta: { limit: number; offset: number | null; next_cursor: string | null; has_more: boolean } | null;
}

describeAccessApp('row filters: reads', {}, (ctx: AccessApp) => {
  let w: World;
  beforeAll(async () => {
    w = await seedWorld(ctx);
  });

  const ids = (...keys: TaskKey[]) => keys.map((k) => w.tasks[k]!.id as string).sort();
  const every = () => ids('a1', 'a2', 'a3', 'a4', 'a5', 'b1', 'b2', 'b3', 'b4', 'o1');

  async function page(token: string, method: 'GET' | 'POST', url: string, body?: Json): Promise<Page> {
    const res = await ctx.call(token, method, url, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Page;
  }
  const list = (token: string, query = '') => page(token, 'GET', `/tasks/${query}`);
  const search = (token: string, body: Json = {}) => page(token, 'POST', '/tasks/search', body);

  /** Filters with `<name>` placeholders in their values replaced by the seeded ids. */
  function bind(filters: unknown): Json[] {
    const values: Record<string, unknown> = {
      '<alice>': w.users.alice,
      '<bob>': w.users.bob,
      '<o1>': w.tasks.o1.id,
      '<bob tasks>': ids(...w.owned.bob),
    };
    return JSON.parse(JSON.stringify(filters), (key, value) =>
      key === 'value' && typeof value === 'string' && value in values ? values[value] : value,
    );
  }

  it('the seeded rows are all there: admin sees every row', async () => {
    expect(idSet((await list(ADMIN, '?limit=100')).data)).toEqual(every());
    expect(idSet((await page(ADMIN, 'GET', '/projects/?limit=100')).data)).toEqual(idSet(Object.values(w.projects)));
  });

  it('list: each member sees exactly the tasks it owns', async () => {
    for (const who of ['alice', 'bob'] as const) {
      const expected = ids(...w.owned[who]);
      expect(idSet((await list(w.tokens[who])).data)).toEqual(expected);
      expect(idSet((await list(w.tokens[who], '?limit=100')).data)).toEqual(expected);
    }
  });

  it('a row-filtered answer varies on the credentials, so shared caches keep callers apart', async () => {
    // The lead role restricts no field: its answer differs from another caller's by its rows alone.
    const res = await ctx.call(w.tokens.aliceLead, 'GET', '/tasks/');
    expect(res.statusCode).toBe(200);
    expect(String(res.headers.vary ?? '')).toMatch(/Authorization/);
    expect(String(res.headers.vary ?? '')).toMatch(/Cookie/);
  });

  it('search: each member sees exactly the tasks it owns, and its own filters narrow within them', async () => {
    expect(idSet((await search(w.tokens.alice)).data)).toEqual(ids(...w.owned.alice));
    expect(idSet((await search(w.tokens.bob)).data)).toEqual(ids(...w.owned.bob));
    const high = await search(w.tokens.alice, { filters: [{ field: 'points', op: 'gte', value: 5 }] });
    expect(idSet(high.data)).toEqual(ids('a1', 'a3', 'a5'));
  });

  it.each([
    [
      'an or with a clause matching every row',
      [
        {
          op: 'or',
          items: [
            { field: 'owner_id', op: 'eq', value: '<bob>' },
            { field: 'points', op: 'gte', value: 0 },
          ],
        },
      ],
      ['a1', 'a2', 'a3', 'a4', 'a5'],
    ],
    [
      'an or naming bob and unowned rows',
      [
        {
          op: 'or',
          items: [
            { field: 'owner_id', op: 'eq', value: '<bob>' },
            { field: 'owner_id', op: 'isnull', value: true },
          ],
        },
      ],
      [],
    ],
    [
      'an or over the titles of both owners',
      [
        {
          op: 'or',
          items: [
            { field: 'title', op: 'startswith', value: 'bob' },
            { field: 'title', op: 'startswith', value: 'nobody' },
            { field: 'title', op: 'startswith', value: 'alice' },
          ],
        },
      ],
      ['a1', 'a2', 'a3', 'a4', 'a5'],
    ],
    [
      'an or of id lists',
      [
        {
          op: 'or',
          items: [
            { field: 'id', op: 'in', value: '<bob tasks>' },
            { field: 'id', op: 'eq', value: '<o1>' },
          ],
        },
      ],
      [],
    ],
    ['owner_id ne alice', [{ field: 'owner_id', op: 'ne', value: '<alice>' }], []],
  ] as const)('a member search with %s cannot escape the filter', async (_what, filters, expected) => {
    const bound = bind(filters);
    const res = await search(w.tokens.alice, { filters: bound, limit: 100 });
    expect(idSet(res.data)).toEqual(ids(...(expected as readonly TaskKey[])));
  });

  it('a role without a filter for tasks opens them: carol (member and auditor) views every task', async () => {
    expect(idSet((await list(w.tokens.carol, '?limit=100')).data)).toEqual(every());
    expect(idSet((await search(w.tokens.carol, { limit: 100 })).data)).toEqual(every());
    const res = await ctx.call(w.tokens.carol, 'GET', `/tasks/${w.tasks.b1.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.id).toBe(w.tasks.b1.id);
  });

  it('a token without the claim the filter reads sees no task, and no private project', async () => {
    expect((await list(w.tokens.nosub)).data).toEqual([]);
    expect(
      (await search(w.tokens.nosub, { filters: [{ field: 'owner_id', op: 'isnull', value: true }] })).data,
    ).toEqual([]);
    const walk = await list(w.tokens.nosub, '?limit=1');
    expect(walk).toMatchObject({ data: [], meta: { has_more: false, next_cursor: null } });
    const projects = await page(w.tokens.nosub, 'GET', '/projects/?limit=100');
    for (const p of projects.data) expect(p.is_public).toBe(true);
    expect(idSet(projects.data)).not.toContain(w.projects.echo.id);
  });

  it('a filter through a relation path: the lead role sees the tasks of the projects alice owns', async () => {
    expect(idSet((await list(w.tokens.aliceLead, '?limit=100')).data)).toEqual(ids('a1', 'a5', 'b3'));
    expect(idSet((await search(w.tokens.aliceLead)).data)).toEqual(ids('a1', 'a5', 'b3'));
  });

  it('projects: public or owned, for list and search', async () => {
    const { alpha, bravo, delta } = w.projects;
    const expected: [string, Json[]][] = [
      [w.tokens.alice, [alpha, delta]],
      [w.tokens.bob, [bravo, delta]],
      [w.tokens.carol, [delta]],
    ];
    for (const [token, visible] of expected) {
      expect(idSet((await page(token, 'GET', '/projects/')).data)).toEqual(idSet(visible));
      expect(idSet((await page(token, 'POST', '/projects/search', {})).data)).toEqual(idSet(visible));
    }
  });

  it('list cursor walk: following next_cursor yields exactly the caller’s rows, once each', async () => {
    for (const who of ['alice', 'bob'] as const) {
      const seen: string[] = [];
      let query = '?limit=2';
      let pages = 0;
      for (;;) {
        const p = await list(w.tokens[who], query);
        pages++;
        seen.push(...idList(p.data));
        expect(p.data.length).toBeLessThanOrEqual(2);
        if (p.meta?.next_cursor == null) {
          expect(p.meta?.has_more).toBe(false);
          break;
        }
        expect(p.meta.has_more).toBe(true);
        query = `?limit=2&cursor=${encodeURIComponent(p.meta.next_cursor)}`;
        expect(pages).toBeLessThan(10);
      }
      expect(seen).toHaveLength(new Set(seen).size);
      expect([...seen].sort()).toEqual(ids(...w.owned[who]));
      expect(pages).toBe(Math.ceil(w.owned[who].length / 2));
    }
  });

  it('search cursor walk with a sort: the caller’s rows in order, and no page counts a hidden row', async () => {
    const body = { sort: [{ field: 'points', order: 'desc' }], limit: 2 };
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const p = await search(w.tokens.alice, cursor ? { ...body, cursor } : body);
      seen.push(...idList(p.data));
      cursor = p.meta?.next_cursor;
    } while (cursor && ++pages < 10);
    expect(cursor).toBeNull();
    // alice's points: a3 9, a5 7, a1 5, a2 3, a4 1 (bob's and o1's interleave in the full table).
    expect(seen).toEqual(['a3', 'a5', 'a1', 'a2', 'a4'].map((k) => w.tasks[k as TaskKey].id));
  });

  it('has_more and next_cursor count only visible rows', async () => {
    expect((await list(w.tokens.alice, '?limit=5')).meta).toMatchObject({ has_more: false, next_cursor: null });
    expect((await list(w.tokens.alice, '?limit=4')).meta).toMatchObject({ has_more: true });
    const last = await search(w.tokens.alice, { limit: 5, offset: 4 });
    expect(last.data).toHaveLength(1);
    expect(last.meta).toMatchObject({ has_more: false, next_cursor: null });
    expect((await search(w.tokens.alice, { limit: 5, offset: 5 })).data).toEqual([]);
  });

  it('to-many include: hidden related rows are left out', async () => {
    const { alpha, delta } = w.projects;
    const listed = await page(w.tokens.alice, 'GET', '/projects/?include=tasks');
    const byId = new Map(listed.data.map((p) => [p.id, p]));
    expect(idSet(byId.get(alpha.id)!.tasks as Json[])).toEqual(ids('a1', 'a5'));
    expect(idSet(byId.get(delta.id)!.tasks as Json[])).toEqual(ids('a2'));
    const one = await ctx.call(w.tokens.alice, 'GET', `/projects/${alpha.id}?include=tasks`);
    expect(idSet(one.json().data.tasks)).toEqual(ids('a1', 'a5'));
    const searched = await page(w.tokens.alice, 'POST', '/projects/search', { include: ['tasks'] });
    expect(idSet(searched.data.find((p) => p.id === alpha.id)!.tasks as Json[])).toEqual(ids('a1', 'a5'));
    // The control: the rows left out are there for a caller who may see them.
    const admin = await ctx.call(ADMIN, 'GET', `/projects/${alpha.id}?include=tasks`);
    expect(idSet(admin.json().data.tasks)).toEqual(ids('a1', 'a5', 'b3'));
  });

  it('many-to-many include: a hidden project is left out of mentions', async () => {
    const a1 = w.tasks.a1.id as string;
    const mine = await ctx.call(w.tokens.alice, 'GET', `/tasks/${a1}?include=mentions`);
    expect(idSet(mine.json().data.mentions)).toEqual([w.projects.delta.id]);
    const admin = await ctx.call(ADMIN, 'GET', `/tasks/${a1}?include=mentions`);
    expect(idSet(admin.json().data.mentions)).toEqual(idSet([w.projects.bravo, w.projects.delta]));
  });

  it('to-one include of a hidden row reads null while the foreign key keeps its value', async () => {
    const a3 = w.tasks.a3.id as string;
    const bravo = w.projects.bravo.id;
    const one = (await ctx.call(w.tokens.alice, 'GET', `/tasks/${a3}?include=project`)).json().data;
    expect(one).toMatchObject({ id: a3, project_id: bravo, project: null });
    const listed = await list(w.tokens.alice, '?include=project');
    const searched = await search(w.tokens.alice, { include: ['project'] });
    for (const rows of [listed.data, searched.data]) {
      const byId = new Map(rows.map((t) => [t.id, t]));
      expect(byId.get(a3)).toMatchObject({ project_id: bravo, project: null });
      expect(byId.get(w.tasks.a1.id)).toMatchObject({
        project: { id: w.projects.alpha.id, name: PROJECT_NAMES.alpha },
      });
      expect(byId.get(w.tasks.a2.id)).toMatchObject({ project: { id: w.projects.delta.id } });
    }
    // carol views every task, but bob's private project stays hidden from her as a project.
    const b1 = (await ctx.call(w.tokens.carol, 'GET', `/tasks/${w.tasks.b1.id}?include=project`)).json().data;
    expect(b1).toMatchObject({ project_id: bravo, project: null });
    // Nested: alice's project, reached through her task, lists only her tasks.
    const nested = (await ctx.call(w.tokens.alice, 'GET', `/tasks/${w.tasks.a1.id}?include=project.tasks`)).json().data;
    expect(idSet(nested.project.tasks)).toEqual(ids('a1', 'a5'));
    // The control: admin reads the project through the same include.
    const admin = (await ctx.call(ADMIN, 'GET', `/tasks/${a3}?include=project`)).json().data;
    expect(admin.project).toMatchObject({ id: bravo, name: PROJECT_NAMES.bravo });
  });

  it.each([
    [
      'project.name eq the hidden project’s name',
      [{ field: 'project.name', op: 'eq', value: PROJECT_NAMES.bravo }],
      [],
    ],
    [
      'project.name contains a word only the hidden project has',
      [{ field: 'project.name', op: 'contains', value: '7f3a9c' }],
      [],
    ],
    [
      'project.owner_id eq bob (only the public one is visible)',
      [{ field: 'project.owner_id', op: 'eq', value: '<bob>' }],
      ['a2'],
    ],
    ['project.is_public eq false', [{ field: 'project.is_public', op: 'eq', value: false }], ['a1', 'a5']],
    [
      'mentions.name eq the hidden project’s name (to-many)',
      [{ field: 'mentions.name', op: 'eq', value: PROJECT_NAMES.bravo }],
      [],
    ],
    [
      'mentions.name eq the public project’s name (to-many)',
      [{ field: 'mentions.name', op: 'eq', value: PROJECT_NAMES.delta }],
      ['a1'],
    ],
    [
      'an or that names the hidden project',
      [
        {
          op: 'or',
          items: [
            { field: 'project.name', op: 'eq', value: PROJECT_NAMES.bravo },
            { field: 'points', op: 'eq', value: 1 },
          ],
        },
      ],
      ['a4'],
    ],
  ] as const)('a filter through a relation never matches a hidden row: %s', async (_what, filters, expected) => {
    const bound = bind(filters);
    const res = await search(w.tokens.alice, { filters: bound, limit: 100 });
    expect(idSet(res.data)).toEqual(ids(...(expected as readonly TaskKey[])));
  });

  it('a sort through a relation orders a hidden related row as if it did not exist', async () => {
    const a3 = w.tasks.a3.id as string;
    const body = { sort: [{ field: 'project.name', order: 'asc' }], limit: 100 };
    const ordered = async () => idList((await search(w.tokens.alice, body)).data);
    const withHidden = await ordered();
    // Walked one row at a time, the same order, and no cursor carries the hidden project's name.
    const walked: string[] = [];
    let cursor: string | null | undefined;
    do {
      const p = await search(w.tokens.alice, { ...body, limit: 1, ...(cursor ? { cursor } : {}) });
      walked.push(...idList(p.data));
      cursor = p.meta?.next_cursor;
      if (cursor) expect(Buffer.from(cursor, 'base64url').toString('latin1')).not.toContain('7f3a9c');
    } while (cursor && walked.length < 20);
    expect(cursor).toBeNull();
    expect(walked).toEqual(withHidden);
    // The reference: the same task with no project at all.
    await ctx.admin('PATCH', `/tasks/${a3}`, { project_id: null });
    try {
      expect(withHidden).toEqual(await ordered());
    } finally {
      await ctx.admin('PATCH', `/tasks/${a3}`, { project_id: w.projects.bravo.id });
    }
    // And visible related rows do order: alpha's tasks come before delta's.
    expect(withHidden.indexOf(w.tasks.a1.id as string)).toBeLessThan(withHidden.indexOf(w.tasks.a2.id as string));
  });
});
