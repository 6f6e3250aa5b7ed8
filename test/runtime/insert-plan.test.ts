/**
 * The repositories' compiled create (`InsertPlan`): one prepared `INSERT … RETURNING` in the unit of
 * work instead of MikroORM's flush and a read-back. Checked against the ORM path it replaces: the
 * same stored values, the same returned row, the same entity event; and the unit of work around it
 * keeps its semantics when hooks use `uow.em` on the same transaction.
 */
import { randomUUID } from 'node:crypto';
import { p } from '@mikro-orm/core';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  Base,
  BaseRepository,
  BaseService,
  ConflictError,
  Dispatcher,
  UnitOfWork,
  defineModel,
  domainEvent,
  registerDbEventDispatcher,
  runWithContext,
  type Database,
  type DomainEvent,
  type EntityEventPayload,
  type Row,
} from '@core/runtime';
import { setOutbox } from '../../runtime/src/uow/registry.js';
import { Comment, fixtureEntities, Label, Project, Task } from '../../fixtures/models/index.js';
import { countQueries, describeEachDatabase } from '../helpers/databases.js';

/** A model with a database-generated integer key, to check keys the insert does not know in advance. */
class Counter extends Base {
  static override readonly tableName = 'counters';
  declare id: number;
  declare label: string;
  declare enabled: boolean;
}
const CounterSchema = defineModel(Counter, {
  id: p.integer().primary().autoincrement(),
  label: p.string().length(60),
  enabled: p.boolean().default(true),
});

/** A model with a version column, which every write checks and increments. */
class Ledger extends Base {
  static override readonly tableName = 'ledgers';
  declare id: number;
  declare name: string;
  declare version: number;
}
const LedgerSchema = defineModel(
  Ledger,
  { id: p.integer().primary().autoincrement(), name: p.string().length(60), version: p.integer().default(1) },
  { version: 'version' },
);

type Input = Record<string, unknown>;

/** A service that declares its create one row with nothing after it: the INSERT may go alone. */
class SingleStatementService<M extends Base> extends BaseService<M, Input, Input> {
  protected override readonly createInTransaction: boolean = false;
}

/** A repository that overrides `flush`, which keeps every create on MikroORM's path: the reference. */
class OrmPathRepository<M extends Base> extends BaseRepository<M, Input, Input> {
  protected override flush(uow: UnitOfWork): Promise<void> {
    return super.flush(uow);
  }
}

async function storedRow(db: Database, table: string, id: unknown): Promise<Record<string, unknown>> {
  const rows = await db.select<Record<string, unknown>>(`select * from ${db.quote(table)} where id = ?`, [id]);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

function without<T extends Record<string, unknown>>(row: T, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([k]) => !keys.includes(k)));
}

const isInsert = (sql: string) => /^insert into/i.test(sql);

describeEachDatabase('compiled create', { entities: [...fixtureEntities, CounterSchema, LedgerSchema] }, (suite) => {
  let tasks: BaseRepository<Task, Input, Input>;
  let ormTasks: OrmPathRepository<Task>;
  let projects: BaseRepository<Project, Input, Input>;
  let events: DomainEvent[];
  let unregister: () => void;

  beforeAll(() => {
    tasks = new BaseRepository<Task, Input, Input>(Task, suite.db);
    ormTasks = new OrmPathRepository<Task>(Task, suite.db);
    projects = new BaseRepository<Project, Input, Input>(Project, suite.db);
  });
  beforeEach(() => {
    events = [];
    const dispatcher = new Dispatcher();
    dispatcher.subscribe('*', (e) => void events.push(e));
    unregister = registerDbEventDispatcher(dispatcher, suite.db);
  });
  afterEach(() => unregister());

  const payloads = () => events.map((e) => ({ name: e.name, ...(e.payload as EntityEventPayload) }));

  it('sends one INSERT … RETURNING and no read-back, and returns the row exactly as get() does', async () => {
    const project = await projects.create({ name: `p-${randomUUID()}` });
    const { result: row, queries } = await countQueries(suite.db, () =>
      tasks.create({
        title: 'compiled',
        project_id: project.id,
        is_completed: true,
        due_at: '2024-02-03T04:05:06.789Z',
      }),
    );
    // The related id is checked first (a read in the transaction), then the row is written and returned.
    expect(queries.map((q) => [q.source, q.sql])).toEqual([
      ['read', expect.stringMatching(/^select .* from .projects. where/)],
      ['orm', expect.stringMatching(/^insert into .tasks. \(.*\) values \(.*\) returning /)],
    ]);
    const read = await tasks.get(row.id as string);
    expect(JSON.stringify(row)).toBe(JSON.stringify(read));
    expect(row).toMatchObject({ title: 'compiled', priority: 'medium', is_completed: true, project_id: project.id });
    expect(row.due_at).toEqual(new Date('2024-02-03T04:05:06.789Z'));
  });

  it.each([
    [
      'every column given',
      {
        description: null,
        priority: 'high',
        is_completed: true,
        assignee_email: 'a@example.com',
        points: 5,
        due_on: '2024-02-03',
        due_at: '2024-02-03T04:05:06.789Z',
      },
    ],
    ['only the required ones (database defaults)', {}],
    ['false and zero', { is_completed: false, points: 0 }],
  ])('stores, returns and reports the same as the ORM path with %s', async (_label, extra) => {
    const project = await projects.create({ name: `p-${randomUUID()}` });
    const input = { title: `same-${randomUUID()}`, project_id: project.id, ...extra };
    events.length = 0;
    const compiled = await tasks.create(input);
    const viaOrm = await ormTasks.create(input);
    const volatile = ['id', 'created_at'];
    expect(without(compiled, ...volatile)).toEqual(without(viaOrm, ...volatile));
    expect(Object.keys(compiled)).toEqual(Object.keys(viaOrm));
    expect(without(await storedRow(suite.db, 'tasks', compiled.id), ...volatile)).toEqual(
      without(await storedRow(suite.db, 'tasks', viaOrm.id), ...volatile),
    );
    const [fromCompiled, fromOrm] = payloads();
    expect(fromCompiled).toMatchObject({
      name: 'tasks.created',
      change: 'created',
      entity: 'Task',
      table: 'tasks',
      primaryKey: compiled.id,
    });
    expect(fromOrm).toMatchObject({ name: 'tasks.created', primaryKey: viaOrm.id });
    expect([...fromCompiled!.changedFields].sort()).toEqual([...fromOrm!.changedFields].sort());
    expect(fromCompiled!.changedFields).toContain('project_id');
  });

  it('reads a database-generated key back and reports it in the event', async () => {
    const counters = new BaseRepository<Counter, Input, Input>(Counter, suite.db);
    const first = await counters.create({ label: 'one' });
    const second = await counters.create({ label: 'two', enabled: false });
    expect(typeof first.id).toBe('number');
    expect(second.id).toBe((first.id as number) + 1);
    expect(second).toEqual({ id: second.id, label: 'two', enabled: false });
    expect(first.enabled).toBe(true);
    expect(payloads().map((p) => [p.name, p.primaryKey, p.changedFields])).toEqual([
      ['counters.created', first.id, ['label']],
      ['counters.created', second.id, ['label', 'enabled']],
    ]);
  });

  it('goes through MikroORM when many-to-many links are given, and still returns the row as get() does', async () => {
    const labels = new BaseRepository<Label, Input, Input>(Label, suite.db);
    const label = await labels.create({ name: `l-${randomUUID()}` });
    const { result: row, queries } = await countQueries(suite.db, () =>
      tasks.create({ title: 'linked', label_ids: [label.id] }),
    );
    expect(queries.filter((q) => isInsert(q.sql))).toHaveLength(2); // the task and its link
    expect(queries.filter((q) => q.source === 'read' && /from .tasks./.test(q.sql))).toHaveLength(1); // the read-back
    expect(row).toEqual(await tasks.get(row.id as string));
    expect(payloads().at(-1)).toMatchObject({
      name: 'tasks.created',
      changedFields: expect.arrayContaining(['title', 'label_ids']),
    });
  });

  it('maps a unique violation of the compiled insert to a 409 naming table and field, never the value', async () => {
    const secret = `secret-${randomUUID()}`;
    await projects.create({ name: secret });
    const { queries, result: error } = await countQueries(suite.db, () =>
      projects.create({ name: secret }).then(
        () => undefined,
        (err: unknown) => err,
      ),
    );
    expect(queries.map((q) => q.sql)).toEqual([expect.stringMatching(/^insert into .projects. .* returning /)]);
    expect(error).toBeInstanceOf(ConflictError);
    const conflict = error as ConflictError;
    expect(conflict.details.map((d) => d.path)).toEqual(['name']);
    expect(conflict.message).toMatch(/projects/);
    expect(JSON.stringify({ message: conflict.message, details: conflict.details })).not.toContain(secret);
    expect(payloads().map((p) => p.name)).toEqual(['projects.created']); // the first one only
  });

  it('returns the row without the fields restricted for the caller, as get() does for that caller', async () => {
    const ctx = {
      sub: 'u1',
      roles: ['viewer'],
      permissions: new Set(['*']),
      restrictedFields: new Set(['tasks.assignee_email', 'tasks.project']),
    };
    const project = await projects.create({ name: `p-${randomUUID()}` });
    const [row, read] = await runWithContext(ctx, async () => {
      const created = await tasks.create({
        title: 'restricted',
        assignee_email: 'hidden@example.com',
        project_id: project.id,
      });
      return [created, await tasks.get(created.id as string)] as const;
    });
    expect(row).not.toHaveProperty('assignee_email');
    expect(row).not.toHaveProperty('project_id');
    expect(JSON.stringify(row)).toBe(JSON.stringify(read));
    expect((await tasks.get(row.id as string))!.assignee_email).toBe('hidden@example.com');
  });

  describe('in a service, with hooks that use the unit', () => {
    class CommentingService extends BaseService<Task, Input, Input> {
      failAfter = false;
      protected override async postCreate(row: Row<Task>, uow: UnitOfWork): Promise<void> {
        // The ORM on the same transaction as the compiled insert: sees the row, writes next to it.
        const task = await uow.em.findOneOrFail(Task, row.id as string);
        uow.em.create(Comment, { body: `about ${task.title}`, task: task.id } as never);
        await uow.em.flush();
        await uow.em.transactional(
          async (em) => void em.create(Comment, { body: 'in a savepoint', task: task.id } as never),
        );
        uow.raise(domainEvent('tasks.commented', { id: row.id }));
        if (this.failAfter) throw new Error('postCreate failed');
      }
    }
    const comments = async (taskId: unknown) =>
      (
        await suite.db.select<{ body: string }>('select body from comments where task_id = ? order by body', [taskId])
      ).map((r) => r.body);

    it('commits the insert and the hook’s ORM writes together; events follow in write order', async () => {
      const service = new CommentingService(Task, tasks);
      const row = await service.create({ title: 'hooked' });
      expect(await comments(row.id)).toEqual(['about hooked', 'in a savepoint']);
      expect(events.map((e) => e.name)).toEqual([
        'tasks.created',
        'comments.created',
        'comments.created',
        'tasks.commented',
      ]);
      expect(payloads()[1]!.changedFields).toEqual(expect.arrayContaining(['body', 'task_id']));
    });

    it('rolls both back, with no event, when the hook fails after writing', async () => {
      const service = new CommentingService(Task, tasks);
      service.failAfter = true;
      const title = `failing-${randomUUID()}`;
      await expect(service.create({ title })).rejects.toThrow('postCreate failed');
      expect(await suite.db.select('select id from tasks where title = ?', [title])).toEqual([]);
      expect(
        await suite.db.select('select c.id from comments c join tasks t on t.id = c.task_id where t.title = ?', [
          title,
        ]),
      ).toEqual([]);
      expect(events).toEqual([]);
    });
  });

  describe('when the insert is all its unit does', () => {
    /** Every statement `fn` sends, BEGIN and COMMIT included. */
    async function allStatements<T>(fn: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
      const sent: string[] = [];
      const off = suite.db.onQuery((q) => void sent.push(q.sql));
      try {
        return { result: await fn(), sent };
      } finally {
        off();
      }
    }
    const insertOnly = [expect.stringMatching(/^insert into .tasks. .* returning /)];
    const inTransaction = (...statements: unknown[]) => [
      expect.stringMatching(/^begin/i),
      ...statements,
      expect.stringMatching(/^commit/i),
    ];

    it('sends the INSERT alone, without BEGIN and COMMIT, from a repository or a service that declares it; the event sees the committed row', async () => {
      const seen: unknown[] = [];
      const dispatcher = new Dispatcher();
      // Another connection (SQLite's reader, a pooled one on PostgreSQL): it sees committed rows only.
      dispatcher.subscribe('tasks.created', async (e) => {
        const id = (e.payload as EntityEventPayload).primaryKey;
        seen.push((await suite.db.select<{ title: string }>('select title from tasks where id = ?', [id]))[0]?.title);
      });
      const off = registerDbEventDispatcher(dispatcher, suite.db);
      try {
        const direct = await allStatements(() => tasks.create({ title: 'alone, repository' }));
        const viaService = await allStatements(() =>
          new SingleStatementService(Task, tasks).create({ title: 'alone, service' }),
        );
        // The event handler's read comes after the insert, once it has committed.
        const read = expect.stringMatching(/^select title from tasks/);
        expect(direct.sent).toEqual([...insertOnly, read]);
        expect(viaService.sent).toEqual([...insertOnly, read]);
        expect(await tasks.get(viaService.result.id as string)).toEqual(viaService.result);
      } finally {
        off();
      }
      expect(seen).toEqual(['alone, repository', 'alone, service']);
    });

    it('sends it alone from a service that declares it and whose preCreate only changes the input', async () => {
      class PreHooked extends SingleStatementService<Task> {
        protected override preCreate(input: Input): Input {
          return { ...input, description: 'from preCreate' };
        }
      }
      const hooked = await allStatements(() => new PreHooked(Task, tasks).create({ title: 'pre-hooked' }));
      expect(hooked.sent).toEqual(insertOnly);
      expect(hooked.result.description).toBe('from preCreate');
    });

    it('keeps BEGIN and COMMIT, whatever the service declares, when anything else runs in the unit: a related-record check, a write in preCreate, an outer unit', async () => {
      const project = await projects.create({ name: `p-${randomUUID()}` });
      const declared = new SingleStatementService(Task, tasks);
      // The check reads in the transaction (it is reported before the BEGIN its connection sends).
      const checkThenInsert = [expect.stringMatching(/^select .* from .projects./), ...inTransaction(...insertOnly)];
      const related = await allStatements(() => tasks.create({ title: 'related', project_id: project.id }));
      expect(related.sent).toEqual(checkThenInsert);
      const relatedViaService = await allStatements(() =>
        declared.create({ title: 'related, service', project_id: project.id }),
      );
      expect(relatedViaService.sent).toEqual(checkThenInsert);

      // A preCreate that writes another row: both in one transaction, rolled back together.
      const projectName = `from-preCreate-${randomUUID()}`;
      class PreWriting extends SingleStatementService<Task> {
        protected override async preCreate(input: Input): Promise<Input> {
          await projects.create({ name: projectName });
          return { ...input, project_id: randomUUID() }; // no such project: the create fails
        }
      }
      await expect(new PreWriting(Task, tasks).create({ title: 'pre-writing' })).rejects.toThrow();
      expect(await suite.db.select('select id from projects where name = ?', [projectName])).toEqual([]);

      // Joined to an outer unit that fails afterwards: rolled back with it.
      const title = `outer-${randomUUID()}`;
      const outer = UnitOfWork.run(
        async () => {
          await declared.create({ title });
          throw new Error('outer failed');
        },
        { db: suite.db },
      );
      await expect(outer).rejects.toThrow('outer failed');
      expect(await suite.db.select('select id from tasks where title = ?', [title])).toEqual([]);
      expect(payloads().filter((p) => p.name === 'tasks.created')).toHaveLength(2); // the two related ones
    });

    it('keeps a repository’s own create, which may write more than one row, in one transaction', async () => {
      class TwoProjects extends BaseRepository<Project, Input, Input> {
        override async create(data: Input): Promise<Row<Project>> {
          await super.create({ name: `${String(data['name'])}-first` });
          return super.create(data);
        }
      }
      const taken = `taken-${randomUUID()}`;
      await projects.create({ name: taken });
      const service = new BaseService(Project, new TwoProjects(Project, suite.db));
      await expect(service.create({ name: taken })).rejects.toBeInstanceOf(ConflictError);
      // The first insert went with the failed second: nothing half-written.
      expect(await suite.db.select('select id from projects where name = ?', [`${taken}-first`])).toEqual([]);
    });

    it('gives the connection back after an insert that fails alone, with no event and nothing written', async () => {
      const taken = `taken-${randomUUID()}`;
      await projects.create({ name: taken });
      const failed = await allStatements(() =>
        projects.create({ name: taken }).then(
          () => 'created',
          (err: unknown) => err,
        ),
      );
      expect(failed.result).toBeInstanceOf(ConflictError);
      expect(failed.sent).toEqual([expect.stringMatching(/^insert into .projects. .* returning /)]);
      // SQLite's pool has one connection: a create that kept it would make every later one wait forever.
      const next = await projects.create({ name: `after-${randomUUID()}` });
      expect(payloads().map((p) => [p.name, p.primaryKey])).toEqual([
        ['projects.created', expect.anything()],
        ['projects.created', next.id],
      ]);
    });

    describe('as the service declares it (createInTransaction)', () => {
      /** What the --template starter's postCreate does: raise an event, nothing else. */
      const note = (row: Row<Task>, uow: UnitOfWork) => uow.raise(domainEvent('tasks.noted', { id: row.id }));
      class Raising extends BaseService<Task, Input, Input> {
        protected override postCreate(row: Row<Task>, uow: UnitOfWork): void {
          note(row, uow);
        }
      }
      class DeclaredRaising extends SingleStatementService<Task> {
        protected override postCreate(row: Row<Task>, uow: UnitOfWork): void {
          note(row, uow);
        }
      }
      class EmptyPostCreate extends BaseService<Task, Input, Input> {
        protected override postCreate(): void {}
      }
      class DeclaredEmptyPostCreate extends SingleStatementService<Task> {
        protected override postCreate(): void {}
      }

      it('keeps BEGIN and COMMIT by default, with or without hooks', async () => {
        for (const service of [
          new BaseService(Task, tasks),
          new EmptyPostCreate(Task, tasks),
          new Raising(Task, tasks),
        ]) {
          expect((await allStatements(() => service.create({ title: 'by default' }))).sent).toEqual(
            inTransaction(...insertOnly),
          );
        }
      });

      it('keeps BEGIN and COMMIT when declared true, even over a subclass that declared false', async () => {
        class Redeclared extends SingleStatementService<Task> {
          protected override readonly createInTransaction: boolean = true;
        }
        expect((await allStatements(() => new Redeclared(Task, tasks).create({ title: 'declared' }))).sent).toEqual(
          inTransaction(...insertOnly),
        );
      });

      it('declared false: an empty postCreate changes nothing, and one that raises an event sends it after the row committed', async () => {
        const bare = await allStatements(() => new SingleStatementService(Task, tasks).create({ title: 'bare' }));
        const empty = await allStatements(() => new DeclaredEmptyPostCreate(Task, tasks).create({ title: 'empty' }));
        expect(bare.sent).toEqual(insertOnly);
        expect(empty.sent).toEqual(insertOnly);

        const raised = await allStatements(() => new DeclaredRaising(Task, tasks).create({ title: 'raising' }));
        expect(raised.sent).toEqual(insertOnly);
        expect(events.map((e) => e.name)).toEqual(['tasks.created', 'tasks.created', 'tasks.created', 'tasks.noted']);
        expect(events.at(-1)!.payload).toEqual({ id: raised.result.id });
      });

      it('declared false: a postCreate that reads after the INSERT went alone fails, naming the declaration', async () => {
        class Reading extends SingleStatementService<Task> {
          protected override async postCreate(row: Row<Task>, uow: UnitOfWork): Promise<void> {
            await uow.em.findOneOrFail(Task, row.id as string);
          }
        }
        const title = `reading-${randomUUID()}`;
        await expect(new Reading(Task, tasks).create({ title })).rejects.toThrow(/createInTransaction/);
        // What the declaration trades: the row committed before postCreate ran.
        expect(await suite.db.select('select title from tasks where title = ?', [title])).toEqual([{ title }]);
      });

      it('keeps BEGIN and COMMIT, whatever is declared, for a unit that writes an outbox row', async () => {
        const outboxed: string[] = [];
        setOutbox(suite.db, {
          prepare: (event) => event,
          write: async (query, written) => {
            outboxed.push(...written.map((e) => e.name));
            await query('select 1 as outbox', []);
          },
          committed: () => {},
        });
        try {
          const sent = await allStatements(() => new DeclaredRaising(Task, tasks).create({ title: 'outboxed' }));
          expect(sent.sent).toEqual(inTransaction(...insertOnly, expect.stringMatching(/^select 1 as outbox/)));
          expect(outboxed).toEqual(['tasks.created', 'tasks.noted']);
        } finally {
          setOutbox(suite.db, undefined);
        }
      });

      it('sends the create of a model with a version column alone too: a create checks no version', async () => {
        const ledgers = new BaseRepository<Ledger, Input, Input>(Ledger, suite.db);
        const created = await allStatements(() =>
          new SingleStatementService(Ledger, ledgers).create({ name: 'versioned', version: 7 }),
        );
        expect(created.sent).toEqual([expect.stringMatching(/^insert into .ledgers. .* returning /)]);
        // The version is never taken from input: the column starts at its default.
        expect(created.result).toMatchObject({ name: 'versioned', version: 1 });
      });

      it('keeps BEGIN and COMMIT for a statement announced as last that checks a version or a row filter', async () => {
        const insertCounter = (
          uow: UnitOfWork,
          label: string,
          checks: { checksVersion?: boolean; checksRowFilter?: boolean },
        ) => {
          uow.allowLastStatementAlone();
          return uow.query('insert into counters (label) values (?)', [label], { last: true, ...checks });
        };
        const counterInsert = expect.stringMatching(/^insert into .?counters.? \(label\)/);
        for (const checks of [{ checksVersion: true }, { checksRowFilter: true }]) {
          const checked = await allStatements(() =>
            UnitOfWork.run((uow) => insertCounter(uow, 'checked', checks), { db: suite.db }),
          );
          expect(checked.sent).toEqual(inTransaction(counterInsert));
        }
        const unchecked = await allStatements(() =>
          UnitOfWork.run((uow) => insertCounter(uow, 'unchecked', {}), { db: suite.db }),
        );
        expect(unchecked.sent).toEqual([counterInsert]);
      });
    });
  });

  it('reports ORM writes and compiled inserts of one unit in the order they were made', async () => {
    const name = `p-${randomUUID()}`;
    await UnitOfWork.run(
      async (uow) => {
        uow.em.create(Project, { name } as never);
        await uow.em.flush();
        await tasks.create({ title: 'second' });
        uow.em.create(Project, { name: `${name}-3` } as never);
      },
      { db: suite.db },
    );
    expect(events.map((e) => e.name)).toEqual(['projects.created', 'tasks.created', 'projects.created']);
  });

  it('sends no SQL at all, not even BEGIN, for a unit that does not touch the database', async () => {
    const sent: string[] = [];
    const off = suite.db.onQuery((q) => void sent.push(q.sql));
    try {
      await UnitOfWork.run((uow) => uow.raise(domainEvent('nothing.written', {})), { db: suite.db });
    } finally {
      off();
    }
    expect(sent).toEqual([]);
    expect(events.map((e) => e.name)).toEqual(['nothing.written']);
  });

  it('serialises concurrent creates (one SQLite connection) without losing or mixing any', async () => {
    const service = new BaseService(Task, tasks);
    const titles = Array.from({ length: 20 }, (_, i) => `concurrent-${i}-${randomUUID()}`);
    const rows = await Promise.all(titles.map((title) => service.create({ title })));
    expect(rows.map((r) => r.title)).toEqual(titles);
    for (const row of rows) expect(await tasks.get(row.id as string)).toEqual(row);
    expect(events.filter((e) => e.name === 'tasks.created')).toHaveLength(20);
  });
});

// A database of its own: MikroORM cannot unregister a subscriber, and this one turns the fast path off.
describeEachDatabase('compiled create with a MikroORM subscriber', { entities: fixtureEntities }, (suite) => {
  it('goes through MikroORM when someone else subscribes to its entity events, so they see the create', async () => {
    const tasks = new BaseRepository<Task, Input, Input>(Task, suite.db);
    const { queries: before } = await countQueries(suite.db, () => tasks.create({ title: 'unobserved' }));
    expect(before.map((q) => q.sql)).toEqual([expect.stringMatching(/^insert into .* returning /)]);

    const seen: string[] = [];
    suite.db.orm.em
      .getEventManager()
      .registerSubscriber({ beforeCreate: (args) => void seen.push((args.entity as Task).title) });
    const { result: row, queries } = await countQueries(suite.db, () => tasks.create({ title: 'observed' }));
    expect(seen).toEqual(['observed']);
    expect(queries.filter((q) => q.source === 'read')).toHaveLength(1); // the ORM path's read-back
    expect(row).toEqual(await tasks.get(row.id as string));
  });
});
