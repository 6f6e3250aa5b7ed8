import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type AppException,
  BaseRepository,
  ConflictError,
  NotFoundError,
  UnitOfWork,
  ValidationError,
  type Database,
} from '@core/runtime';
import { fixtureEntities, Label, Project, Task } from '../../fixtures/models/index.js';
import { countQueries, describeEachDatabase } from '../helpers/databases.js';

type TaskInput = Record<string, unknown>;

/** The rejection of `promise`, which must be an AppException of `type`. */
async function rejection<E extends AppException>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => E,
): Promise<E> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(type);
  return error as E;
}

async function labelIdsOf(db: Database, taskId: string): Promise<string[]> {
  const rows = await db.select<{ label_id: string }>(
    'select label_id from tasks_labels where task_id = ? order by label_id',
    [taskId],
  );
  return rows.map((r) => r.label_id);
}

describe('BaseRepository construction', () => {
  it('accepts ({ model, db }) and (model, db), and resolves the default database lazily', async () => {
    expect(new BaseRepository({ model: Task }).model).toBe(Task);
    const lazy = new BaseRepository(Task); // no database yet: constructing must not need one
    await expect(lazy.get(randomUUID())).rejects.toThrow(/initApp/);
  });
});

describeEachDatabase('BaseRepository', { entities: fixtureEntities }, (suite) => {
  let tasks: BaseRepository<Task, TaskInput, TaskInput>;
  let projects: BaseRepository<Project>;
  let labels: BaseRepository<Label>;

  beforeAll(() => {
    tasks = new BaseRepository<Task, TaskInput, TaskInput>({ model: Task, db: suite.db });
    projects = new BaseRepository(Project, suite.db);
    labels = new BaseRepository({ model: Label, db: suite.db });
  });

  const newProject = () => projects.create({ name: `p-${randomUUID()}` });
  const newLabel = () => labels.create({ name: `l-${randomUUID()}` });

  it('creates a record and returns it exactly as get() returns it', async () => {
    const project = await newProject();
    const created = await tasks.create({
      title: 'Write docs',
      project_id: project.id,
      assignee_email: 'a@example.com',
    });
    const read = await tasks.get(created.id as string);
    expect(created).toEqual(read);
    expect(JSON.stringify(created)).toBe(JSON.stringify(read));
    expect(created).toMatchObject({
      title: 'Write docs',
      priority: 'medium',
      is_completed: false,
      project_id: project.id,
    });
  });

  it('links many-to-many relations from <singular>_ids, checking each relation with one query', async () => {
    const [project, a, b] = [await newProject(), await newLabel(), await newLabel()];
    const { result: task, queries } = await countQueries(suite.db, () =>
      tasks.create({ title: 'linked', project_id: project.id, label_ids: [a.id, b.id, a.id] }),
    );
    expect(await labelIdsOf(suite.db, task.id as string)).toEqual([a.id, b.id].sort());
    const checks = queries.filter(
      (q) => q.source === 'read' && /^select .* from .(projects|labels). where/i.test(q.sql),
    );
    expect(checks).toHaveLength(2);
  });

  it.each([
    ['a to-one relation', { project_id: randomUUID() }, 'project_id'],
    ['a many-to-many relation', { label_ids: [randomUUID()] }, 'label_ids'],
  ])('rejects ids of %s that do not exist with a ValidationError naming the field', async (_label, input, field) => {
    const title = `missing-${randomUUID()}`;
    const error = await rejection(tasks.create({ title, ...input }), ValidationError);
    expect(error.statusCode).toBe(422);
    expect(error.details.map((d) => d.path)).toEqual([field]);
    expect(await suite.db.select('select id from tasks where title = ?', [title])).toEqual([]);
  });

  it.each([
    ['create with a malformed relation id', () => tasks.create({ title: 'x', project_id: 'not-a-uuid' }), 'project_id'],
    ['create with a malformed many-to-many id', () => tasks.create({ title: 'x', label_ids: ['nope'] }), 'label_ids.0'],
    ['update of a malformed id', () => tasks.update('42', { title: 'x' }), 'id'],
    ['delete of a malformed id', () => tasks.delete('not-a-uuid'), 'id'],
    ['create without a required field', () => tasks.create({ description: 'no title' }), 'title'],
    ['create with null for a non-nullable field', () => tasks.create({ title: 'x', priority: null }), 'priority'],
    ['create with an unknown field', () => tasks.create({ title: 'x', colour: 'red' }), 'colour'],
    ['create with a bad date-time', () => tasks.create({ title: 'x', due_at: 'next tuesday' }), 'due_at'],
  ])('rejects %s with a 422 before any SQL', async (_label, call, field) => {
    const { result: error, queries } = await countQueries(suite.db, () => rejection(call(), ValidationError));
    expect(error.details.map((d) => d.path)).toContain(field);
    expect(queries).toEqual([]);
  });

  it.each([
    ['update', () => tasks.update(randomUUID(), { title: 'x' })],
    ['delete', () => tasks.delete(randomUUID())],
  ])('answers %s of a missing id with NotFoundError', async (_label, call) => {
    const error = await rejection(call(), NotFoundError);
    expect(error.statusCode).toBe(404);
  });

  it('returns null from get() for a missing id', async () => {
    expect(await tasks.get(randomUUID())).toBeNull();
  });

  describe('update', () => {
    const stored = async () => {
      const [project, label] = [await newProject(), await newLabel()];
      const task = await tasks.create({
        title: 'original',
        description: 'details',
        priority: 'high',
        is_completed: false,
        assignee_email: 'owner@example.com',
        points: 5,
        project_id: project.id,
        label_ids: [label.id],
      });
      await tasks.update(task.id as string, { is_completed: true });
      return { id: task.id as string, project, label };
    };

    it('patches only the keys present', async () => {
      const { id, project, label } = await stored();
      const row = await tasks.update(id, { title: 'renamed', points: null });
      expect(row).toMatchObject({
        title: 'renamed',
        points: null,
        description: 'details',
        priority: 'high',
        is_completed: true,
        assignee_email: 'owner@example.com',
        project_id: project.id,
      });
      expect(row).toEqual(await tasks.get(id));
      expect(await labelIdsOf(suite.db, id)).toEqual([label.id]);
    });

    it('replaces: absent writable fields return to their defaults', async () => {
      const { id } = await stored();
      const row = await tasks.update(id, { title: 'replaced' }, { replace: true });
      expect(row).toMatchObject({
        title: 'replaced',
        description: null,
        priority: 'medium',
        is_completed: false,
        assignee_email: null,
        points: null,
        project_id: null,
      });
      expect(row).toEqual(await tasks.get(id));
      expect(await labelIdsOf(suite.db, id)).toEqual([]);
    });

    it('replaces but keeps the fields in options.keep (restriction entries or bare names)', async () => {
      const { id, project, label } = await stored();
      const row = await tasks.update(
        id,
        { title: 'replaced', assignee_email: 'attacker@example.com' },
        { replace: true, keep: ['tasks.assignee_email', 'project_id', 'labels'] },
      );
      expect(row).toMatchObject({
        title: 'replaced',
        priority: 'medium',
        assignee_email: 'owner@example.com',
        project_id: project.id,
      });
      expect(await labelIdsOf(suite.db, id)).toEqual([label.id]);
    });

    it('requires fields without a default in a replace', async () => {
      const { id } = await stored();
      const error = await rejection(tasks.update(id, { description: 'no title' }, { replace: true }), ValidationError);
      expect(error.details.map((d) => d.path)).toEqual(['title']);
    });

    it('replaces many-to-many links with the ids given', async () => {
      const { id } = await stored();
      const [b, c] = [await newLabel(), await newLabel()];
      await tasks.update(id, { label_ids: [b.id, c.id] });
      expect(await labelIdsOf(suite.db, id)).toEqual([b.id, c.id].sort());
      await tasks.update(id, { label_ids: [] });
      expect(await labelIdsOf(suite.db, id)).toEqual([]);
    });
  });

  it('deletes a record and its links', async () => {
    const label = await newLabel();
    const task = await tasks.create({ title: 'to delete', label_ids: [label.id] });
    await tasks.delete(task.id as string);
    expect(await tasks.get(task.id as string)).toBeNull();
    expect(await labelIdsOf(suite.db, task.id as string)).toEqual([]);
    await rejection(tasks.delete(task.id as string), NotFoundError);
  });

  it('turns a unique violation into a 409 that names the table and field but never the value', async () => {
    const secret = `secret-${randomUUID()}`;
    await projects.create({ name: secret });
    for (const call of [
      () => projects.create({ name: secret }),
      async () => projects.update((await newProject()).id as string, { name: secret }),
    ]) {
      const error = await rejection(call(), ConflictError);
      expect(error.statusCode).toBe(409);
      expect(error.message).toMatch(/projects/);
      expect(error.details.map((d) => d.path)).toEqual(['name']);
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain(secret);
    }
  });

  it('turns a foreign-key violation met by a subclass write into a 409 naming the table', async () => {
    // The existence check makes this rare through create/update (a concurrent delete); a subclass that
    // writes through uow.em and flushes with this.flush() gets the same mapping.
    class RawTasks extends BaseRepository<Task, TaskInput, TaskInput> {
      insertUnchecked(values: TaskInput): Promise<void> {
        return UnitOfWork.run(
          async (uow) => {
            uow.em.create(Task, values as never);
            await this.flush(uow);
          },
          { db: this.db },
        );
      }
    }
    const missingProject = randomUUID();
    const error = await rejection(
      new RawTasks(Task, suite.db).insertUnchecked({ title: 'orphan', project: missingProject }),
      ConflictError,
    );
    expect(error.message).toMatch(/tasks/);
    expect(error.details[0]!.reason).toBe('foreign_key');
    if (suite.name === 'postgresql') expect(error.details.map((d) => d.path)).toEqual(['project_id']);
    expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain(missingProject);
  });

  it('runs in the active unit of work, so a rollback undoes its writes', async () => {
    const title = `in-unit-${randomUUID()}`;
    let createdId: unknown;
    await expect(
      UnitOfWork.run(
        async () => {
          const row = await tasks.create({ title });
          createdId = row.id;
          expect(await tasks.get(row.id as string)).toEqual(row); // visible inside the transaction
          throw new Error('abort');
        },
        { db: suite.db },
      ),
    ).rejects.toThrow('abort');
    expect(await tasks.get(createdId as string)).toBeNull();
  });

  it('accepts a custom many-to-many key through relationKeys', async () => {
    class TaggedTasks extends BaseRepository<Task, TaskInput, TaskInput> {
      protected override readonly relationKeys = { labels: 'tag_ids' };
    }
    const repo = new TaggedTasks(Task, suite.db);
    const label = await newLabel();
    const task = await repo.create({ title: 'tagged', tag_ids: [label.id] });
    expect(await labelIdsOf(suite.db, task.id as string)).toEqual([label.id]);
    await rejection(repo.create({ title: 'tagged', label_ids: [label.id] }), ValidationError);
  });
});
