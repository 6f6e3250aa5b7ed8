/**
 * Row scoping written in code, with no row filter in the policies: a comment repository that overrides
 * `buildBaseQuery` to confine comments to the caller's team (the `team` claim), and labels confined by
 * `registerRowScope` at start-up. The seven endpoints, includes, relation paths and cursors obey them,
 * for every caller but `SYSTEM_CONTEXT`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  container,
  type CoreContext,
  type FilterNode,
  registerRowScope,
  type RowAction,
  runWithContext,
  SYSTEM_CONTEXT,
} from '@core/runtime';
import { CommentRepository } from '../../fixtures/golden/relation-graph/expected/src/apps/comments/repositories.js';
import { Label } from '../../fixtures/golden/relation-graph/expected/src/apps/labels/models.js';
import {
  describeScopeApp,
  expectSame404,
  ids,
  signClaims,
  UNFILTERED,
  unknownId,
  type Json,
  type ScopeApp,
} from './row-scope-app.js';

class TeamCommentRepository extends CommentRepository {
  override buildBaseQuery(ctx: CoreContext, action: RowAction): readonly FilterNode[] | null {
    return [
      ...(super.buildBaseQuery(ctx, action) ?? []),
      { field: 'body', op: 'startswith', value: { $claim: 'team' } },
    ];
  }
}

const RED = signClaims({ sub: 'r', roles: ['admin'], team: 'red' });
const BLUE = signClaims({ sub: 'b', roles: ['admin'], team: 'blue' });
const NONE = signClaims({ sub: 'n', roles: ['admin'] });

describeScopeApp(
  'row scope in code',
  UNFILTERED,
  (ctx: ScopeApp) => {
    let task: Json;
    const red: Json[] = [];
    const blue: Json[] = [];
    let labels: { red: Json; blue: Json };

    beforeAll(async () => {
      // Comments are created through their own endpoint first, which builds the repository.
      task = await ctx.admin('POST', '/tasks/', { title: 'shared' });
      for (const [token, mine, team] of [
        [RED, red, 'red'],
        [BLUE, blue, 'blue'],
      ] as const) {
        for (let i = 0; i < 3; i++) {
          const res = await ctx.call(token, 'POST', '/comments/', { body: `${team} ${i}`, task_id: task.id });
          if (res.statusCode !== 201) throw new Error(`seed: ${res.statusCode} ${res.body}`);
          mine.push(res.json().data);
        }
      }
      labels = {
        red: await ctx.admin('POST', '/labels/', { name: 'r', color: 'red' }),
        blue: await ctx.admin('POST', '/labels/', { name: 'b', color: 'blue' }),
      };
      await ctx.admin('PATCH', `/tasks/${task.id}`, { tag_ids: [labels.red.id, labels.blue.id] });
    });

    afterAll(() => registerRowScope(Label, null));

    const rows = async (token: string, method: 'GET' | 'POST', url: string, body?: unknown) => {
      const res = await ctx.call(token, method, url, body);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { data: Json[]; meta: { next_cursor: string | null } | null };
    };

    it('list and search: each team sees its comments; a search cannot widen that', async () => {
      expect(ids((await rows(RED, 'GET', '/comments/')).data)).toEqual(ids(red));
      expect(ids((await rows(BLUE, 'POST', '/comments/search', {})).data)).toEqual(ids(blue));
      const widening = {
        filters: [
          {
            op: 'or',
            items: [
              { field: 'body', op: 'startswith', value: 'blue' },
              { field: 'id', op: 'in', value: ids(blue) },
            ],
          },
        ],
      };
      expect((await rows(RED, 'POST', '/comments/search', widening)).data).toEqual([]);
      expect((await rows(NONE, 'GET', '/comments/')).data).toEqual([]);
    });

    it('a cursor walk stays within the team', async () => {
      const seen: string[] = [];
      let page = await rows(RED, 'POST', '/comments/search', { sort: [{ field: 'body', order: 'desc' }], limit: 1 });
      seen.push(...ids(page.data));
      while (page.meta?.next_cursor) {
        page = await rows(RED, 'POST', '/comments/search', {
          sort: [{ field: 'body', order: 'desc' }],
          limit: 1,
          cursor: page.meta.next_cursor,
        });
        seen.push(...ids(page.data));
      }
      expect(seen).toEqual([...red].reverse().map((c) => c.id));
    });

    it.each(['GET', 'PUT', 'PATCH', 'DELETE'] as const)(
      '%s on the other team’s comment: the bytes of a missing id',
      async (method) => {
        const body = method === 'PUT' || method === 'PATCH' ? { body: 'red taken', task_id: task.id } : undefined;
        const target = blue[0]!.id as string;
        const before = await ctx.rows('select * from comments where id = ?', [target]);
        expectSame404(
          await ctx.call(RED, method, `/comments/${target}`, body),
          await ctx.call(RED, method, `/comments/${unknownId()}`, body),
        );
        expect(await ctx.rows('select * from comments where id = ?', [target])).toEqual(before);
      },
    );

    it('a create or a patch that would leave the team is 403 and writes nothing', async () => {
      const count = (await ctx.rows('select id from comments')).length;
      const created = await ctx.call(RED, 'POST', '/comments/', { body: 'blue planted', task_id: task.id });
      expect(created.statusCode).toBe(403);
      expect((await ctx.rows('select id from comments')).length).toBe(count);
      const mine = red[0]!;
      const patched = await ctx.call(RED, 'PATCH', `/comments/${mine.id}`, { body: 'blue now' });
      expect(patched.statusCode).toBe(403);
      expect(await ctx.rows('select body from comments where id = ?', [mine.id])).toEqual([{ body: mine.body }]);
    });

    it('includes and relation paths from tasks see only the team’s comments', async () => {
      const one = (await ctx.call(RED, 'GET', `/tasks/${task.id}?include=comments`)).json().data as Json;
      expect(ids(one.comments as Json[])).toEqual(ids(red));
      const filters = [{ field: 'comments.body', op: 'eq', value: blue[0]!.body }];
      expect((await rows(RED, 'POST', '/tasks/search', { filters })).data).toEqual([]);
      expect(ids((await rows(BLUE, 'POST', '/tasks/search', { filters })).data)).toEqual([task.id]);
    });

    it('a hook registered at start-up confines another model wherever it appears', async () => {
      registerRowScope(Label, () => [{ field: 'color', op: 'eq', value: { $claim: 'team' } }]);
      const one = (await ctx.call(RED, 'GET', `/tasks/${task.id}?include=labels`)).json().data as Json;
      expect(ids(one.labels as Json[])).toEqual([labels.red.id]);
      expect(ids((await rows(BLUE, 'GET', '/labels/')).data)).toEqual([labels.blue.id]);
      registerRowScope(Label, null);
      expect((await rows(BLUE, 'GET', '/labels/')).data).toHaveLength(2);
    });

    it('a mistake in a scope written in code is the server’s: 500, never a 422 about the client’s request', async () => {
      registerRowScope(Label, () => [{ field: 'colour', op: 'eq', value: 'red' }]);
      try {
        const res = await ctx.call(RED, 'GET', '/labels/');
        expect(res.statusCode).toBe(500);
        expect(res.body).not.toContain('colour');
      } finally {
        registerRowScope(Label, null);
      }
      expect((await ctx.call(RED, 'GET', '/labels/')).statusCode).toBe(200);
    });

    it('SYSTEM_CONTEXT is never scoped', async () => {
      const all = await runWithContext(SYSTEM_CONTEXT, () => new TeamCommentRepository().getList({ limit: 100 }));
      expect(ids(all.items as Json[])).toEqual(ids([...red, ...blue]));
    });
  },
  () => {
    // After the plugins registered theirs: the comment service gets the scoped repository.
    container.scoped(CommentRepository, { useClass: TeamCommentRepository });
  },
);
