import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  BaseRepository,
  Dispatcher,
  UnitOfWork,
  domainEvent,
  registerDbEventDispatcher,
  type DomainEvent,
  type EntityEventPayload,
} from '@core/runtime';
import { fixtureEntities, Label, Project, Task } from '../../fixtures/models/index.js';
import { describeEachDatabase } from '../helpers/databases.js';

describeEachDatabase('registerDbEventDispatcher', { entities: fixtureEntities }, (suite) => {
  let dispatcher: Dispatcher;
  let events: DomainEvent[];
  let unregister: () => void;

  beforeEach(() => {
    dispatcher = new Dispatcher();
    events = [];
    dispatcher.subscribe('*', (e) => void events.push(e));
    unregister = registerDbEventDispatcher(dispatcher, suite.db);
  });
  afterEach(() => unregister());

  const payloads = () => events.map((e) => ({ name: e.name, ...(e.payload as EntityEventPayload) }));

  it('reports created, updated (changed fields only) and deleted entities with table, class and key', async () => {
    const [label] = await UnitOfWork.run(
      async (uow) => {
        const created = [uow.em.create(Label, { name: `l-${randomUUID()}` } as never)];
        await uow.em.flush();
        return created;
      },
      { db: suite.db },
    );
    events.length = 0;

    const id = await UnitOfWork.run(
      async (uow) => {
        const task = uow.em.create(Task, { title: 'entity events', labels: [label!.id] } as never);
        await uow.em.flush();
        return task.id;
      },
      { db: suite.db },
    );
    await UnitOfWork.run(
      async (uow) => {
        const task = await uow.em.findOneOrFail(Task, id, { populate: ['labels'] as never });
        uow.em.assign(task, { title: 'renamed', points: 3, labels: [] } as never);
      },
      { db: suite.db },
    );
    await UnitOfWork.run(
      async (uow) => {
        uow.em.remove(await uow.em.findOneOrFail(Task, id));
      },
      { db: suite.db },
    );

    expect(payloads()).toEqual([
      {
        name: 'tasks.created',
        change: 'created',
        entity: 'Task',
        table: 'tasks',
        primaryKey: id,
        changedFields: expect.arrayContaining(['id', 'title', 'created_at', 'label_ids']),
      },
      {
        name: 'tasks.updated',
        change: 'updated',
        entity: 'Task',
        table: 'tasks',
        primaryKey: id,
        changedFields: ['title', 'points', 'label_ids'],
      },
      { name: 'tasks.deleted', change: 'deleted', entity: 'Task', table: 'tasks', primaryKey: id, changedFields: [] },
    ]);
    expect(payloads()[0]!.changedFields).not.toContain('description');
  });

  it('names changed fields as the HTTP API does: <relation>_id, <singular>_ids or the repository’s relationKeys', async () => {
    const project = await UnitOfWork.run(
      async (uow) => {
        const created = uow.em.create(Project, { name: `p-${randomUUID()}` } as never);
        const label = uow.em.create(Label, { name: `l-${randomUUID()}` } as never);
        await uow.em.flush();
        return { id: created.id, label: label.id };
      },
      { db: suite.db },
    );
    const changed = () => payloads().map((p) => p.changedFields);

    events.length = 0;
    const id = await UnitOfWork.run(
      async (uow) => {
        const task = uow.em.create(Task, {
          title: 'wire names',
          project: project.id,
          labels: [project.label],
        } as never);
        await uow.em.flush();
        return task.id;
      },
      { db: suite.db },
    );
    expect(changed()[0]).toEqual(expect.arrayContaining(['title', 'project_id', 'label_ids']));
    expect(changed()[0]).not.toContain('project');
    expect(changed()[0]).not.toContain('labels');

    // A repository with its own many-to-many key (the manifest's ids_field) names the relation that way.
    class TaggedTasks extends BaseRepository<Task> {
      protected override readonly relationKeys = { labels: 'tag_ids' };
    }
    await new TaggedTasks(Task, suite.db).update(id, { tag_ids: [], project_id: null });
    expect(changed()[1]).toEqual(['project_id', 'tag_ids']);
  });

  it('reports nothing for a transaction that rolls back after a flush (afterFlush has fired)', async () => {
    const flushed: string[] = [];
    suite.db.orm.em.getEventManager().registerSubscriber({ afterFlush: () => void flushed.push('afterFlush') });
    const run = UnitOfWork.run(
      async (uow) => {
        uow.em.create(Task, { title: 'rolled back' } as never);
        await uow.em.flush();
        throw new Error('after flush');
      },
      { db: suite.db },
    );
    await expect(run).rejects.toThrow('after flush');
    expect(flushed.length).toBeGreaterThan(0);
    // A later, successful transaction does not pick up the rolled-back changes either.
    await UnitOfWork.run((uow) => void uow.em.create(Task, { title: 'committed' } as never), { db: suite.db });
    expect(payloads().map((p) => p.name)).toEqual(['tasks.created']);
  });

  it('reports a plain em.flush() after its commit and nothing when it fails', async () => {
    const name = `p-${randomUUID()}`;
    const visible: number[] = [];
    dispatcher.subscribe('projects.created', async () => {
      const rows = await suite.db.select<{ n: number | string }>('select count(*) as n from projects where name = ?', [
        name,
      ]);
      visible.push(Number(rows[0]!.n));
    });
    const em = suite.db.orm.em.fork();
    em.create(Project, { name } as never);
    await em.flush();
    expect(visible).toEqual([1]);

    const failing = suite.db.orm.em.fork();
    failing.create(Project, { name } as never);
    await expect(failing.flush()).rejects.toThrow(/unique|duplicate/i);
    expect(payloads().map((p) => p.name)).toEqual(['projects.created']);
    // The same EntityManager flushes again, successfully: only the new entity is reported.
    const next = failing.create(Project, { name: `p-${randomUUID()}` } as never);
    await failing.flush();
    expect(payloads().map((p) => [p.name, p.primaryKey])).toEqual([
      ['projects.created', expect.any(String)],
      ['projects.created', next.id],
    ]);
  });

  it('reports the changes of nested em.transactional savepoints after the outer commit, with queries allowed in handlers', async () => {
    const titles = [`outer-${randomUUID()}`, `inner-${randomUUID()}`];
    const seen: number[] = [];
    dispatcher.subscribe('tasks.created', async () => {
      const rows = await suite.db.select<{ n: number | string }>(
        'select count(*) as n from tasks where title in (?, ?)',
        titles,
      );
      seen.push(Number(rows[0]!.n));
    });
    await suite.db.orm.em.fork().transactional(async (em) => {
      em.create(Task, { title: titles[0] } as never);
      await em.flush();
      await em.transactional(async (inner) => void inner.create(Task, { title: titles[1] } as never));
      expect(events).toEqual([]);
    });
    expect(payloads().map((p) => p.name)).toEqual(['tasks.created', 'tasks.created']);
    expect(seen).toEqual([2, 2]);
  });

  it('delivers entity events before the domain events of the same unit', async () => {
    await UnitOfWork.run(
      async (uow) => {
        uow.raise(domainEvent('tasks.noted', {}));
        uow.em.create(Task, { title: 'ordered' } as never);
      },
      { db: suite.db },
    );
    expect(events.map((e) => e.name)).toEqual(['tasks.created', 'tasks.noted']);
  });

  it('stops reporting once unregistered', async () => {
    unregister();
    await UnitOfWork.run((uow) => void uow.em.create(Task, { title: 'unreported' } as never), { db: suite.db });
    expect(events).toEqual([]);
  });
});
