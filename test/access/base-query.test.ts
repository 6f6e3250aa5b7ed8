/**
 * Row scoping in code (docs/security.md): a repository that overrides `buildBaseQuery` to confine
 * tasks to the caller's tenant gets the guarantees of row filters on all seven endpoints, and on
 * includes, relation paths and cursors that reach tasks from elsewhere. The policies have no row
 * filter at all: everything here comes from the override.
 */
import { beforeAll, expect, it } from 'vitest';
import { container, type PolicyDocument } from '@core/runtime';
import { TaskRepository } from './fixtures/app/src/apps/tasks/repositories.js';
import { TenantTaskRepository } from './fixtures/tenant-repository.js';
import {
  ADMIN,
  describeAccessApp,
  expectSame404,
  idList,
  idSet,
  signClaims,
  unknownId,
  type AccessApp,
  type Json,
} from './helpers.js';

const POLICIES: PolicyDocument = {
  roles: {
    admin: { permissions: ['*'], restricted_fields: [] },
    staff: { permissions: ['tasks:*', 'projects:*'], restricted_fields: [] },
    anonymous: { permissions: [], restricted_fields: [] },
  },
};

const ANN = signClaims({ sub: 'ann', roles: ['staff'], tenant: 'acme' });
const GUS = signClaims({ sub: 'gus', roles: ['staff'], tenant: 'globex' });
const NAT = signClaims({ sub: 'nat', roles: ['staff'] });
const ODD = signClaims({ sub: 'odd', roles: ['staff'], tenant: ['acme', 'globex'] });

describeAccessApp(
  'buildBaseQuery override: tasks confined to the tenant claim',
  {
    policies: () => POLICIES,
    configure: () => {
      // After the plugins registered theirs: the services now get the scoped repository.
      container.scoped(TaskRepository, { useClass: TenantTaskRepository });
    },
  },
  (ctx: AccessApp) => {
    let shared: Json;
    const acme: Json[] = [];
    const globex: Json[] = [];

    beforeAll(async () => {
      shared = await ctx.admin('POST', '/projects/', { name: 'Shared venture' });
      const make = async (token: string, tenant: string, title: string, points: number) => {
        const res = await ctx.call(token, 'POST', '/tasks/', { title, tenant, points, project_id: shared.id });
        if (res.statusCode !== 201) throw new Error(`seeding ${title}: ${res.statusCode} ${res.body}`);
        return res.json().data as Json;
      };
      for (let i = 1; i <= 5; i++) acme.push(await make(ANN, 'acme', `acme ${i}`, i * 2));
      for (let i = 1; i <= 4; i++) globex.push(await make(GUS, 'globex', `globex ${i}`, i * 2 + 1));
    });

    const search = async (token: string, body: Json = {}) => {
      const res = await ctx.call(token, 'POST', '/tasks/search', body);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { data: Json[]; meta: { next_cursor: string | null; has_more: boolean } | null };
    };

    it('the seeded tasks are stored with both tenants', async () => {
      const rows = await ctx.db.select<{ tenant: string; n: number | string }>(
        'select tenant, count(*) as n from tasks group by tenant order by tenant',
      );
      expect(rows.map((r) => [r.tenant, Number(r.n)])).toEqual([
        ['acme', 5],
        ['globex', 4],
      ]);
    });

    it('list and search: each tenant sees exactly its rows', async () => {
      for (const [token, own] of [
        [ANN, acme],
        [GUS, globex],
      ] as const) {
        const listed = await ctx.call(token, 'GET', '/tasks/?limit=100');
        expect(idSet(listed.json().data)).toEqual(idSet(own));
        expect(idSet((await search(token, { limit: 100 })).data)).toEqual(idSet(own));
      }
    });

    it('a search with a top-level or group cannot escape the scope', async () => {
      const res = await search(ANN, {
        filters: [
          {
            op: 'or',
            items: [
              { field: 'tenant', op: 'eq', value: 'globex' },
              { field: 'title', op: 'startswith', value: 'globex' },
              { field: 'id', op: 'in', value: globex.map((t) => t.id) },
            ],
          },
        ],
      });
      expect(res.data).toEqual([]);
      const all = await search(ANN, {
        filters: [
          {
            op: 'or',
            items: [
              { field: 'tenant', op: 'ne', value: 'acme' },
              { field: 'points', op: 'gte', value: 0 },
            ],
          },
        ],
        limit: 100,
      });
      expect(idSet(all.data)).toEqual(idSet(acme));
    });

    it('a cursor walk yields the tenant’s rows in order and counts no other row', async () => {
      const seen: string[] = [];
      let cursor: string | null | undefined;
      let pages = 0;
      do {
        const body: Json = { sort: [{ field: 'points', order: 'desc' }], limit: 2, ...(cursor ? { cursor } : {}) };
        const p = await search(ANN, body);
        seen.push(...idList(p.data));
        cursor = p.meta?.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(seen).toEqual(idList([...acme].reverse()));
      expect(pages).toBe(3);
      const listed = await ctx.call(ANN, 'GET', '/tasks/?limit=5');
      expect(listed.json().meta).toMatchObject({ has_more: false, next_cursor: null });
    });

    it.each([
      ['GET', undefined, undefined],
      ['PUT', { title: 'taken over', tenant: 'acme' }, undefined],
      ['PATCH', { title: 'taken over' }, undefined],
      ['DELETE', undefined, undefined],
      ['PATCH', { title: 'taken over' }, 'etag'],
      ['DELETE', undefined, '*'],
    ] as const)(
      '%s %j (If-Match %s) on another tenant’s task: the bytes of a missing id, nothing changed',
      async (method, payload, ifMatch) => {
        const target = globex[0]!.id as string;
        const before = await ctx.row('tasks', target);
        expect(before).toBeDefined();
        const tag = (await ctx.call(GUS, 'GET', `/tasks/${target}`)).headers.etag;
        const headers: Record<string, string> =
          ifMatch === undefined ? {} : { 'if-match': ifMatch === 'etag' ? String(tag) : ifMatch };
        const hidden = await ctx.call(ANN, method, `/tasks/${target}`, payload, headers);
        const missing = await ctx.call(ANN, method, `/tasks/${unknownId()}`, payload, headers);
        expectSame404(hidden, missing);
        expect(await ctx.row('tasks', target)).toEqual(before);
      },
    );

    it('by-id verbs on the tenant’s own task work (the control)', async () => {
      const mine = await ctx.call(ANN, 'POST', '/tasks/', { title: 'scratch', tenant: 'acme' });
      expect(mine.statusCode, mine.body).toBe(201);
      const id = mine.json().data.id as string;
      expect((await ctx.call(ANN, 'GET', `/tasks/${id}`)).statusCode).toBe(200);
      expect((await ctx.call(ANN, 'PATCH', `/tasks/${id}`, { title: 'renamed' })).statusCode).toBe(200);
      expect((await ctx.call(ANN, 'PUT', `/tasks/${id}`, { title: 'replaced', tenant: 'acme' })).statusCode).toBe(200);
      expect((await ctx.call(ANN, 'DELETE', `/tasks/${id}`)).statusCode).toBe(200);
      expect(await ctx.row('tasks', id)).toBeUndefined();
    });

    it('a create takes the tenant from the token, whatever the body says', async () => {
      const res = await ctx.call(ANN, 'POST', '/tasks/', { title: 'planted', tenant: 'globex' });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.tenant).toBe('acme');
      expect(await ctx.row('tasks', res.json().data.id)).toMatchObject({ title: 'planted', tenant: 'acme' });
      expect((await ctx.call(GUS, 'GET', `/tasks/${res.json().data.id}`)).statusCode).toBe(404);
      expect((await ctx.call(ANN, 'DELETE', `/tasks/${res.json().data.id}`)).statusCode).toBe(200);
    });

    it('a create without the tenant claim would fall outside the scope: 403, nothing written', async () => {
      const before = await ctx.count('tasks');
      const res = await ctx.call(NAT, 'POST', '/tasks/', { title: 'stray', tenant: 'acme' });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ success: false, data: null, error: { code: 'FORBIDDEN' } });
      expect(await ctx.count('tasks')).toBe(before);
    });

    it.each([
      ['PATCH', { tenant: 'globex' }, {}],
      ['PUT', { title: 'moved', tenant: 'globex' }, { title: 'moved' }],
      ['PUT', { title: 'moved, tenant left out' }, { title: 'moved, tenant left out' }],
    ] as const)('%s %j keeps the tenant as stored', async (method, payload, change) => {
      const made = await ctx.call(ANN, 'POST', '/tasks/', { title: 'stays home', tenant: 'acme' });
      expect(made.statusCode, made.body).toBe(201);
      const target = made.json().data.id as string;
      const before = await ctx.row('tasks', target);
      const res = await ctx.call(ANN, method, `/tasks/${target}`, payload);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.tenant).toBe('acme');
      expect(await ctx.row('tasks', target)).toEqual({ ...before, ...change, tenant: 'acme' });
      expect((await ctx.call(ANN, 'DELETE', `/tasks/${target}`)).statusCode).toBe(200);
    });

    it('a token without the tenant claim, or with one of the wrong type, sees no task', async () => {
      for (const token of [NAT, ODD]) {
        expect((await ctx.call(token, 'GET', '/tasks/')).json().data).toEqual([]);
        expect((await search(token)).data).toEqual([]);
        const hidden = await ctx.call(token, 'GET', `/tasks/${acme[0]!.id}`);
        const missing = await ctx.call(token, 'GET', `/tasks/${unknownId()}`);
        expectSame404(hidden, missing);
      }
    });

    it('includes of tasks from a project leave the other tenant’s out', async () => {
      for (const [token, own] of [
        [ANN, acme],
        [GUS, globex],
      ] as const) {
        const one = await ctx.call(token, 'GET', `/projects/${shared.id}?include=tasks`);
        expect(idSet(one.json().data.tasks)).toEqual(idSet(own));
        const listed = await ctx.call(token, 'GET', '/projects/?include=tasks');
        expect(idSet(listed.json().data[0].tasks)).toEqual(idSet(own));
      }
      // The control: both tenants' tasks do belong to the project.
      const linked = await ctx.db.select<Json>('select id from tasks where project_id = ?', [shared.id]);
      expect(idSet(linked)).toEqual(idSet([...acme, ...globex]));
    });

    it('a relation path into tasks never matches the other tenant’s rows', async () => {
      const byTitle = async (token: string, title: unknown) => {
        const res = await ctx.call(token, 'POST', '/projects/search', {
          filters: [{ field: 'tasks.title', op: 'eq', value: title }],
        });
        expect(res.statusCode, res.body).toBe(200);
        return idList(res.json().data);
      };
      expect(await byTitle(ANN, 'globex 1')).toEqual([]);
      expect(await byTitle(ANN, 'acme 1')).toEqual([shared.id]);
      expect(await byTitle(GUS, 'globex 1')).toEqual([shared.id]);
    });

    it('the override holds for every caller: admin, without a tenant claim, sees no task', async () => {
      expect((await ctx.call(ADMIN, 'GET', '/tasks/')).json().data).toEqual([]);
    });
  },
);
