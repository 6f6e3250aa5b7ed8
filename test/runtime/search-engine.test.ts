/**
 * SearchEngine on both databases: sort and tiebreaker, buildBaseQuery, custom field handlers,
 * validate(); and SearchRequestSchema as a Fastify body schema.
 */
import Fastify from 'fastify';
import { Value } from 'typebox/value';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ForbiddenError,
  SearchEngine,
  SearchRequestSchema,
  ValidationError,
  type FieldHandler,
  type SearchRequest,
} from '@core/runtime';
import { fixtureEntities, Task } from '../../fixtures/models/index.js';
import { countQueries, describeEachDatabase } from '../helpers/databases.js';
import { rejectsWithoutSql, restrictedContext, seedGraph, statements, type Seeded } from './search-fixtures.js';

/** Full-text search over title + description: tsvector on PostgreSQL, word-by-word LIKE on SQLite. */
const fullText: FieldHandler = ({ op, value, dialect, column, path }) => {
  if (op !== 'eq' || typeof value !== 'string' || value.trim() === '') {
    const message = `the search field takes op 'eq' and some words, received op '${op}'`;
    throw new ValidationError(`${path}: ${message}`, [{ path, message, reason: 'invalid_value' }]);
  }
  const document = `coalesce(${column('title')}, '') || ' ' || coalesce(${column('description')}, '')`;
  if (dialect === 'postgresql') {
    return { sql: `to_tsvector('simple', ${document}) @@ plainto_tsquery('simple', ?)`, params: [value] };
  }
  const words = value.toLowerCase().split(/\s+/).filter(Boolean);
  return {
    sql: words.map(() => `lower(${document}) like ? escape '\\'`).join(' and '),
    params: words.map((w) => `%${w.replace(/[\\%_]/g, (c) => `\\${c}`)}%`),
  };
};

describeEachDatabase('SearchEngine', { entities: fixtureEntities }, (suite) => {
  let seeded: Seeded;
  let engine: SearchEngine<Task>;
  beforeAll(async () => {
    seeded = await seedGraph(suite.db);
    engine = new SearchEngine(suite.db, Task).registerHandler('search', fullText);
  });
  const idOf = (title: string) => seeded.tasks.get(title)!;
  const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

  describe('sort and the primary-key tiebreaker', () => {
    it('sorts by primary key ascending by default', async () => {
      const { result, sql } = await statements(suite.db, () => engine.search({}));
      const ids = result.items.map((r) => r.id as string);
      expect(ids).toEqual([...seeded.tasks.values()].sort(byId));
      expect(sql[0]).toMatch(/order by t0\.["`]id["`] asc limit (\?|abs\(\?\))$/);
    });

    it('appends the primary key after the requested keys so ties have one order', async () => {
      const { result, sql } = await statements(suite.db, () =>
        engine.search({ sort: [{ field: 'priority', order: 'desc' }] }),
      );
      expect(sql[0]).toMatch(/order by t0\.["`]priority["`] desc, t0\.["`]id["`] asc limit/);
      const rows = result.items.map((r) => ({ priority: r.priority as string, id: r.id as string }));
      const expected = [...rows].sort((a, b) =>
        a.priority === b.priority ? byId(a.id, b.id) : a.priority < b.priority ? 1 : -1,
      );
      expect(rows).toEqual(expected);
    });

    it('adds no tiebreaker when the primary key is already a key', async () => {
      const { result, sql } = await statements(suite.db, () =>
        engine.search({ sort: [{ field: 'id', order: 'desc' }] }),
      );
      expect(sql[0]).toMatch(/order by t0\.["`]id["`] desc limit/);
      expect(result.items.map((r) => r.id)).toEqual([...seeded.tasks.values()].sort(byId).reverse());
    });

    it('places NULLs first ascending and last descending, on both databases', async () => {
      const asc = (await engine.search({ sort: [{ field: 'points' }] })).items.map((r) => r.points);
      expect(asc).toEqual([null, null, 1, 2, 3, 3, 5, 5, 8]);
      const desc = (await engine.search({ sort: [{ field: 'points', order: 'desc' }] })).items.map((r) => r.points);
      expect(desc).toEqual([8, 5, 5, 3, 3, 2, 1, null, null]);
    });

    it('sorts by a to-one relation path (left join; missing relations count as NULL)', async () => {
      const page = await engine.search({
        sort: [{ field: 'project.name', order: 'desc' }, { field: 'title' }],
        include: ['project'],
      });
      const names = page.items.map((r) => (r.project as { name: string } | null)?.name ?? null);
      expect(names).toEqual(['Gamma', 'Gamma', 'Beta', 'Beta', 'Alpha', 'Alpha', 'Alpha', null, null]);
      const byOwner = await engine.search({ sort: [{ field: 'project.owner.name' }] });
      expect(
        byOwner.items
          .slice(-2)
          .map((r) => r.title)
          .sort(),
      ).toEqual(['snakeXcase name', 'snake_case name']);
    });
  });

  describe('buildBaseQuery', () => {
    it('returns a query the caller extends with a where and a limit, then executes', async () => {
      const q = engine.buildBaseQuery({
        filters: [{ field: 'priority', op: 'in', value: ['high', 'low'] }],
        sort: [{ field: 'points', order: 'desc' }],
        include: ['project'],
      });
      q.where(`${q.column('points')} >= ?`, [2]).limit(3);
      expect(q.alias).toBe('t0');
      expect(q.toSQL().params).toEqual(['high', 'low', 2, 3]);
      const { result, sql } = await statements(suite.db, () => q.execute());
      expect(sql).toHaveLength(1);
      const fives = [idOf('50% off sale'), idOf('50 percent')].sort(byId);
      expect(result.map((r) => r.id)).toEqual([idOf('Mixed Case Title'), ...fives]);
      expect(result[0]!.project).toBeNull();
      expect(result.find((r) => r.title === '50 percent')!.project).toMatchObject({ name: 'Alpha' });
    });

    it('takes a leading order and an offset; without a limit it reads every match', async () => {
      const q = engine.buildBaseQuery({ sort: [{ field: 'title' }] });
      q.orderBy(`case when ${q.column('priority')} = ? then 0 else 1 end`, ['low']);
      const all = await q.execute();
      expect(all).toHaveLength(seeded.tasks.size);
      expect(all.slice(0, 3).map((r) => r.priority)).toEqual(['low', 'low', 'low']);
      const rest = await engine
        .buildBaseQuery({ sort: [{ field: 'title' }] })
        .offset(7)
        .execute();
      expect(rest).toHaveLength(2);
    });

    it('applies the request limit and offset, and checks the request like search', async () => {
      expect(await engine.buildBaseQuery({ limit: 2, offset: 1 }).execute()).toHaveLength(2);
      expect(await engine.buildBaseQuery().limit(0).execute()).toEqual([]);
      const { queries } = await countQueries(suite.db, async () => {
        expect(() => engine.buildBaseQuery({ filters: [{ field: 'nope', op: 'eq', value: 1 }] })).toThrow(
          ValidationError,
        );
        expect(() => engine.buildBaseQuery({ include: ['project'] }, restrictedContext('tasks.project'))).toThrow(
          ForbiddenError,
        );
      });
      expect(queries).toEqual([]);
    });

    it('refuses fragments whose placeholders and params disagree', () => {
      const q = engine.buildBaseQuery();
      expect(() => q.where('t0.points = ?', [])).toThrow(/1 '\?' placeholders but 0 params/);
      expect(() => q.where('', [])).toThrow(/needs an SQL fragment/);
      expect(() => q.limit(-1)).toThrow(/integer of 0 or more/);
    });
  });

  describe('registerHandler', () => {
    it.each<[string, string[]]>([
      ['release notes', ['Mixed Case Title']],
      ['finance charts', ['Quarterly report']],
      ['campaign 50', ['50% off sale']],
      ['charts banner', []],
    ])('full-text %j over title and description', async (words, expected) => {
      const { result, sql } = await statements(suite.db, () =>
        engine.search({ filters: [{ field: 'search', op: 'eq', value: words }] }),
      );
      expect(result.items.map((r) => r.title).sort()).toEqual(expected);
      if (suite.name === 'postgresql') expect(sql[0]).toContain("to_tsvector('simple'");
      else expect(sql[0]).toMatch(/lower\(coalesce\(t0\.`title`.* like \? escape/);
    });

    it('combines with ordinary leaves inside groups', async () => {
      const page = await engine.search({
        filters: [
          {
            op: 'or',
            items: [
              { field: 'search', op: 'eq', value: 'charts' },
              { field: 'title', op: 'eq', value: '50 percent' },
            ],
          },
        ],
      });
      expect(page.items.map((r) => r.title).sort()).toEqual(['50 percent', 'Quarterly report']);
    });

    it('lets the handler refuse a value before any SQL, and is subject to restrictions', async () => {
      const detail = await rejectsWithoutSql(
        suite.db,
        () => engine.search({ filters: [{ field: 'search', op: 'ilike', value: 'x' }] }),
        ValidationError,
      );
      expect(detail.path).toBe('filters[0].value');
      await rejectsWithoutSql(
        suite.db,
        () =>
          engine.search({ filters: [{ field: 'search', op: 'eq', value: 'x' }] }, restrictedContext('tasks.search')),
        ForbiddenError,
      );
    });

    it('belongs to its engine: another engine does not know the field', async () => {
      const plain = new SearchEngine(suite.db, Task);
      const detail = await rejectsWithoutSql(
        suite.db,
        () => plain.search({ filters: [{ field: 'search', op: 'eq', value: 'charts' }] }),
        ValidationError,
      );
      expect(detail.reason).toBe('unknown_field');
    });

    it('binds cursors to a handler value of any JSON shape, whatever the order of its keys', async () => {
      const between: FieldHandler = ({ value, column }) => {
        const { min, max } = value as { min: number; max: number };
        return { sql: `${column('points')} between ? and ?`, params: [min, max] };
      };
      const ranged = new SearchEngine(suite.db, Task).registerHandler('points_between', between);
      const request = (value: unknown, cursor?: string): SearchRequest => ({
        filters: [{ field: 'points_between', op: 'eq', value }],
        sort: [{ field: 'points' }],
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      const first = await ranged.search(request({ min: 1, max: 5 }));
      expect(first.items.map((r) => r.points)).toEqual([1, 2]);
      const next = await ranged.search(request({ max: 5, min: 1 }, first.nextCursor!));
      expect(next.items.map((r) => r.points)).toEqual([3, 3]);
      for (const other of [{ min: 2, max: 5 }, { min: 1, max: 5, step: 1 }, [1, 5], '1-5']) {
        const detail = await rejectsWithoutSql(
          suite.db,
          () => ranged.search(request(other, first.nextCursor!)),
          ValidationError,
        );
        expect(detail).toMatchObject({ path: 'cursor', reason: 'cursor_mismatch' });
      }
    });

    it('refuses a handler whose SQL and params disagree', async () => {
      const broken = new SearchEngine(suite.db, Task).registerHandler('broken', () => ({ sql: '1 = ?', params: [] }));
      await expect(broken.search({ filters: [{ field: 'broken', op: 'eq', value: 1 }] })).rejects.toThrow(
        /1 '\?' placeholders but 0 params/,
      );
      expect(() => broken.registerHandler('a.b', fullText)).toThrow(/without dots/);
    });
  });

  it('validate() checks a request without sending SQL', async () => {
    const request: SearchRequest = {
      filters: [{ field: 'project.name', op: 'ilike', value: 'al' }],
      sort: [{ field: 'title' }],
      include: ['comments.author'],
    };
    const { queries } = await countQueries(suite.db, async () => engine.validate(request));
    expect(queries).toEqual([]);
    await rejectsWithoutSql(
      suite.db,
      () => engine.validate({ filters: [{ field: 'title', op: 'eq', value: 1 }] }),
      ValidationError,
    );
  });
});

describe('SearchRequestSchema', () => {
  const body: SearchRequest = {
    filters: [
      {
        op: 'or',
        items: [
          { field: 'title', op: 'ilike', value: 'a' },
          { op: 'and', items: [{ field: 'points', op: 'in', value: [1, 2] }] },
        ],
      },
    ],
    include: ['comments.author'],
    sort: [{ field: 'title', order: 'desc' }],
    limit: 10,
    cursor: 'abc',
  };

  it('checks the structure with TypeBox', () => {
    expect(Value.Check(SearchRequestSchema, body)).toBe(true);
    expect(Value.Check(SearchRequestSchema, { filters: [{ field: 'title', op: 'regex', value: 'a' }] })).toBe(false);
    expect(Value.Check(SearchRequestSchema, { sort: [{ field: 'title', order: 'up' }] })).toBe(false);
    expect(Value.Check(SearchRequestSchema, { limit: 0 })).toBe(false);
  });

  it('serves as a Fastify body schema with the default validator, values untouched', async () => {
    const app = Fastify();
    app.post('/search', { schema: { body: SearchRequestSchema } }, async (req) => req.body);
    const ok = await app.inject({
      method: 'POST',
      url: '/search',
      payload: { ...body, filters: [{ field: 'points', op: 'eq', value: 5 }] },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().filters[0].value).toBe(5);
    const bad = await app.inject({
      method: 'POST',
      url: '/search',
      payload: { filters: [{ op: 'and', items: [{ field: 'a', op: 'zz' }] }] },
    });
    expect(bad.statusCode).toBe(400);
    await app.close();
  });
});
