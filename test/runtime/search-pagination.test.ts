/**
 * Pagination on both databases: limit/offset rules, hasMore, and keyset cursors — walks over 1,000
 * rows with ties and NULLs (also while rows are inserted), cursor encryption and binding.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ModelReader,
  SearchEngine,
  ValidationError,
  type Database,
  type FilterNode,
  type SearchRequest,
  type SortRule,
} from '@core/runtime';
import { CursorCodec } from '../../runtime/src/search/cursor.js';
import { fixtureEntities, Project, Task } from '../../fixtures/models/index.js';
import { countQueries, describeEachDatabase } from '../helpers/databases.js';
import { bulkTask, insertTasks, rejectsWithoutSql, restrictedContext, type BulkTask } from './search-fixtures.js';

const ROWS = 1000;

/** Three projects, then 1,000 tasks in one INSERT; every fourth task has no project. */
async function seedBulk(db: Database): Promise<BulkTask[]> {
  const em = db.orm.em.fork();
  const projects = ['Alpha', 'Beta', 'Gamma'].map((name) => em.create(Project, { name, budget: null } as never));
  await em.flush();
  const rows = Array.from({ length: ROWS }, (_, i) =>
    bulkTask(i, { project: i % 4 === 0 ? null : projects[i % 3]!.id }),
  );
  await insertTasks(db, rows);
  return rows;
}

/** Follows next cursors to the end; `between` runs after each page. Returns the ids in visit order. */
async function walk(
  engine: SearchEngine<Task>,
  request: SearchRequest,
  between?: () => Promise<void>,
): Promise<string[]> {
  const seen: string[] = [];
  let page = await engine.search(request);
  for (;;) {
    seen.push(...page.items.map((r) => r.id as string));
    if (!page.hasMore) break;
    expect(page.nextCursor).toEqual(expect.any(String));
    await between?.();
    const { filters, sort, include, limit } = request;
    page = await engine.search({ filters, sort, include, limit, cursor: page.nextCursor! });
    expect(page.offset).toBeNull();
  }
  expect(page.nextCursor).toBeNull();
  return seen;
}

describeEachDatabase('search pagination', { entities: fixtureEntities }, (suite) => {
  let engine: SearchEngine<Task>;
  beforeAll(async () => {
    await seedBulk(suite.db);
    engine = new SearchEngine(suite.db, Task);
  });

  describe('limit and offset', () => {
    it('defaults to 50 rows, reads limit + 1 to know whether more exist, and offers a cursor', async () => {
      const { result: page, queries } = await countQueries(suite.db, () => engine.search({}));
      expect(page).toMatchObject({ limit: 50, offset: 0, hasMore: true });
      expect(page.items).toHaveLength(50);
      expect(page.nextCursor).toEqual(expect.any(String));
      expect(queries).toHaveLength(1);
      expect(queries[0]!.params.at(-1)).toBe(51);
    });

    it('says there is no more when exactly `limit` rows remain', async () => {
      const page = await engine.search({ offset: ROWS - 10, limit: 10 });
      expect(page).toMatchObject({ offset: ROWS - 10, hasMore: false, nextCursor: null });
      expect(page.items).toHaveLength(10);
      const last = await engine.search({ offset: ROWS - 9, limit: 10 });
      expect(last.items).toHaveLength(9);
    });

    it.each<[string, SearchRequest, string, string]>([
      ['limit 0', { limit: 0 }, 'limit', 'invalid_limit'],
      ['limit above 500', { limit: 501 }, 'limit', 'invalid_limit'],
      ['a fractional limit', { limit: 2.5 }, 'limit', 'invalid_limit'],
      ['a string limit', { limit: '5' as unknown as number }, 'limit', 'invalid_limit'],
      ['a negative offset', { offset: -1 }, 'offset', 'invalid_offset'],
      ['offset and cursor together', { offset: 10, cursor: 'x' }, 'cursor', 'invalid_request'],
      ['an empty cursor', { cursor: '' }, 'cursor', 'invalid_cursor'],
    ])('refuses %s before any SQL', async (_name, request, path, reason) => {
      expect(await rejectsWithoutSql(suite.db, () => engine.search(request), ValidationError)).toMatchObject({
        path,
        reason,
      });
    });

    it('takes its maximum and default page sizes from configuration', async () => {
      const reader = new ModelReader(suite.db, Task, { maxLimit: 20 });
      expect((await reader.getList()).limit).toBe(20);
      expect((await reader.getList({ limit: 20 })).items).toHaveLength(20);
      await rejectsWithoutSql(suite.db, () => reader.getList({ limit: 21 }), ValidationError);
      expect((await new ModelReader(suite.db, Task, { defaultLimit: 7 }).getList()).items).toHaveLength(7);
      await expect(engine.search({ limit: 500 })).resolves.toMatchObject({ limit: 500 });
    });

    it('returns a next cursor in offset mode that continues where the offset page ended', async () => {
      const sort: SortRule[] = [{ field: 'points', order: 'desc' }];
      const page = await engine.search({ sort, offset: 20, limit: 10 });
      const next = await engine.search({ sort, limit: 10, cursor: page.nextCursor! });
      const byOffset = await engine.search({ sort, offset: 30, limit: 10 });
      expect(next.items.map((r) => r.id)).toEqual(byOffset.items.map((r) => r.id));
      expect(next.offset).toBeNull();
    });
  });

  describe('keyset walks over 1,000 rows', () => {
    it.each<[string, SortRule[]]>([
      ['a column with many ties and NULLs, descending', [{ field: 'points', order: 'desc' }]],
      ['the same column ascending', [{ field: 'points', order: 'asc' }]],
      ['two keys with ties and NULLs', [{ field: 'priority', order: 'desc' }, { field: 'points' }]],
      [
        'a to-one relation path with NULLs',
        [
          { field: 'project.name', order: 'desc' },
          { field: 'points', order: 'desc' },
        ],
      ],
      ['a datetime column', [{ field: 'created_at', order: 'desc' }]],
      ['a boolean and a number', [{ field: 'is_completed' }, { field: 'points', order: 'desc' }]],
      ['the default order', []],
    ])('visits every row exactly once, in order, sorting by %s', async (_name, sort) => {
      // The reference order is the database's own, read in one statement.
      const expected = (await engine.buildBaseQuery({ sort }).execute()).map((r) => r.id as string);
      expect(expected).toHaveLength(ROWS);
      const seen = await walk(engine, { sort, limit: 37 });
      expect(new Set(seen).size).toBe(ROWS);
      expect(seen).toEqual(expected);
    });

    it('walks a filtered result and keeps NULLs first ascending, last descending', async () => {
      const filters = [{ field: 'priority', op: 'ne' as const, value: 'low' }];
      const asc = await engine.buildBaseQuery({ filters, sort: [{ field: 'points' }] }).execute();
      expect(asc[0]!.points).toBeNull();
      expect(asc.at(-1)!.points).toBe(4);
      const desc = await engine.buildBaseQuery({ filters, sort: [{ field: 'points', order: 'desc' }] }).execute();
      expect(desc[0]!.points).toBe(4);
      expect(desc.at(-1)!.points).toBeNull();
      expect(await walk(engine, { filters, sort: [{ field: 'points', order: 'desc' }], limit: 50 })).toEqual(
        desc.map((r) => r.id),
      );
    });
  });

  describe('cursors', () => {
    const sort: SortRule[] = [{ field: 'title', order: 'desc' }];
    const filters = [{ field: 'points', op: 'gte' as const, value: 1 }];
    let cursor: string;
    beforeAll(async () => {
      cursor = (await engine.search({ sort, filters, limit: 5 })).nextCursor!;
    });

    it("are signed: they carry the last row's sort values (title, id), not its other fields nor the filter values", async () => {
      const page = await engine.search({ sort, filters, limit: 5 });
      const last = page.items.at(-1)!;
      // After the version byte and the MAC: the binding's length, the binding, the values as JSON.
      const body = Buffer.from(cursor, 'base64url').subarray(17);
      expect(body[0]).toBe(16);
      expect(body.subarray(1, 17).toString('latin1')).toMatch(/^[A-Za-z0-9_-]{16}$/);
      const text = body.subarray(17).toString('utf8');
      expect(JSON.parse(text)).toEqual([last.title, last.id]);
      expect(text).not.toContain('points');
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    });

    it('are sealed where the tiebreaker is a primary key the caller may not see: nothing in them can be read', async () => {
      const ctx = restrictedContext('tasks.id');
      const page = await engine.search({ sort, filters, limit: 5 }, ctx);
      const lastTitle = page.items.at(-1)!.title as string;
      const rows = await engine.buildBaseQuery({ sort, filters }).limit(5).execute();
      const bytes = Buffer.from(page.nextCursor!, 'base64url').toString('latin1');
      for (const hidden of [lastTitle, rows.at(-1)!.id as string, 'Task', 'title']) expect(bytes).not.toContain(hidden);
      // It opens for the same caller, and continues where the page ended.
      const next = await engine.search({ sort, filters, limit: 5, cursor: page.nextCursor! }, ctx);
      const expected = await engine.buildBaseQuery({ sort, filters }).limit(10).execute();
      expect(next.items.map((r) => r.title)).toEqual(expected.slice(5).map((r) => r.title));
    });

    it('accept the same filters written with their keys in another order', async () => {
      const page = await engine.search({ sort, filters: [{ value: 1, op: 'gte', field: 'points' }], limit: 5, cursor });
      expect(page.items).toHaveLength(5);
    });

    it.each<[string, () => SearchRequest, string]>([
      ['a changed character', () => ({ sort, filters, cursor: flip(cursor) }), 'invalid_cursor'],
      ['a truncated cursor', () => ({ sort, filters, cursor: cursor.slice(0, -4) }), 'invalid_cursor'],
      ['garbage', () => ({ sort, filters, cursor: 'not-a-cursor' }), 'invalid_cursor'],
      [
        'a cursor made with another secret',
        () => ({ sort, filters, cursor: CursorCodec.forSecret('another-secret').encode({ binding: 'x', values: [] }) }),
        'invalid_cursor',
      ],
      ['another sort', () => ({ sort: [{ field: 'title', order: 'asc' }], filters, cursor }), 'cursor_mismatch'],
      [
        'another sort key',
        () => ({ sort: [{ field: 'priority', order: 'desc' }], filters, cursor }),
        'cursor_mismatch',
      ],
      [
        'another filter value',
        () => ({ sort, filters: [{ field: 'points', op: 'gte', value: 2 }], cursor }),
        'cursor_mismatch',
      ],
      [
        'another operator',
        () => ({ sort, filters: [{ field: 'points', op: 'gt', value: 1 }], cursor }),
        'cursor_mismatch',
      ],
      [
        'another field',
        () => ({ sort, filters: [{ field: 'priority', op: 'gte', value: '1' }], cursor }),
        'cursor_mismatch',
      ],
      [
        'one more filter',
        () => ({ sort, filters: [...filters, { field: 'title', op: 'ne', value: 'x' }], cursor }),
        'cursor_mismatch',
      ],
      [
        'the filter inside a group',
        () => ({ sort, filters: [{ op: 'and', items: filters }], cursor }),
        'cursor_mismatch',
      ],
      ['no filters', () => ({ sort, cursor }), 'cursor_mismatch'],
    ])('refuse %s before any SQL', async (_name, request, reason) => {
      const detail = await rejectsWithoutSql(suite.db, () => engine.search(request()), ValidationError);
      expect(detail).toMatchObject({ path: 'cursor', reason });
    });

    it('bind the grouping of filters, not only their leaves', async () => {
      const high = { field: 'priority', op: 'eq' as const, value: 'high' };
      const many = { field: 'points', op: 'gte' as const, value: 3 };
      const grouped: SearchRequest = { sort, filters: [{ op: 'or', items: [high, many] }], limit: 5 };
      const groupedCursor = (await engine.search(grouped)).nextCursor!;
      // The same tree, its keys written in another order, continues.
      const reordered: FilterNode[] = [
        {
          items: [
            { value: 'high', field: 'priority', op: 'eq' },
            { op: 'gte', value: 3, field: 'points' },
          ],
          op: 'or',
        },
      ];
      expect((await engine.search({ sort, filters: reordered, limit: 5, cursor: groupedCursor })).items).toHaveLength(
        5,
      );
      for (const filters of [
        [high, many],
        [{ op: 'and', items: [high, many] }],
        [{ op: 'or', items: [many, high] }],
        [{ op: 'or', items: [high] }, many],
      ] as FilterNode[][]) {
        const detail = await rejectsWithoutSql(
          suite.db,
          () => engine.search({ sort, filters, cursor: groupedCursor }),
          ValidationError,
        );
        expect(detail).toMatchObject({ path: 'cursor', reason: 'cursor_mismatch' });
      }
    });

    it('issued without filters continue without filters, and only with the same sort', async () => {
      // Twice: the binding of an unfiltered shape is computed once, then reused.
      for (let i = 0; i < 2; i++) {
        const first = await engine.search({ sort, limit: 5 });
        const second = await engine.search({ sort, limit: 5, cursor: first.nextCursor! });
        expect(second.items).toHaveLength(5);
        expect(second.items[0]!.id).not.toBe(first.items[0]!.id);
        const unsorted = (await engine.search({ limit: 5 })).nextCursor!;
        for (const request of [
          { sort, filters, cursor: first.nextCursor! },
          { cursor: first.nextCursor! },
          { sort, cursor: unsorted },
        ]) {
          const detail = await rejectsWithoutSql(suite.db, () => engine.search(request), ValidationError);
          expect(detail).toMatchObject({ path: 'cursor', reason: 'cursor_mismatch' });
        }
      }
    });

    it('refuse a cursor issued for another model', async () => {
      const projects = new SearchEngine(suite.db, Project);
      const projectCursor = (await projects.search({ limit: 1 })).nextCursor!;
      const detail = await rejectsWithoutSql(
        suite.db,
        () => engine.search({ limit: 1, cursor: projectCursor }),
        ValidationError,
      );
      expect(detail.reason).toBe('cursor_mismatch');
    });
  });
});

describeEachDatabase('keyset walk under concurrent inserts', { entities: fixtureEntities }, (suite) => {
  it('visits each original row exactly once and each new row at most once', async () => {
    const originals = await seedBulk(suite.db);
    const engine = new SearchEngine(suite.db, Task);
    const inserted: string[] = [];
    let n = ROWS;
    const seen = await walk(
      engine,
      { sort: [{ field: 'points', order: 'desc' }, { field: 'project.name' }], limit: 40 },
      async () => {
        // Rows land before and after the cursor: every points value and NULL, random ids.
        const batch = [0, 1, 2, 3, 4, 5].map((k) => bulkTask(n++, { id: randomUUID(), points: k === 5 ? null : k }));
        await insertTasks(suite.db, batch);
        inserted.push(...batch.map((b) => b.id));
      },
    );
    const counts = new Map<string, number>();
    for (const id of seen) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const row of originals) expect(counts.get(row.id), `original ${row.title}`).toBe(1);
    for (const id of inserted) expect(counts.get(id) ?? 0).toBeLessThanOrEqual(1);
    expect(seen.length).toBe(new Set(seen).size);
    expect(inserted.length).toBeGreaterThan(100);
  });
});

/** The cursor with one character in its ciphertext changed. */
function flip(cursor: string): string {
  const i = Math.floor(cursor.length / 2);
  return cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1);
}
