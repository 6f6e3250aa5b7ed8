/**
 * ModelReader on both databases, and on a SQLite file (read through its read-only connection): row
 * shape, get / getByIds, the include loader strategy (statement counts at two page sizes), and
 * restricted columns left out of the SELECT.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelReader, runWithContext, ValidationError, ForbiddenError } from '@core/runtime';
import { DatabaseManager } from '../../runtime/src/db/database.js';
import { Comment, fixtureEntities, Profile, Project, Task, User } from '../../fixtures/models/index.js';
import { countQueries, describeEachDatabase, type DatabaseSuite } from '../helpers/databases.js';
import {
  bulkTask,
  insertTasks,
  rejectsWithoutSql,
  restrictedContext,
  seedGraph,
  statements,
  type Seeded,
} from './search-fixtures.js';

const TASK_KEYS = [
  'id',
  'title',
  'description',
  'priority',
  'is_completed',
  'assignee_email',
  'points',
  'due_on',
  'due_at',
  'project_id',
  'created_at',
];

describeEachDatabase('ModelReader', { entities: fixtureEntities }, modelReaderTests);

/**
 * The same tests on a SQLite file: there, reads outside a unit of work go through the database's
 * read-only connection instead of the pool (`:memory:` has no second connection).
 */
describe('ModelReader [sqlite file]', () => {
  const manager = new DatabaseManager();
  const suite = { name: 'sqlite', url: '' } as { -readonly [K in keyof DatabaseSuite]: DatabaseSuite[K] };
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'core-reader-'));
    suite.url = `sqlite:${join(dir, 'app.db')}`;
    suite.db = await manager.initApp(suite.url, false, {
      entities: fixtureEntities,
      cursorSecret: 'test-cursor-secret-0123456789abcdef',
    });
    await suite.db.resetSchema();
  });
  afterAll(async () => {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  });
  modelReaderTests(suite);
});

function modelReaderTests(suite: DatabaseSuite): void {
  let seeded: Seeded;
  let tasks: ModelReader<Task>;
  let bulkIds: string[];
  beforeAll(async () => {
    seeded = await seedGraph(suite.db);
    // 120 more tasks, each with one comment, so pages of 10 and 100 both have children to load.
    const bulk = Array.from({ length: 120 }, (_, i) => bulkTask(i, { project: seeded.projects.get('Beta')! }));
    await insertTasks(suite.db, bulk);
    bulkIds = bulk.map((b) => b.id);
    await suite.db.orm.em.fork().insertMany(
      Comment,
      bulk.map((b, i) => ({
        id: randomUUID(),
        body: `c${i}`,
        task: b.id,
        author: seeded.users.get('ann')!,
        created_at: new Date(),
      })) as never,
    );
    tasks = new ModelReader(suite.db, Task);
  });
  const idOf = (title: string) => seeded.tasks.get(title)!;

  describe('rows', () => {
    it('are plain objects: columns by name, to-one keys as <relation>_id, Dates, booleans, nulls', async () => {
      const row = (await tasks.get(idOf('Mixed Case Title')))!;
      expect(Object.keys(row)).toEqual(TASK_KEYS);
      expect(row).toMatchObject({
        title: 'Mixed Case Title',
        is_completed: true,
        points: 8,
        project_id: null,
        due_on: null,
        assignee_email: null,
      });
      expect(row.due_at).toEqual(new Date('2026-02-01T12:30:00Z'));
      expect(row.created_at).toBeInstanceOf(Date);
      const other = (await tasks.get(idOf('Quarterly report')))!;
      expect(other).toMatchObject({
        is_completed: true,
        due_on: '2026-04-30',
        due_at: null,
        project_id: seeded.projects.get('Gamma'),
      });
      expect((await tasks.get(idOf('50 percent')))!.is_completed).toBe(false);
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    });

    it('get returns null for a missing id with one statement; an invalid id is refused without SQL', async () => {
      const { result, queries } = await countQueries(suite.db, () => tasks.get(randomUUID()));
      expect(result).toBeNull();
      expect(queries).toHaveLength(1);
      expect(await rejectsWithoutSql(suite.db, () => tasks.get('12'), ValidationError)).toMatchObject({
        path: 'id',
        reason: 'invalid_value',
      });
      await rejectsWithoutSql(suite.db, () => tasks.get({ id: 1 }), ValidationError);
      await rejectsWithoutSql(suite.db, () => tasks.get(idOf('50 percent'), { include: ['nope'] }), ValidationError);
    });

    it('getByIds reads 100 ids in one statement, in the order given', async () => {
      const ids = bulkIds.slice(0, 100).reverse();
      const { result, queries } = await countQueries(suite.db, () => tasks.getByIds(ids));
      expect(queries).toHaveLength(1);
      expect(result.map((r) => r.id)).toEqual(ids);
      // 120 ids share the statement of 100: lists are padded to the next power of two.
      const { sql } = await statements(suite.db, () => tasks.getByIds(bulkIds.slice(0, 120)));
      expect(sql).toEqual(queries.map((q) => q.sql));
    });

    it('getByIds collapses duplicates (any case), leaves out missing ids, and reads nothing for none', async () => {
      const [a, b] = [idOf('50 percent'), idOf('Quarterly report')];
      const result = await tasks.getByIds([b, a, randomUUID(), b.toUpperCase(), a]);
      expect(result.map((r) => r.id)).toEqual([b, a]);
      const { result: none, queries } = await countQueries(suite.db, () => tasks.getByIds([]));
      expect(none).toEqual([]);
      expect(queries).toEqual([]);
    });

    it('getByIds refuses the whole call when one id is invalid, naming it, before any SQL', async () => {
      const ids = [idOf('50 percent'), idOf('Quarterly report'), randomUUID(), "1' or '1'='1", randomUUID()];
      expect(await rejectsWithoutSql(suite.db, () => tasks.getByIds(ids), ValidationError)).toMatchObject({
        path: 'ids[3]',
      });
      await rejectsWithoutSql(suite.db, () => tasks.getByIds('abc' as unknown as string[]), ValidationError);
    });

    it('a page holds the same rows as get: same keys in the same order, the same decoded values', async () => {
      // A plain page is decoded in place; a sort on a relation path selects a column the rows must not show.
      for (const sort of [[{ field: 'id' }], [{ field: 'project.name' }, { field: 'id' }]]) {
        const page = await tasks.search({ sort, limit: 50 });
        expect(page.items.length).toBeGreaterThan(3);
        for (const row of page.items) {
          expect(Object.keys(row)).toEqual(TASK_KEYS);
          expect(row).toEqual(await tasks.get(row.id));
        }
      }
    });

    it('getList is a search with list parameters', async () => {
      const page = await tasks.getList({
        filters: [{ field: 'project.name', op: 'eq', value: 'Gamma' }],
        sort: [{ field: 'title' }],
        include: ['project'],
        limit: 1,
      });
      expect(page).toMatchObject({ limit: 1, offset: 0, hasMore: true });
      expect(page.items[0]).toMatchObject({ title: 'C:\\Temp\\files', project: { name: 'Gamma' } });
      const next = await tasks.getList({
        filters: [{ field: 'project.name', op: 'eq', value: 'Gamma' }],
        sort: [{ field: 'title' }],
        limit: 1,
        cursor: page.nextCursor!,
      });
      expect(next.items.map((r) => r.title)).toEqual(['Quarterly report']);
      expect(new ModelReader(suite.db, Task, { maxDepth: 1 }).engine.maxDepth).toBe(1);
    });
  });

  describe('include loader strategy', () => {
    it.each<[string[], number]>([
      [['project'], 1],
      [['project.owner'], 1],
      [['comments'], 2],
      [['labels'], 2],
      [['comments.author'], 2],
      [['project', 'comments', 'labels'], 3],
      [['project.tasks'], 2],
      [['project.tasks.comments'], 3],
    ])('%j takes %i statement(s) at page sizes 10 and 100', async (include, expected) => {
      for (const limit of [10, 100]) {
        const { result, queries } = await countQueries(suite.db, () => tasks.search({ include, limit }));
        expect(result.items).toHaveLength(limit);
        expect(queries, JSON.stringify(queries.map((q) => q.sql))).toHaveLength(expected);
        if (expected > 1) expect(queries[1]!.sql).toMatch(/ in \(\?/);
      }
    });

    it('puts to-one relations under their name (object or null) and to-many ones as arrays', async () => {
      const rows = await tasks.getByIds([idOf('50% off sale'), idOf('Mixed Case Title')], {
        include: ['project.owner', 'comments.author', 'labels'],
      });
      const [sale, mixed] = rows as Record<string, unknown>[];
      expect(sale!.project).toMatchObject({
        name: 'Alpha',
        budget: 100,
        owner_id: seeded.users.get('ann'),
        owner: { name: 'Ann Archer' },
      });
      expect(
        (sale!.comments as { body: string; author: { name: string } }[]).map((c) => [c.body, c.author.name]).sort(),
      ).toEqual([
        ['first', 'Ann Archer'],
        ['second', 'Bob Brown'],
      ]);
      expect((sale!.labels as { name: string }[]).map((l) => l.name).sort()).toEqual(['bug', 'urgent']);
      expect(mixed).toMatchObject({ project: null, comments: [] });
      expect((mixed!.labels as unknown[]).length).toBe(2);
      const anon = (await tasks.get(idOf('snakeXcase name'), { include: ['comments.author'] }))!;
      expect(anon.comments).toEqual([expect.objectContaining({ body: 'anon', author: null })]);
    });

    it('joins both sides of a one-to-one and loads a to-many under a to-one', async () => {
      const users = new ModelReader(suite.db, User);
      const { result: ann, queries } = await countQueries(suite.db, () =>
        users.get(seeded.users.get('ann')!, { include: ['profile'] }),
      );
      expect(queries).toHaveLength(1);
      expect(ann!.profile).toMatchObject({ bio: 'Ann writes', user_id: seeded.users.get('ann') });
      expect((await users.get(seeded.users.get('bob')!, { include: ['profile'] }))!.profile).toBeNull();
      const profiles = await new ModelReader(suite.db, Profile).getList({ include: ['user'] });
      expect(profiles.items[0]!.user).toMatchObject({ name: 'Ann Archer' });
      const gamma = (await new ModelReader(suite.db, Project).get(seeded.projects.get('Gamma')!, {
        include: ['tasks'],
      }))!;
      expect((gamma.tasks as { title: string }[]).map((t) => t.title).sort()).toEqual([
        'C:\\Temp\\files',
        'Quarterly report',
      ]);
    });

    it('refuses a to-many include that would load more than maxIncludedRows', async () => {
      const small = new ModelReader(suite.db, Task, { limits: { maxIncludedRows: 5 } });
      const error = await small.search({ include: ['comments'], limit: 100 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).details[0]).toMatchObject({ path: 'include[0]', reason: 'include_too_large' });
    });
  });

  describe('LIMIT', () => {
    // SQLite compiles a statement whose LIMIT is a bare `?` again each time the parameter is bound,
    // and better-sqlite3 binds on every run; `abs(?)` is compiled once (docs/performance.md).
    it('is abs(?) on SQLite and a plain parameter on PostgreSQL, in pages and in include loaders', async () => {
      const { result, sql } = await statements(suite.db, () => tasks.getList({ limit: 3, include: ['comments'] }));
      expect(result.items).toHaveLength(3);
      expect(sql).toHaveLength(2);
      const placeholder = suite.name === 'sqlite' ? 'abs(?)' : '?';
      for (const text of sql) expect(text).toMatch(new RegExp(` limit ${placeholder.replace(/[()?]/g, '\\$&')}$`));
    });
  });

  describe('restricted columns are not read', () => {
    it('leaves a restricted field out of the SELECT and the row', async () => {
      const { result, sql } = await statements(suite.db, () =>
        runWithContext(restrictedContext('tasks.assignee_email'), () => tasks.get(idOf('50% off sale'))),
      );
      expect(sql[0]).not.toContain('assignee_email');
      expect(Object.keys(result!)).toEqual(TASK_KEYS.filter((k) => k !== 'assignee_email'));
    });

    it("leaves a restricted relation's key out, and refuses including it", async () => {
      const ctx = restrictedContext('tasks.project');
      const { result, sql } = await statements(suite.db, () => runWithContext(ctx, () => tasks.getList({ limit: 3 })));
      expect(sql[0]).not.toContain('project_id');
      expect(result.items[0]).not.toHaveProperty('project_id');
      await rejectsWithoutSql(
        suite.db,
        () => runWithContext(ctx, () => tasks.get(idOf('50% off sale'), { include: ['project'] })),
        ForbiddenError,
      );
    });

    it("leaves a target model's restricted field out of included rows", async () => {
      const ctx = restrictedContext('projects.budget', 'comments.body');
      const { result, sql } = await statements(suite.db, () =>
        runWithContext(ctx, () => tasks.get(idOf('50% off sale'), { include: ['project', 'comments'] })),
      );
      expect(sql.join(' ')).not.toMatch(/budget|body/);
      expect(result!.project).toMatchObject({ name: 'Alpha' });
      expect(result!.project).not.toHaveProperty('budget');
      expect((result!.comments as object[])[0]).not.toHaveProperty('body');
      // Unrestricted, the same read has both.
      const full = (await tasks.get(idOf('50% off sale'), { include: ['project', 'comments'] }))!;
      expect(full.project).toHaveProperty('budget', 100);
    });

    it('still reads a restricted primary key for its own use, without returning it', async () => {
      const rows = await runWithContext(restrictedContext('tasks.id'), () =>
        tasks.getByIds([idOf('50 percent')], { include: ['comments'] }),
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).not.toHaveProperty('id');
      expect((rows[0]!.comments as unknown[]).length).toBe(1);
    });
  });
}
