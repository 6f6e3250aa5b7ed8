/**
 * `maxJoins`: the tables a search's relation paths may add to its statement. Each filter through a
 * to-many relation gets an `exists` of its own, which PostgreSQL plans together with the rest of the
 * statement, in a time that grows much faster than the tables: 48 such filters (`isnull: false`) on
 * `/users` of the relation-graph project outlasted the 30 s statement timeout on an empty database. Over the limit, a
 * search is refused before any SQL is sent; at the limit, the costliest filters known still plan quickly.
 */
import { expect, it } from 'vitest';
import { DEFAULT_SEARCH_LIMITS, SearchEngine, ValidationError } from '@core/runtime';
import { User } from '../../fixtures/golden/relation-graph/expected/src/apps/users/models.js';
import { describeRelationApp } from '../relations/relation-app.js';

/** 48 filter fields of users through relations (each accepted alone), as `/docs/json` lists them. */
const RELATION_FIELDS = [
  'profile.bio',
  'profile.website',
  'projects.name',
  'profile.user.email',
  'profile.user.name',
  'projects.owner.email',
  'projects.owner.name',
  'projects.tasks.title',
  'projects.tasks.description',
  'projects.tasks.priority',
  'projects.tasks.assignee_email',
  'profile.user.profile.bio',
  'profile.user.profile.website',
  'profile.user.projects.name',
  'projects.owner.profile.bio',
  'projects.owner.profile.website',
  'projects.owner.projects.name',
  'projects.tasks.project.name',
  'projects.tasks.comments.body',
  'projects.tasks.labels.name',
  'projects.tasks.labels.color',
  'profile.id',
  'profile.user_id',
  'projects.id',
  'projects.budget',
  'projects.created_at',
  'projects.owner_id',
  'profile.user.id',
  'projects.owner.id',
  'projects.tasks.id',
  'projects.tasks.points',
  'projects.tasks.due_on',
  'projects.tasks.created_at',
  'projects.tasks.project_id',
  'profile.user.profile.id',
  'profile.user.profile.user_id',
  'profile.user.projects.id',
  'profile.user.projects.budget',
  'profile.user.projects.created_at',
  'profile.user.projects.owner_id',
  'projects.owner.profile.id',
  'projects.owner.profile.user_id',
  'projects.owner.projects.id',
  'projects.owner.projects.budget',
  'projects.owner.projects.created_at',
  'projects.owner.projects.owner_id',
  'projects.tasks.project.id',
  'projects.tasks.project.budget',
];

const isnull = (field: string, value: boolean) => ({ field, op: 'isnull' as const, value });

describeRelationApp('search: tables joined by relation paths (maxJoins)', (ctx) => {
  const timed = async (body: unknown) => {
    const started = performance.now();
    const { result, sql } = await ctx.countSql(() => ctx.call('admin', 'POST', '/users/search', body));
    return { res: result, sql, ms: performance.now() - started };
  };

  it('48 filters over relation paths: 422 naming the limit, before any SQL', async () => {
    expect(RELATION_FIELDS).toHaveLength(48);
    for (const value of [false, true]) {
      const { res, sql, ms } = await timed({ filters: RELATION_FIELDS.map((field) => isnull(field, value)) });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.error?.code).toBe('VALIDATION_ERROR');
      const detail = res.body.error?.details?.[0];
      expect(detail).toMatchObject({
        reason: 'too_many_joins',
        path: expect.stringMatching(/^filters\[\d+\]\.field$/),
      });
      expect(detail?.['message']).toContain(
        `more than ${DEFAULT_SEARCH_LIMITS.maxJoins} tables (search limit maxJoins)`,
      );
      expect(sql).toEqual([]);
      expect(ms).toBeLessThan(2_000);
    }
  });

  it('the costliest filters known, at the limit: 200 within seconds; one more is refused', async () => {
    // Each `projects.owner.profile.bio` leaf is an `exists` over three tables that all join on the user's
    // id: the shape PostgreSQL is slowest to plan. Eight of them make 24 tables, the default limit.
    const leaves = DEFAULT_SEARCH_LIMITS.maxJoins / 3;
    const atLimit = Array.from({ length: leaves }, () => isnull('projects.owner.profile.bio', false));
    const { res, ms } = await timed({ filters: atLimit });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(ms).toBeLessThan(5_000);

    const over = await timed({ filters: [...atLimit, isnull('projects.owner.profile.bio', false)] });
    expect(over.res.status).toBe(422);
    expect(over.res.body.error?.details?.[0]).toMatchObject({
      path: `filters[${leaves}].field`,
      reason: 'too_many_joins',
    });
    expect(over.sql).toEqual([]);
  });

  it('a to-one path joins once, however many filters use it; a nested subquery is not counted', async () => {
    const toOne = Array.from({ length: 60 }, (_, i) =>
      isnull(['profile.bio', 'profile.user.email', 'profile.user.profile.website'][i % 3]!, i % 2 === 0),
    );
    const { res } = await timed({ filters: toOne });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // One table each at the first level (projects); tasks and the labels pivot sit in nested subqueries.
    const nested = Array.from({ length: DEFAULT_SEARCH_LIMITS.maxJoins }, () =>
      isnull('projects.tasks.labels.name', true),
    );
    expect((await timed({ filters: nested })).res.status).toBe(200);
    const more = await timed({ filters: [...nested, isnull('projects.name', true)] });
    expect(more.res.status).toBe(422);
  });

  it('an engine configured with another limit applies it', async () => {
    const engine = new SearchEngine(ctx.db, User, { limits: { maxJoins: 3 } });
    const two = { filters: [isnull('projects.owner.email', true)] };
    await expect(engine.search(two)).resolves.toMatchObject({ items: [] });
    const error = await engine
      .search({ filters: [isnull('projects.owner.email', true), isnull('projects.owner.email', false)] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details[0]).toMatchObject({ path: 'filters[1].field', reason: 'too_many_joins' });
  });
});
