import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  Dispatcher,
  UnitOfWork,
  domainEvent,
  registerDbEventDispatcher,
  type Database,
  type DomainEvent,
  type Logger,
} from '@core/runtime';
import { fixtureEntities, Project, Task } from '../../fixtures/models/index.js';
import { describeEachDatabase } from '../helpers/databases.js';

/** A logger that keeps what was logged at error level. */
function recordingLogger(): Logger & { errors: { obj: unknown; msg?: string }[] } {
  const errors: { obj: unknown; msg?: string }[] = [];
  return { errors, debug() {}, info() {}, warn() {}, error: (obj, msg) => errors.push({ obj, msg }) };
}

async function countTasks(db: Database, title: string): Promise<number> {
  const rows = await db.select<{ n: number | string }>('select count(*) as n from tasks where title = ?', [title]);
  return Number(rows[0]!.n);
}

describe('UnitOfWork outside a unit', () => {
  it('has no current unit', () => {
    expect(UnitOfWork.current()).toBeUndefined();
  });
});

describeEachDatabase('UnitOfWork', { entities: fixtureEntities }, (suite) => {
  it('commits the work and dispatches domain events only after the commit', async () => {
    const title = `t-${randomUUID()}`;
    const dispatcher = new Dispatcher();
    const seen: { event: string; visibleRows: number }[] = [];
    dispatcher.subscribe('tasks.noted', async (event) => {
      // Read outside the unit: the row is visible only if the transaction has committed.
      seen.push({ event: event.name, visibleRows: await countTasks(suite.db, title) });
    });

    const id = await UnitOfWork.run(
      async (uow) => {
        const task = uow.em.create(Task, { title } as never);
        await uow.em.flush();
        uow.raise(domainEvent('tasks.noted', { id: task.id }));
        expect(seen).toEqual([]); // queued, not dispatched
        return task.id;
      },
      { db: suite.db, dispatcher },
    );

    expect(seen).toEqual([{ event: 'tasks.noted', visibleRows: 1 }]);
    expect(await countTasks(suite.db, title)).toBe(1);
    expect(typeof id).toBe('string');
  });

  it.each([
    ['the function throws after a flush', 'throw'],
    ['the commit fails (unique violation at the final flush)', 'commit'],
  ] as const)('rolls back and dispatches nothing when %s', async (_label, failure) => {
    const name = `p-${randomUUID()}`;
    await UnitOfWork.run((uow) => uow.em.persistAndFlush(uow.em.create(Project, { name } as never)), { db: suite.db });
    const title = `t-${randomUUID()}`;
    const dispatcher = new Dispatcher();
    const delivered: DomainEvent[] = [];
    dispatcher.subscribe('*', (e) => void delivered.push(e));

    const run = UnitOfWork.run(
      async (uow) => {
        uow.em.create(Task, { title } as never);
        await uow.em.flush();
        uow.raise(domainEvent('tasks.noted', { title }));
        if (failure === 'throw') throw new Error('hook failed');
        uow.em.create(Project, { name } as never); // flushed by the commit: duplicate name
      },
      { db: suite.db, dispatcher },
    );

    await expect(run).rejects.toThrow(failure === 'throw' ? 'hook failed' : /unique|duplicate/i);
    expect(delivered).toEqual([]);
    expect(await countTasks(suite.db, title)).toBe(0);
  });

  it('joins a nested run to the outer unit; the nested events go out after the outer commit, in raise order', async () => {
    const title = `t-${randomUUID()}`;
    const dispatcher = new Dispatcher();
    const delivered: string[] = [];
    dispatcher.subscribe('*', async (e) => {
      delivered.push(`${e.name}:${await countTasks(suite.db, title)}`);
    });

    await UnitOfWork.run(
      async (outer) => {
        outer.raise(domainEvent('outer.first', {}));
        await UnitOfWork.run(
          async (inner) => {
            expect(inner).toBe(outer);
            expect(UnitOfWork.current()).toBe(outer);
            inner.em.create(Task, { title } as never);
            await inner.em.flush();
            inner.raise(domainEvent('inner.raised', {}));
          },
          { db: suite.db },
        );
        expect(delivered).toEqual([]); // the inner run ended, but nothing is committed yet
        outer.raise(domainEvent('outer.last', {}));
      },
      { db: suite.db, dispatcher },
    );

    expect(delivered).toEqual(['outer.first:1', 'inner.raised:1', 'outer.last:1']);
  });

  it('rolls back the whole unit when a nested run failed, even if the outer code caught the error', async () => {
    const title = `t-${randomUUID()}`;
    const dispatcher = new Dispatcher();
    const delivered: DomainEvent[] = [];
    dispatcher.subscribe('*', (e) => void delivered.push(e));

    const run = UnitOfWork.run(
      async (outer) => {
        outer.raise(domainEvent('outer.raised', {}));
        await UnitOfWork.run(
          async (inner) => {
            inner.em.create(Task, { title } as never);
            await inner.em.flush();
            inner.raise(domainEvent('inner.raised', {}));
            throw new Error('nested failure');
          },
          { db: suite.db },
        ).catch(() => undefined);
        return 'outer finished';
      },
      { db: suite.db, dispatcher },
    );

    await expect(run).rejects.toThrow('nested failure');
    expect(delivered).toEqual([]);
    expect(await countTasks(suite.db, title)).toBe(0);
  });

  it('keeps the commit when a handler fails, logs the error and still runs the later handlers', async () => {
    const title = `t-${randomUUID()}`;
    const logger = recordingLogger();
    const dispatcher = new Dispatcher(logger);
    const calls: string[] = [];
    dispatcher.subscribe('tasks.noted', () => {
      calls.push('first');
      throw new Error('subscriber down');
    });
    dispatcher.subscribe('tasks.noted', () => void calls.push('second'));
    dispatcher.subscribe('tasks.other', () => void calls.push('other event'));

    const result = await UnitOfWork.run(
      async (uow) => {
        uow.em.create(Task, { title } as never);
        uow.raise(domainEvent('tasks.noted', {}));
        uow.raise(domainEvent('tasks.other', {}));
        return 'ok';
      },
      { db: suite.db, dispatcher },
    );

    expect(result).toBe('ok');
    expect(await countTasks(suite.db, title)).toBe(1);
    expect(calls).toEqual(['first', 'second', 'other event']);
    expect(logger.errors).toHaveLength(1);
    expect((logger.errors[0]!.obj as { err: Error }).err.message).toBe('subscriber down');
  });

  it('runs handlers outside the finished unit and refuses raise() after the commit', async () => {
    const dispatcher = new Dispatcher();
    let inHandler: UnitOfWork | undefined | 'not called' = 'not called';
    dispatcher.subscribe('noted', () => {
      inHandler = UnitOfWork.current();
    });
    let finished: UnitOfWork | undefined;
    await UnitOfWork.run(
      (uow) => {
        finished = uow;
        uow.raise(domainEvent('noted', {}));
      },
      { db: suite.db, dispatcher },
    );
    expect(inHandler).toBeUndefined();
    expect(UnitOfWork.current()).toBeUndefined();
    expect(() => finished!.raise(domainEvent('late', {}))).toThrow(/after the unit committed/);
  });

  it('keeps concurrent units apart', async () => {
    const titles = [`a-${randomUUID()}`, `b-${randomUUID()}`];
    const units = await Promise.all(
      titles.map((title) =>
        UnitOfWork.run(
          async (uow) => {
            uow.em.create(Task, { title } as never);
            await new Promise((resolve) => setTimeout(resolve, 5));
            await uow.em.flush();
            expect(UnitOfWork.current()).toBe(uow);
            return uow;
          },
          { db: suite.db },
        ),
      ),
    );
    expect(units[0]).not.toBe(units[1]);
    expect(units[0]!.em).not.toBe(units[1]!.em);
    for (const title of titles) expect(await countTasks(suite.db, title)).toBe(1);
  });

  it('uses the dispatcher registered for the database by default, until it is unregistered', async () => {
    const dispatcher = new Dispatcher();
    const delivered: string[] = [];
    dispatcher.subscribe('custom.raised', (e) => void delivered.push(e.name));
    const unregister = registerDbEventDispatcher(dispatcher, suite.db);
    try {
      await UnitOfWork.run((uow) => uow.raise(domainEvent('custom.raised', {})), { db: suite.db });
      expect(delivered).toEqual(['custom.raised']);
    } finally {
      unregister();
    }
    await UnitOfWork.run((uow) => uow.raise(domainEvent('custom.raised', {})), { db: suite.db });
    expect(delivered).toEqual(['custom.raised']);
  });

  /** A created_at value as each database stores it. */
  const now = () => (suite.name === 'sqlite' ? Date.now() : new Date().toISOString());

  it('runs uow.query on the unit’s transaction: visible inside, gone after a rollback', async () => {
    const name = `p-${randomUUID()}`;
    const insert = 'insert into projects (id, name, created_at) values (?, ?, ?)';
    const run = UnitOfWork.run(
      async (uow) => {
        await uow.query(insert, [randomUUID(), name, now()]);
        const inside = await uow.query<{ n: number | string }>('select count(*) as n from projects where name = ?', [
          name,
        ]);
        expect(Number(inside[0]!.n)).toBe(1);
        expect(await suite.db.select('select id from projects where name = ?', [name])).toHaveLength(1); // same transaction
        throw new Error('undo');
      },
      { db: suite.db },
    );
    await expect(run).rejects.toThrow('undo');
    expect(await suite.db.select('select id from projects where name = ?', [name])).toEqual([]);
  });

  it('gives the connection back clean after failed units, so the next ones work', async () => {
    const name = `p-${randomUUID()}`;
    await UnitOfWork.run((uow) => void uow.em.create(Project, { name } as never), { db: suite.db });
    for (let i = 0; i < 5; i++) {
      // A failing statement aborts a PostgreSQL transaction; the unit must still roll back and release it.
      const failing = UnitOfWork.run(
        (uow) => uow.query('insert into projects (id, name, created_at) values (?, ?, ?)', [randomUUID(), name, now()]),
        { db: suite.db },
      );
      await expect(failing).rejects.toThrow(/unique|duplicate/i);
      const title = `t-${randomUUID()}`;
      await UnitOfWork.run((uow) => void uow.em.create(Task, { title } as never), { db: suite.db });
      expect(await countTasks(suite.db, title)).toBe(1);
    }
  });

  it('joins the unit from inside uow.em.transactional() (a savepoint of its transaction)', async () => {
    const title = `t-${randomUUID()}`;
    const dispatcher = new Dispatcher();
    const delivered: string[] = [];
    dispatcher.subscribe('*', (e) => void delivered.push(e.name));
    await UnitOfWork.run(
      async (outer) => {
        await outer.em.transactional(async (em) => {
          em.create(Task, { title } as never);
          await UnitOfWork.run(
            (inner) => {
              expect(inner).toBe(outer);
              inner.raise(domainEvent('inner.raised', {}));
            },
            { db: suite.db },
          );
        });
        expect(await countTasks(suite.db, title)).toBe(1); // flushed by the savepoint, seen in the transaction
      },
      { db: suite.db, dispatcher },
    );
    expect(delivered).toEqual(['inner.raised']);
    expect(await countTasks(suite.db, title)).toBe(1);
  });

  it('makes orm.em inside the unit its EntityManager: its changes are flushed and committed with the unit', async () => {
    const title = `t-${randomUUID()}`;
    await UnitOfWork.run(
      (uow) => {
        const em = suite.db.orm.em.getContext();
        expect(em).toBe(uow.em);
        em.create(Task, { title } as never);
      },
      { db: suite.db },
    );
    expect(await countTasks(suite.db, title)).toBe(1);
  });

  it('refuses uow.em.commit() and rollback(): the unit ends its own transaction', async () => {
    const title = `t-${randomUUID()}`;
    const run = UnitOfWork.run(
      async (uow) => {
        uow.em.create(Task, { title } as never);
        await uow.em.commit();
      },
      { db: suite.db },
    );
    await expect(run).rejects.toThrow(/commits or rolls back itself/);
    expect(await countTasks(suite.db, title)).toBe(0);
  });
});
