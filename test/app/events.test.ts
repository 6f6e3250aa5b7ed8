/**
 * Events through HTTP (docs/events.md): a create delivers the entity event (`tasks.created`, from
 * `registerDbEventDispatcher`) and the service's `postCreate` domain event (`tasks.created`) to the
 * kernel's dispatcher, only after the commit; a failed create delivers nothing.
 *
 * `buildApp` does not expose its kernel, so the suite helper captures it from `Kernel.prototype.setup`.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { container, type DomainEvent, type Row, type UnitOfWork } from '@core/runtime';
import type { Task } from '../../fixtures/apps/tasks/src/apps/tasks/models.js';
import { TaskService } from '../../fixtures/apps/tasks/src/apps/tasks/services.js';
import { describeFixtureApp } from './helpers.js';

/** The fixture's service with a `postCreate` that raises its event and then fails (e.g. an audit log is down). */
class FailingTaskService extends TaskService {
  protected override postCreate(task: Row<Task>, uow: UnitOfWork): void {
    super.postCreate(task, uow);
    throw new Error('audit log unavailable');
  }
}

interface Delivered {
  event: DomainEvent;
  /** Whether the row was readable when the handler ran (null for events of a row that is gone). */
  visible: boolean | null;
}

describeFixtureApp('events through HTTP', (ctx) => {
  /** SQL statements and deliveries, in the order they happened. */
  let timeline: string[];
  let delivered: Delivered[];
  const stops: (() => void)[] = [];

  beforeEach(() => {
    timeline = [];
    delivered = [];
    stops.push(
      ctx.db.onQuery((q) => timeline.push(`sql:${q.sql.trim().split(/\s+/)[0]!.replace(/;$/, '').toLowerCase()}`)),
    );
    stops.push(
      ctx.kernel.dispatcher.subscribe('*', async (event) => {
        timeline.push(`event:${event.name}`);
        const id =
          (event.payload as { id?: unknown; primaryKey?: unknown }).id ??
          (event.payload as { primaryKey?: unknown }).primaryKey;
        let visible: boolean | null = null;
        if (typeof id === 'string' && !event.name.endsWith('.deleted')) {
          const rows = await ctx.db.select('select id from tasks where id = ?', [id]);
          visible = rows.length === 1;
        }
        delivered.push({ event, visible });
      }),
    );
  });

  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
    container.scoped(TaskService);
  });

  /** Index of the last COMMIT before the first delivery, or -1. */
  const commitBeforeFirstEvent = (): number => {
    const first = timeline.findIndex((entry) => entry.startsWith('event:'));
    return first < 0 ? -1 : timeline.slice(0, first).lastIndexOf('sql:commit');
  };

  it('a create delivers the entity event, then the postCreate domain event, after the commit', async () => {
    const res = await ctx.request('admin', {
      method: 'POST',
      url: '/tasks/',
      payload: { title: 'evented', assignee_email: 'e@example.com' },
    });
    expect(res.statusCode).toBe(201);
    const { id } = res.json().data;

    expect(delivered.map((d) => d.event)).toEqual([
      {
        name: 'tasks.created',
        payload: {
          change: 'created',
          entity: 'Task',
          table: 'tasks',
          primaryKey: id,
          changedFields: expect.arrayContaining(['id', 'title', 'priority', 'assignee_email']),
        },
      },
      { name: 'tasks.created', payload: { id, title: 'evented' } },
    ]);
    // Committed data: readable from the handler, and the COMMIT went out before the first delivery.
    expect(delivered.map((d) => d.visible)).toEqual([true, true]);
    expect(timeline.indexOf('sql:insert')).toBeGreaterThanOrEqual(0);
    expect(commitBeforeFirstEvent()).toBeGreaterThan(timeline.indexOf('sql:insert'));
  });

  it('a create failing validation delivers nothing and sends no SQL', async () => {
    const res = await ctx.request('admin', { method: 'POST', url: '/tasks/', payload: { title: 42 } });
    expect(res.statusCode).toBe(422);
    expect(delivered).toEqual([]);
    expect(timeline).toEqual([]);
  });

  it('a create whose postCreate hook throws is rolled back and delivers nothing (not even the raised event)', async () => {
    container.scoped(TaskService, { useClass: FailingTaskService });
    const res = await ctx.request('admin', { method: 'POST', url: '/tasks/', payload: { title: 'doomed' } });
    expect(res.statusCode).toBe(500);
    expect(res.json().error.code).toBe('INTERNAL_ERROR');
    expect(delivered).toEqual([]);
    expect(timeline).toContain('sql:insert');
    expect(timeline).toContain('sql:rollback');
    expect(timeline).not.toContain('sql:commit');
    expect(await ctx.countTasks()).toBe(0);
  });

  it('a forbidden create delivers nothing', async () => {
    const res = await ctx.request('viewer', { method: 'POST', url: '/tasks/', payload: { title: 'nope' } });
    expect(res.statusCode).toBe(403);
    expect(delivered).toEqual([]);
  });

  it('PATCH and DELETE deliver tasks.updated (the changed fields) and tasks.deleted after their commits', async () => {
    const task = await ctx.createTask({ title: 'lifecycle' });
    delivered.length = 0;
    timeline.length = 0;

    await ctx.request('admin', { method: 'PATCH', url: `/tasks/${task.id}`, payload: { priority: 'high' } });
    expect(delivered.map((d) => d.event)).toEqual([
      {
        name: 'tasks.updated',
        payload: {
          change: 'updated',
          entity: 'Task',
          table: 'tasks',
          primaryKey: task.id,
          changedFields: ['priority'],
        },
      },
    ]);
    expect(commitBeforeFirstEvent()).toBeGreaterThan(timeline.indexOf('sql:update'));

    delivered.length = 0;
    timeline.length = 0;
    await ctx.request('admin', { method: 'DELETE', url: `/tasks/${task.id}` });
    expect(delivered.map((d) => d.event)).toEqual([
      {
        name: 'tasks.deleted',
        payload: { change: 'deleted', entity: 'Task', table: 'tasks', primaryKey: task.id, changedFields: [] },
      },
    ]);
    expect(commitBeforeFirstEvent()).toBeGreaterThan(timeline.indexOf('sql:delete'));
  });

  it('a PATCH that changes nothing writes nothing and delivers nothing', async () => {
    const task = await ctx.createTask({ title: 'steady', priority: 'low' });
    delivered.length = 0;
    const res = await ctx.request('admin', { method: 'PATCH', url: `/tasks/${task.id}`, payload: { priority: 'low' } });
    expect(res.statusCode).toBe(200);
    expect(delivered).toEqual([]);
  });
});
