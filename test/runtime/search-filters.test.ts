/**
 * SearchEngine filters on both databases: depth, restrictions, value coercion and types, string
 * operators, bounds and unknown names. Every refusal is checked to send no SQL at all.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ForbiddenError,
  SearchEngine,
  SYSTEM_CONTEXT,
  ValidationError,
  type FilterNode,
  type FilterOperator,
  type SearchRequest,
} from '@core/runtime';
import { fixtureEntities, Task } from '../../fixtures/models/index.js';
import { countQueries, describeEachDatabase } from '../helpers/databases.js';
import { rejectsWithoutSql, restrictedContext, seedGraph, TASKS, type Seeded } from './search-fixtures.js';

const ALL = TASKS.map((t) => t.title).sort();

/** `levels` and/or groups nested inside each other around one leaf. */
function nested(levels: number): FilterNode[] {
  let node: FilterNode = { field: 'points', op: 'gte', value: 0 };
  for (let i = 0; i < levels; i++) node = { op: i % 2 ? 'and' : 'or', items: [node] };
  return [node];
}

describeEachDatabase('search filters', { entities: fixtureEntities }, (suite) => {
  let seeded: Seeded;
  let engine: SearchEngine<Task>;
  beforeAll(async () => {
    seeded = await seedGraph(suite.db);
    engine = new SearchEngine(suite.db, Task);
  });

  const titles = async (request: SearchRequest, ctx = SYSTEM_CONTEXT) =>
    (await engine.search({ limit: 500, ...request }, ctx)).items.map((r) => r.title as string).sort();
  const where = (...filters: FilterNode[]) => titles({ filters });

  describe('nesting depth (maxDepth 3)', () => {
    it('accepts three nested groups; the top-level array is not a level', async () => {
      expect(engine.maxDepth).toBe(3);
      expect(await titles({ filters: nested(3) })).toHaveLength(7);
    });

    it('refuses four nested groups before any SQL, naming the innermost group', async () => {
      const detail = await rejectsWithoutSql(suite.db, () => engine.search({ filters: nested(4) }), ValidationError);
      expect(detail).toMatchObject({ path: 'filters[0].items[0].items[0].items[0]', reason: 'max_depth' });
      await rejectsWithoutSql(suite.db, () => engine.validate({ filters: nested(4) }), ValidationError);
    });

    it('is configurable', async () => {
      const shallow = new SearchEngine(suite.db, Task, { maxDepth: 1 });
      expect(shallow.maxDepth).toBe(1);
      expect((await shallow.search({ filters: nested(1) })).items).toHaveLength(7);
      await rejectsWithoutSql(suite.db, () => shallow.search({ filters: nested(2) }), ValidationError);
    });
  });

  describe('restricted fields and paths', () => {
    it.each<[string, string[], SearchRequest, string]>([
      [
        'a filter on a restricted field',
        ['tasks.assignee_email'],
        { filters: [{ field: 'assignee_email', op: 'isnull', value: false }] },
        'filters[0].field',
      ],
      [
        'a sort on a restricted field',
        ['tasks.assignee_email'],
        { sort: [{ field: 'assignee_email' }] },
        'sort[0].field',
      ],
      [
        'a restricted field inside a group',
        ['tasks.assignee_email'],
        {
          filters: [
            {
              op: 'or',
              items: [
                { field: 'title', op: 'eq', value: 'x' },
                { field: 'assignee_email', op: 'eq', value: 'x' },
              ],
            },
          ],
        },
        'filters[0].items[1].field',
      ],
      [
        "a restricted relation's foreign key",
        ['tasks.project'],
        { filters: [{ field: 'project_id', op: 'isnull', value: true }] },
        'filters[0].field',
      ],
      [
        "a restricted relation's key written as a path",
        ['tasks.project'],
        { filters: [{ field: 'project.id', op: 'isnull', value: true }] },
        'filters[0].field',
      ],
      [
        'a field through a restricted relation',
        ['tasks.project'],
        { filters: [{ field: 'project.name', op: 'eq', value: 'Alpha' }] },
        'filters[0].field',
      ],
      ['an include of a restricted relation', ['tasks.project'], { include: ['project'] }, 'include[0]'],
      [
        "a target model's restricted field",
        ['projects.budget'],
        { filters: [{ field: 'project.budget', op: 'gt', value: 1 }] },
        'filters[0].field',
      ],
      [
        "a sort on a target model's restricted field",
        ['projects.budget'],
        { sort: [{ field: 'project.budget' }] },
        'sort[0].field',
      ],
      [
        'a restricted path',
        ['tasks.project.budget'],
        { filters: [{ field: 'project.budget', op: 'isnull', value: true }] },
        'filters[0].field',
      ],
      [
        'a to-many relation',
        ['tasks.comments'],
        { filters: [{ field: 'comments.body', op: 'contains', value: 'x' }] },
        'filters[0].field',
      ],
      ['a nested include', ['comments.author'], { include: ['comments.author'] }, 'include[0]'],
      [
        'a field two relations away',
        ['users.email'],
        { filters: [{ field: 'comments.author.email', op: 'eq', value: 'ann@example.com' }] },
        'filters[0].field',
      ],
    ])('forbids %s before any SQL', async (_name, entries, request, path) => {
      const ctx = restrictedContext(...entries);
      const detail = await rejectsWithoutSql(suite.db, () => engine.search(request, ctx), ForbiddenError);
      expect(detail).toMatchObject({ path, reason: 'restricted' });
      // The same request is fine without the restriction: the refusal comes from the entry alone.
      await expect(engine.search(request, SYSTEM_CONTEXT)).resolves.toBeDefined();
    });

    it('allows what the entries do not name', async () => {
      const ctx = restrictedContext('tasks.project.budget', 'comments.author', 'tasks.assignee_email');
      expect(
        await titles(
          { filters: [{ field: 'project.name', op: 'eq', value: 'Beta' }], include: ['comments', 'project'] },
          ctx,
        ),
      ).toEqual(['snakeXcase name', 'snake_case name']);
    });
  });

  describe('coercion of uuid, date and datetime values', () => {
    it.each<[string, () => FilterNode, string[]]>([
      [
        'an upper-case uuid',
        () => ({ field: 'id', op: 'eq', value: seeded.tasks.get('50 percent')!.toUpperCase() }),
        ['50 percent'],
      ],
      [
        'a uuid foreign key',
        () => ({ field: 'project_id', op: 'eq', value: seeded.projects.get('Gamma')! }),
        ['C:\\Temp\\files', 'Quarterly report'],
      ],
      [
        'a uuid list',
        () => ({
          field: 'id',
          op: 'in',
          value: [seeded.tasks.get('50 percent')!, seeded.tasks.get('Quarterly report')!],
        }),
        ['50 percent', 'Quarterly report'],
      ],
      [
        'a date',
        () => ({ field: 'due_on', op: 'gte', value: '2026-03-01' }),
        ['50 percent', '50% off sale', 'Quarterly report'],
      ],
      [
        'a datetime with an offset',
        () => ({ field: 'due_at', op: 'gt', value: '2026-03-01T10:00:00+02:00' }),
        ['50 percent', '50% off sale'],
      ],
      [
        'a datetime in UTC',
        () => ({ field: 'due_at', op: 'lt', value: '2026-03-01T09:00:00.001Z' }),
        ['50% off sale', 'Mixed Case Title'],
      ],
      [
        'a date-only datetime (midnight UTC)',
        () => ({ field: 'due_at', op: 'lt', value: '2026-03-01' }),
        ['Mixed Case Title'],
      ],
      ['a boolean', () => ({ field: 'is_completed', op: 'eq', value: true }), ['Mixed Case Title', 'Quarterly report']],
      [
        'a number list',
        () => ({ field: 'points', op: 'in', value: [3, 8] }),
        ['Mixed Case Title', 'snakeXcase name', 'snake_case name'],
      ],
    ])('parses %s before comparing', async (_name, filter, expected) => {
      expect(await where(filter())).toEqual(expected.sort());
    });

    it.each<[string, FilterNode, string, string]>([
      ['an invalid uuid', { field: 'id', op: 'eq', value: 'not-a-uuid' }, 'filters[0].value', 'invalid_value'],
      ...[
        '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2g',
        '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2G',
        '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2',
        '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f211',
        '3f1e4a52x7c1b-4d2e-9a8f-0b6c5d4e3f21',
        '3f1e4a527-c1b-4d2e-9a8f-0b6c5d4e3f21',
        '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2/',
        '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2@',
        '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2`',
        '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2:',
        '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2\u0660',
      ].map((value): [string, FilterNode, string, string] => [
        `the uuid ${JSON.stringify(value)}`,
        { field: 'id', op: 'eq', value },
        'filters[0].value',
        'invalid_value',
      ]),
      [
        'an invalid foreign-key uuid',
        { field: 'project_id', op: 'in', value: ['nope'] },
        'filters[0].value[0]',
        'invalid_value',
      ],
      ['an impossible date', { field: 'due_on', op: 'eq', value: '2026-02-30' }, 'filters[0].value', 'invalid_value'],
      [
        'a datetime for a date column',
        { field: 'due_on', op: 'eq', value: '2026-03-01T00:00:00Z' },
        'filters[0].value',
        'invalid_value',
      ],
      ['a non-ISO datetime', { field: 'due_at', op: 'gt', value: 'yesterday' }, 'filters[0].value', 'invalid_value'],
      [
        'an epoch number for a datetime',
        { field: 'due_at', op: 'gt', value: 1_700_000_000_000 },
        'filters[0].value',
        'invalid_value',
      ],
      ['a string for a number', { field: 'points', op: 'eq', value: '5' }, 'filters[0].value', 'invalid_value'],
      ['a number for a string', { field: 'title', op: 'eq', value: 5 }, 'filters[0].value', 'invalid_value'],
      [
        'a string for a boolean',
        { field: 'is_completed', op: 'eq', value: 'true' },
        'filters[0].value',
        'invalid_value',
      ],
      ['an object value', { field: 'title', op: 'eq', value: { $ne: 'x' } }, 'filters[0].value', 'invalid_value'],
      ['an array for eq', { field: 'title', op: 'eq', value: ['a'] }, 'filters[0].value', 'invalid_value'],
      ['a missing value', { field: 'title', op: 'eq' }, 'filters[0].value', 'invalid_value'],
      ['a scalar for in', { field: 'title', op: 'in', value: 'a' }, 'filters[0].value', 'invalid_value'],
      [
        'an object in a list',
        { field: 'title', op: 'nin', value: ['a', { b: 1 }] },
        'filters[0].value[1]',
        'invalid_value',
      ],
      ['a null in a list', { field: 'title', op: 'in', value: [null] }, 'filters[0].value[0]', 'invalid_value'],
      ['a mixed list', { field: 'points', op: 'in', value: [1, 'x'] }, 'filters[0].value[1]', 'invalid_value'],
      ['a non-boolean isnull', { field: 'title', op: 'isnull', value: 'yes' }, 'filters[0].value', 'invalid_value'],
      [
        'null for an ordering operator',
        { field: 'points', op: 'gt', value: null },
        'filters[0].value',
        'invalid_value',
      ],
      [
        'a string operator on a number',
        { field: 'points', op: 'ilike', value: '5' },
        'filters[0].op',
        'invalid_operator',
      ],
      [
        'a string operator on a uuid',
        { field: 'id', op: 'contains', value: 'ab' },
        'filters[0].op',
        'invalid_operator',
      ],
      ['an order on a boolean', { field: 'is_completed', op: 'gt', value: false }, 'filters[0].op', 'invalid_operator'],
      [
        'a number for a string operator',
        { field: 'title', op: 'startswith', value: 5 },
        'filters[0].value',
        'invalid_value',
      ],
      [
        'a LIKE pattern ending in a lone backslash',
        { field: 'title', op: 'like', value: 'C:\\' },
        'filters[0].value',
        'invalid_value',
      ],
    ])('refuses %s before any SQL', async (_name, filter, path, reason) => {
      const detail = await rejectsWithoutSql(suite.db, () => engine.search({ filters: [filter] }), ValidationError);
      expect(detail).toMatchObject({ path, reason });
    });

    it('reads eq null as isnull and ne null as not null; ne and nin keep NULL rows', async () => {
      expect(await where({ field: 'description', op: 'eq', value: null })).toEqual(['snake_case name']);
      expect(await where({ field: 'description', op: 'ne', value: null })).toHaveLength(ALL.length - 1);
      expect(await where({ field: 'description', op: 'isnull', value: true })).toEqual(['snake_case name']);
      const notFive = ALL.filter((t) => !['50% off sale', '50 percent'].includes(t));
      expect(await where({ field: 'points', op: 'ne', value: 5 })).toEqual(notFive);
      expect(await where({ field: 'points', op: 'nin', value: [5] })).toEqual(notFive);
    });

    it('treats empty lists and empty groups as their identities', async () => {
      expect(await where({ field: 'title', op: 'in', value: [] })).toEqual([]);
      expect(await where({ field: 'title', op: 'nin', value: [] })).toEqual(ALL);
      expect(await where({ op: 'and', items: [] })).toEqual(ALL);
      expect(await where({ op: 'or', items: [] })).toEqual([]);
    });
  });

  describe('string operators agree on both databases', () => {
    it.each<[FilterOperator, string, string[]]>([
      ['ilike', '50%', ['50% off sale']],
      ['ilike', '50', ['50 percent', '50% off sale']],
      ['ilike', 'E_C', ['snake_case name']],
      ['ilike', 'MIXED case', ['Mixed Case Title', 'mixed case title']],
      ['ilike', '\\TEMP\\', ['C:\\Temp\\files']],
      ['ilike', '[A]*', ['Glob [a]* chars?']],
      ['like', 'Mixed%', ['Mixed Case Title']],
      ['like', 'mixed%', ['mixed case title']],
      ['like', '50\\%%', ['50% off sale']],
      ['like', 'snake_case%', ['snakeXcase name', 'snake_case name']],
      ['like', 'snake\\_case%', ['snake_case name']],
      ['like', 'C:\\\\Temp%', ['C:\\Temp\\files']],
      ['like', '%[a]*%', ['Glob [a]* chars?']],
      ['contains', 'Case', ['Mixed Case Title']],
      ['contains', 'case', ['mixed case title', 'snakeXcase name', 'snake_case name']],
      ['contains', '%', ['50% off sale']],
      ['contains', '_', ['snake_case name']],
      ['contains', '\\', ['C:\\Temp\\files']],
      ['contains', '*', ['Glob [a]* chars?']],
      ['contains', '?', ['Glob [a]* chars?']],
      ['contains', '[a]', ['Glob [a]* chars?']],
      ['startswith', 'snake_', ['snake_case name']],
      ['startswith', 'Mixed', ['Mixed Case Title']],
      ['startswith', '50%', ['50% off sale']],
      ['endswith', 'Title', ['Mixed Case Title']],
      ['endswith', 'title', ['mixed case title']],
      ['endswith', 's?', ['Glob [a]* chars?']],
    ])('%s %j', async (op, value, expected) => {
      expect(await where({ field: 'title', op, value })).toEqual(expected.sort());
    });
  });

  describe('bounded work', () => {
    const leaf: FilterNode = { field: 'title', op: 'eq', value: 'x' };
    it.each<[string, SearchRequest, string, string]>([
      [
        'more than 64 filter nodes',
        { filters: Array.from({ length: 65 }, () => leaf) },
        'filters[64]',
        'too_many_filters',
      ],
      [
        'an in list over 500',
        { filters: [{ field: 'points', op: 'in', value: Array.from({ length: 501 }, (_, i) => i) }] },
        'filters[0].value',
        'too_many_values',
      ],
      [
        'a string over 1024 characters',
        { filters: [{ field: 'title', op: 'eq', value: 'x'.repeat(1025) }] },
        'filters[0].value',
        'value_too_long',
      ],
      [
        'more than 5 sort keys',
        { sort: ['title', 'priority', 'points', 'due_on', 'due_at', 'created_at'].map((field) => ({ field })) },
        'sort',
        'too_many_sort_keys',
      ],
      [
        'more than 8 include paths',
        { include: Array.from({ length: 9 }, () => 'project') },
        'include',
        'too_many_includes',
      ],
      [
        'a path over 3 relations',
        { filters: [{ field: 'comments.task.project.owner.name', op: 'eq', value: 'x' }] },
        'filters[0].field',
        'path_too_deep',
      ],
    ])('refuses %s before any SQL', async (_name, request, path, reason) => {
      const detail = await rejectsWithoutSql(suite.db, () => engine.search(request), ValidationError);
      expect(detail).toMatchObject({ path, reason });
    });

    it('accepts the limits themselves, and takes other limits when configured', async () => {
      await expect(engine.search({ filters: Array.from({ length: 64 }, () => leaf) })).resolves.toBeDefined();
      await expect(
        engine.search({ filters: [{ field: 'points', op: 'in', value: Array.from({ length: 500 }, (_, i) => i) }] }),
      ).resolves.toBeDefined();
      const tight = new SearchEngine(suite.db, Task, {
        limits: { maxInList: 2, maxFilterNodes: 2, maxStringLength: 3, maxSortKeys: 1, maxIncludes: 1 },
      });
      await rejectsWithoutSql(
        suite.db,
        () => tight.search({ filters: [{ field: 'points', op: 'in', value: [1, 2, 3] }] }),
        ValidationError,
      );
      await rejectsWithoutSql(suite.db, () => tight.search({ filters: [leaf, leaf, leaf] }), ValidationError);
      await rejectsWithoutSql(
        suite.db,
        () => tight.search({ filters: [{ field: 'title', op: 'eq', value: 'abcd' }] }),
        ValidationError,
      );
      await rejectsWithoutSql(
        suite.db,
        () => tight.search({ sort: [{ field: 'title' }, { field: 'points' }] }),
        ValidationError,
      );
      await rejectsWithoutSql(suite.db, () => tight.search({ include: ['project', 'labels'] }), ValidationError);
      await expect(
        tight.search({
          filters: [{ field: 'points', op: 'in', value: [1, 2] }],
          sort: [{ field: 'title' }],
          include: ['project'],
        }),
      ).resolves.toBeDefined();
    });
  });

  describe('unknown names and relation paths', () => {
    it.each<[string, SearchRequest, string, string]>([
      ['an unknown field', { filters: [leafOf('titel')] }, 'filters[0].field', 'unknown_field'],
      [
        'an unknown field in a group',
        { filters: [leafOf('title'), { op: 'and', items: [leafOf('nope')] }] },
        'filters[1].items[0].field',
        'unknown_field',
      ],
      [
        'an unknown operator',
        { filters: [{ field: 'title', op: 'regex' as 'eq', value: 'x' }] },
        'filters[0].op',
        'unknown_operator',
      ],
      [
        'an unknown group operator',
        { filters: [{ op: 'xor' as 'and', items: [] }] },
        'filters[0].op',
        'unknown_operator',
      ],
      ['a relation used as a field', { filters: [leafOf('project')] }, 'filters[0].field', 'unknown_field'],
      ['an unknown relation in a path', { filters: [leafOf('owner.name')] }, 'filters[0].field', 'unknown_relation'],
      [
        'an unknown field behind a relation',
        { filters: [leafOf('project.nmae')] },
        'filters[0].field',
        'unknown_field',
      ],
      ['an unknown sort field', { sort: [{ field: 'nope' }] }, 'sort[0].field', 'unknown_field'],
      ['a sort through a to-many relation', { sort: [{ field: 'comments.body' }] }, 'sort[0].field', 'invalid_sort'],
      [
        'an unknown sort order',
        { sort: [{ field: 'title', order: 'up' as 'asc' }] },
        'sort[0].order',
        'invalid_request',
      ],
      ['an unknown include', { include: ['project', 'owner'] }, 'include[1]', 'unknown_relation'],
      ['an unknown nested include', { include: ['comments.writer'] }, 'include[0]', 'unknown_relation'],
      ['a field as an include', { include: ['title'] }, 'include[0]', 'unknown_relation'],
      ['an unknown request key', { filter: [] } as SearchRequest, 'filter', 'invalid_request'],
      ['filters that are not an array', { filters: {} } as unknown as SearchRequest, 'filters', 'invalid_request'],
      [
        'a node that is not an object',
        { filters: ['title'] } as unknown as SearchRequest,
        'filters[0]',
        'invalid_request',
      ],
    ])('refuses %s with its JSON path', async (_name, request, path, reason) => {
      const detail = await rejectsWithoutSql(suite.db, () => engine.search(request), ValidationError);
      expect(detail).toMatchObject({ path, reason });
      expect(detail.message.length).toBeGreaterThan(10);
    });

    it.each<[string, unknown, string]>([
      ['a filter without op', { filters: [leafOf('title'), { field: 'title', value: 'x' }] }, 'filters[1].op'],
      [
        'a filter without op in a group',
        { filters: [{ op: 'or', items: [leafOf('title'), { field: 'points', value: 1 }] }] },
        'filters[0].items[1].op',
      ],
      ['a group without op', { filters: [{ items: [leafOf('title')] }] }, 'filters[0].op'],
      ['a filter without field', { filters: [{ op: 'eq', value: 'x' }] }, 'filters[0].field'],
      ['a group without items', { filters: [{ op: 'and' }] }, 'filters[0].items'],
      ['a sort rule without field', { sort: [{ field: 'title' }, { order: 'desc' }] }, 'sort[1].field'],
    ])('refuses %s as a missing key, naming it', async (_name, request, path) => {
      const detail = await rejectsWithoutSql(suite.db, () => engine.search(request as SearchRequest), ValidationError);
      const key = path.slice(path.lastIndexOf('.') + 1);
      expect(detail).toEqual({ path, reason: 'required', message: expect.stringContaining(`'${key}' is required`) });
      expect(detail.message).not.toMatch(/unknown|nothing/);
    });

    it('joins to-one paths and never duplicates rows through to-many paths', async () => {
      expect(await where({ field: 'project.name', op: 'eq', value: 'Alpha' })).toEqual([
        '50 percent',
        '50% off sale',
        'Glob [a]* chars?',
      ]);
      expect(await where({ field: 'project.owner.name', op: 'startswith', value: 'Bob' })).toEqual([
        'snakeXcase name',
        'snake_case name',
      ]);
      expect(await where({ field: 'project.id', op: 'eq', value: seeded.projects.get('Beta')! })).toEqual([
        'snakeXcase name',
        'snake_case name',
      ]);
      // 'Quarterly report' has three comments and two by bob: it still appears once.
      const { result, queries } = await countQueries(suite.db, () =>
        where({ field: 'comments.author.name', op: 'startswith', value: 'Bob' }),
      );
      expect(result).toEqual(['50% off sale', 'Quarterly report']);
      expect(queries).toHaveLength(1);
      expect(queries[0]!.sql).toMatch(/exists \(select 1 from/);
      expect(await where({ field: 'labels.name', op: 'in', value: ['urgent', 'feature'] })).toEqual([
        '50% off sale',
        'Mixed Case Title',
        'snake_case name',
      ]);
      expect(
        await where(
          { field: 'comments.body', op: 'isnull', value: false },
          { field: 'labels.name', op: 'eq', value: 'bug' },
        ),
      ).toEqual(['50 percent', '50% off sale']);
      expect(
        await where({
          op: 'or',
          items: [
            { field: 'project.name', op: 'eq', value: 'Gamma' },
            { field: 'labels.name', op: 'eq', value: 'feature' },
          ],
        }),
      ).toEqual(['C:\\Temp\\files', 'Mixed Case Title', 'Quarterly report', 'snake_case name']);
    });
  });
});

function leafOf(field: string): FilterNode {
  return { field, op: 'eq', value: 'x' };
}
