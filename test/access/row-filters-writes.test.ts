/**
 * Row filters on the by-id and write side (docs/security.md): a row outside the caller's filter
 * answers every by-id verb with the same bytes as a missing id and is left as it was; a create takes
 * the claim-bound field from the token; a write whose result would leave the caller's filter is 403
 * and writes nothing; a related id the caller cannot see is refused like an unknown one.
 */
import { beforeAll, expect, it } from 'vitest';
import {
  ADMIN,
  describeAccessApp,
  expectSame404,
  idSet,
  seedWorld,
  unknownId,
  type AccessApp,
  type Json,
  type World,
} from './helpers.js';

describeAccessApp('row filters: by id and writes', {}, (ctx: AccessApp) => {
  let w: World;
  beforeAll(async () => {
    w = await seedWorld(ctx);
  });

  /** The stored row and the ETag admin reads for it: what "left as it was" compares. */
  async function snapshot(table: string, id: string): Promise<{ row: Json | undefined; etag: unknown }> {
    const res = await ctx.call(ADMIN, 'GET', `/${table}/${id}`);
    return { row: await ctx.row(table, id), etag: res.headers.etag };
  }

  /** A task of alice's own, made as admin for a test that changes it. */
  const aliceTask = (extra: Json = {}) =>
    ctx.admin('POST', '/tasks/', { title: 'alice scratch', owner_id: w.users.alice, points: 1, ...extra });

  /** An error answer with every id in `ids` replaced, so two refusals of different ids compare. */
  const withoutIds = (body: string, ...ids: string[]) => ids.reduce((text, id) => text.split(id).join('<id>'), body);

  const VERBS: [string, 'GET' | 'PUT' | 'PATCH' | 'DELETE', string, Json | undefined, 'etag' | string | undefined][] = [
    ['GET', 'GET', '', undefined, undefined],
    ['GET with an include', 'GET', '?include=project,mentions', undefined, undefined],
    ['PUT', 'PUT', '', { title: 'taken over', points: 99 }, undefined],
    ['PATCH', 'PATCH', '', { title: 'taken over' }, undefined],
    ['DELETE', 'DELETE', '', undefined, undefined],
    ['PATCH with If-Match of the current ETag', 'PATCH', '', { title: 'taken over' }, 'etag'],
    ['PATCH with a stale If-Match', 'PATCH', '', { title: 'taken over' }, '"AAAAAAAAAAAAAAAAAAAAAA"'],
    ['PUT with If-Match: *', 'PUT', '', { title: 'taken over' }, '*'],
    ['DELETE with If-Match of the current ETag', 'DELETE', '', undefined, 'etag'],
  ];

  it.each(VERBS)(
    '%s on another member’s task answers the bytes of a missing id and changes nothing',
    async (_what, method, query, payload, ifMatch) => {
      const b1 = w.tasks.b1.id as string;
      const before = await snapshot('tasks', b1);
      expect(before.row).toBeDefined();
      const headers: Record<string, string> =
        ifMatch === undefined ? {} : { 'if-match': ifMatch === 'etag' ? String(before.etag) : ifMatch };
      const hidden = await ctx.call(w.tokens.alice, method, `/tasks/${b1}${query}`, payload, headers);
      const missing = await ctx.call(w.tokens.alice, method, `/tasks/${unknownId()}${query}`, payload, headers);
      expectSame404(hidden, missing);
      expect(await snapshot('tasks', b1)).toEqual(before);
    },
  );

  it.each(VERBS.filter(([, method]) => method !== 'GET'))(
    '%s by carol (member and auditor) on bob’s task: only member grants writes, so its filter applies',
    async (_what, method, query, payload, ifMatch) => {
      const b1 = w.tasks.b1.id as string;
      // carol may view the task: the auditor role grants viewing without a filter.
      expect((await ctx.call(w.tokens.carol, 'GET', `/tasks/${b1}`)).statusCode).toBe(200);
      const before = await snapshot('tasks', b1);
      expect(before.row).toBeDefined();
      const headers: Record<string, string> =
        ifMatch === undefined ? {} : { 'if-match': ifMatch === 'etag' ? String(before.etag) : ifMatch };
      const hidden = await ctx.call(w.tokens.carol, method, `/tasks/${b1}${query}`, payload, headers);
      const missing = await ctx.call(w.tokens.carol, method, `/tasks/${unknownId()}${query}`, payload, headers);
      expectSame404(hidden, missing);
      expect(await snapshot('tasks', b1)).toEqual(before);
    },
  );

  it.each(VERBS)(
    '%s with a token that lacks the claim answers 404 on any task',
    async (_what, method, query, payload, ifMatch) => {
      const a1 = w.tasks.a1.id as string;
      const before = await snapshot('tasks', a1);
      expect(before.row).toBeDefined();
      const headers: Record<string, string> =
        ifMatch === undefined ? {} : { 'if-match': ifMatch === 'etag' ? String(before.etag) : ifMatch };
      const hidden = await ctx.call(w.tokens.nosub, method, `/tasks/${a1}${query}`, payload, headers);
      const missing = await ctx.call(w.tokens.nosub, method, `/tasks/${unknownId()}${query}`, payload, headers);
      expectSame404(hidden, missing);
      expect(await snapshot('tasks', a1)).toEqual(before);
    },
  );

  it.each([
    ['GET', undefined],
    ['PATCH', { name: 'renamed' }],
    ['PUT', { name: 'renamed', is_public: true }],
  ] as const)('%s on another member’s private project answers the bytes of a missing id', async (method, payload) => {
    const bravo = w.projects.bravo.id as string;
    const before = await snapshot('projects', bravo);
    expect(before.row).toBeDefined();
    const hidden = await ctx.call(w.tokens.alice, method, `/projects/${bravo}`, payload);
    const missing = await ctx.call(w.tokens.alice, method, `/projects/${unknownId()}`, payload);
    expectSame404(hidden, missing);
    expect(await snapshot('projects', bravo)).toEqual(before);
  });

  it('by-id verbs on the caller’s own task work (the control)', async () => {
    const task = await aliceTask();
    const id = task.id as string;
    const got = await ctx.call(w.tokens.alice, 'GET', `/tasks/${id}`);
    expect(got.statusCode).toBe(200);
    const patched = await ctx.call(
      w.tokens.alice,
      'PATCH',
      `/tasks/${id}`,
      { title: 'mine' },
      {
        'if-match': String(got.headers.etag),
      },
    );
    expect(patched.statusCode).toBe(200);
    expect((await ctx.call(w.tokens.alice, 'PUT', `/tasks/${id}`, { title: 'still mine' })).statusCode).toBe(200);
    expect((await ctx.call(w.tokens.alice, 'DELETE', `/tasks/${id}`)).statusCode).toBe(200);
    expect(await ctx.row('tasks', id)).toBeUndefined();
  });

  it('a create with another user’s owner_id stores the caller’s sub', async () => {
    const res = await ctx.call(w.tokens.alice, 'POST', '/tasks/', { title: 'claimed', owner_id: w.users.bob });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().data.id as string;
    expect(res.json().data.owner_id).toBe(w.users.alice);
    expect((await ctx.row('tasks', id))?.owner_id).toBe(w.users.alice);
    // Bob does not get it; alice does.
    expect((await ctx.call(w.tokens.bob, 'GET', `/tasks/${id}`)).statusCode).toBe(404);
    expect((await ctx.call(w.tokens.alice, 'GET', `/tasks/${id}`)).statusCode).toBe(200);
    const omitted = await ctx.call(w.tokens.bob, 'POST', '/tasks/', { title: 'no owner sent' });
    expect(omitted.statusCode).toBe(201);
    expect((await ctx.row('tasks', omitted.json().data.id))?.owner_id).toBe(w.users.bob);
  });

  it.each([
    ['PATCH', { owner_id: '<bob>', title: 'patched' }],
    ['PUT', { owner_id: '<bob>', title: 'replaced' }],
    ['PUT', { title: 'replaced without owner' }],
  ] as const)('%s %j keeps the claim-bound owner_id as stored', async (method, body) => {
    const task = await aliceTask();
    const payload = { ...body, ...('owner_id' in body ? { owner_id: w.users.bob } : {}) };
    const res = await ctx.call(w.tokens.alice, method, `/tasks/${task.id}`, payload);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ title: body.title, owner_id: w.users.alice });
    expect(await ctx.row('tasks', task.id as string)).toMatchObject({ title: body.title, owner_id: w.users.alice });
  });

  it('a create by a token that lacks the claim would fall outside its filter: 403, nothing written', async () => {
    const before = await ctx.count('tasks');
    const res = await ctx.call(w.tokens.nosub, 'POST', '/tasks/', { title: 'orphan', owner_id: w.users.alice });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'FORBIDDEN' } });
    expect(await ctx.count('tasks')).toBe(before);
  });

  it.each([
    ['private and owned by bob', { is_public: false, owner_id: '<bob>' }],
    ['private and unowned', { is_public: false }],
  ] as const)('a create of a project %s falls outside alice’s filter: 403, nothing written', async (_what, body) => {
    const before = await ctx.count('projects');
    const payload = { name: 'outside', ...body, ...('owner_id' in body ? { owner_id: w.users.bob } : {}) };
    const res = await ctx.call(w.tokens.alice, 'POST', '/projects/', payload);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'FORBIDDEN' } });
    expect(await ctx.count('projects')).toBe(before);
  });

  it('a create of a project inside alice’s filter is written (the control)', async () => {
    const res = await ctx.call(w.tokens.alice, 'POST', '/projects/', {
      name: 'public, bob’s',
      is_public: true,
      owner_id: w.users.bob,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(await ctx.row('projects', res.json().data.id)).toMatchObject({ owner_id: w.users.bob });
  });

  it.each([
    ['PATCH is_public false on bob’s public project', 'delta', 'PATCH', { is_public: false, name: 'mine now' }],
    ['PUT that leaves is_public to its default on bob’s public project', 'delta', 'PUT', { name: 'mine now' }],
    ['PATCH owner_id bob on alice’s private project', 'alpha', 'PATCH', { owner_id: '<bob>' }],
    ['PATCH owner_id null on alice’s private project', 'alpha', 'PATCH', { owner_id: null, name: 'dropped' }],
  ] as const)('%s moves the row out of scope: 403 and unchanged', async (_what, key, method, body) => {
    const id = w.projects[key].id as string;
    const before = await snapshot('projects', id);
    const payload = JSON.parse(JSON.stringify(body), (k, v) => (k === 'owner_id' && v === '<bob>' ? w.users.bob : v));
    const res = await ctx.call(w.tokens.alice, method, `/projects/${id}`, payload);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'FORBIDDEN' } });
    expect(await snapshot('projects', id)).toEqual(before);
  });

  it('a patch that keeps the row in scope is written (the control)', async () => {
    const project = await ctx.admin('POST', '/projects/', { name: 'alice scratch', owner_id: w.users.alice });
    const res = await ctx.call(w.tokens.alice, 'PATCH', `/projects/${project.id}`, { is_public: true, name: 'shared' });
    expect(res.statusCode, res.body).toBe(200);
    expect(await ctx.row('projects', project.id as string)).toMatchObject({ name: 'shared' });
  });

  it.each([
    ['POST project_id', 'POST', 'project_id'],
    ['POST mention_ids', 'POST', 'mention_ids'],
    ['PATCH project_id', 'PATCH', 'project_id'],
    ['PUT mention_ids', 'PUT', 'mention_ids'],
  ] as const)('%s naming a hidden project is refused like an unknown id', async (_what, method, key) => {
    const task = await aliceTask();
    const bravo = w.projects.bravo.id as string;
    const random = unknownId();
    const body = (id: string) => ({ title: 'linked', [key]: key === 'mention_ids' ? [id] : id });
    const url = method === 'POST' ? '/tasks/' : `/tasks/${task.id}`;
    const beforeCount = await ctx.count('tasks');
    const before = await snapshot('tasks', task.id as string);
    const hidden = await ctx.call(w.tokens.alice, method, url, body(bravo));
    const missing = await ctx.call(w.tokens.alice, method, url, body(random));
    expect(missing.statusCode).toBe(422);
    expect(hidden.statusCode).toBe(missing.statusCode);
    expect(hidden.json().error.code).toBe(missing.json().error.code);
    expect(withoutIds(hidden.body, bravo)).toBe(withoutIds(missing.body, random));
    expect(await ctx.count('tasks')).toBe(beforeCount);
    expect(await snapshot('tasks', task.id as string)).toEqual(before);
    // A project alice may see is accepted (the control).
    const visible = await ctx.call(w.tokens.alice, method, url, body(w.projects.delta.id as string));
    expect(visible.statusCode, visible.body).toBe(method === 'POST' ? 201 : 200);
  });

  it.each(['PUT', 'PATCH'] as const)('%s of mention_ids keeps the hidden projects attached', async (method) => {
    const { alpha, bravo, delta } = w.projects;
    const task = await aliceTask({ mention_ids: [bravo.id, delta.id] });
    const res = await ctx.call(w.tokens.alice, method, `/tasks/${task.id}`, {
      title: 'relinked',
      mention_ids: [alpha.id],
    });
    expect(res.statusCode, res.body).toBe(200);
    const mine = await ctx.call(w.tokens.alice, 'GET', `/tasks/${task.id}?include=mentions`);
    expect(idSet(mine.json().data.mentions)).toEqual([alpha.id]);
    const all = await ctx.call(ADMIN, 'GET', `/tasks/${task.id}?include=mentions`);
    expect(idSet(all.json().data.mentions)).toEqual(idSet([alpha, bravo]));
  });

  it('DELETE of a hidden task leaves it; the owner can still delete it', async () => {
    const task = await ctx.admin('POST', '/tasks/', { title: 'bob scratch', owner_id: w.users.bob });
    const id = task.id as string;
    expect((await ctx.call(w.tokens.alice, 'DELETE', `/tasks/${id}`)).statusCode).toBe(404);
    expect(await ctx.row('tasks', id)).toBeDefined();
    expect((await ctx.call(w.tokens.bob, 'DELETE', `/tasks/${id}`)).statusCode).toBe(200);
    expect(await ctx.row('tasks', id)).toBeUndefined();
  });
});
