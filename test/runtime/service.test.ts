import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BaseRepository,
  BaseService,
  Dispatcher,
  NotFoundError,
  UnitOfWork,
  ValidationError,
  domainEvent,
  registerDbEventDispatcher,
  type Database,
  type DomainEvent,
  type Id,
  type Row,
} from '@core/runtime';
import { etagOf } from '../../runtime/src/data/etag.js';
import { DatabaseManager } from '../../runtime/src/db/database.js';
import { fixtureEntities, Project, Task } from '../../fixtures/models/index.js';
import { describeEachDatabase, type DatabaseSuite } from '../helpers/databases.js';

interface TaskCreate {
  title: string;
  priority?: string;
  description?: string | null;
}
type TaskUpdate = Partial<TaskCreate> & { is_completed?: boolean | null };

/** The starter task service's rule: a priority outside low/medium/high becomes medium. */
class TaskService extends BaseService<Task, TaskCreate, TaskUpdate> {
  readonly steps: string[] = [];
  failIn: string | undefined;
  inspect: ((row: Row<Task>, uow: UnitOfWork) => Promise<void>) | undefined;

  protected override preCreate(input: TaskCreate): TaskCreate {
    this.step('preCreate');
    const priority = input.priority ?? 'medium';
    return { ...input, priority: ['low', 'medium', 'high'].includes(priority) ? priority : 'medium' };
  }
  protected override async postCreate(row: Row<Task>, uow: UnitOfWork): Promise<void> {
    this.step('postCreate');
    await this.inspect?.(row, uow);
    uow.raise(domainEvent('tasks.announced', { id: row.id }));
  }
  protected override preUpdate(_id: Id, input: TaskUpdate): void {
    this.step('preUpdate');
    input.description ??= 'filled by preUpdate';
  }
  protected override postUpdate(row: Row<Task>, uow: UnitOfWork): void {
    this.step('postUpdate');
    uow.raise(domainEvent('tasks.changed', { id: row.id }));
  }
  protected override preDelete(): void {
    this.step('preDelete');
  }
  protected override postDelete(id: Id, uow: UnitOfWork): void {
    this.step('postDelete');
    uow.raise(domainEvent('tasks.removed', { id }));
  }

  private step(name: string): void {
    this.steps.push(name);
    if (this.failIn === name) throw new Error(`${name} failed`);
  }
}

async function rowCount(db: Database, id: unknown): Promise<number> {
  const rows = await db.select<{ n: number | string }>('select count(*) as n from tasks where id = ?', [id]);
  return Number(rows[0]!.n);
}

describe('BaseService construction', () => {
  it('accepts ({ model, repository }) and (model, repository)', () => {
    const repository = new BaseRepository(Task);
    expect(new BaseService({ model: Task, repository }).repository).toBe(repository);
    expect(new BaseService(Task, repository).model).toBe(Task);
  });
});

describeEachDatabase('BaseService', { entities: fixtureEntities }, (suite: DatabaseSuite) => {
  let service: TaskService;
  let events: DomainEvent[];
  let unregister: () => void;

  beforeEach(() => {
    service = new TaskService({
      model: Task,
      repository: new BaseRepository<Task, TaskCreate, TaskUpdate>(Task, suite.db),
    });
    events = [];
    const dispatcher = new Dispatcher();
    dispatcher.subscribe('*', (e) => void events.push(e));
    unregister = registerDbEventDispatcher(dispatcher, suite.db);
  });
  afterEach(() => unregister());

  it.each([
    ['urgent', 'medium'],
    ['high', 'high'],
    [undefined, 'medium'],
  ])('preCreate turns priority %s into %s before the insert', async (priority, stored) => {
    const row = await service.create({ title: 'prioritised', ...(priority ? { priority } : {}) });
    expect(row.priority).toBe(stored);
    expect(await service.get(row.id as string)).toMatchObject({ priority: stored });
  });

  it('runs postCreate after the insert and before the commit, and sends events only after the commit', async () => {
    const outside = suite.name === 'postgresql' ? new pg.Client({ connectionString: suite.url }) : undefined;
    await outside?.connect();
    try {
      const seenInHook: Record<string, number> = {};
      service.inspect = async (row) => {
        seenInHook.inTransaction = await rowCount(suite.db, row.id);
        if (outside) {
          const res = await outside.query('select count(*)::int as n from tasks where id = $1', [row.id]);
          seenInHook.otherConnection = res.rows[0].n as number;
        }
        seenInHook.eventsSoFar = events.length;
      };
      const row = await service.create({ title: 'hooked' });

      expect(service.steps).toEqual(['preCreate', 'postCreate']);
      expect(seenInHook.inTransaction).toBe(1);
      expect(seenInHook.eventsSoFar).toBe(0);
      if (outside) {
        expect(seenInHook.otherConnection).toBe(0); // not committed yet while postCreate runs
        const after = await outside.query('select count(*)::int as n from tasks where id = $1', [row.id]);
        expect(after.rows[0].n).toBe(1);
      }
      expect(events.map((e) => e.name)).toEqual(['tasks.created', 'tasks.announced']);
      expect(events[1]!.payload).toEqual({ id: row.id });
    } finally {
      await outside?.end();
    }
  });

  it.each(['postCreate', 'preCreate'])('rolls everything back when %s throws: no row, no event', async (hook) => {
    const title = `failing-${randomUUID()}`;
    service.failIn = hook;
    await expect(service.create({ title })).rejects.toThrow(`${hook} failed`);
    const rows = await suite.db.select('select id from tasks where title = ?', [title]);
    expect(rows).toEqual([]);
    expect(events).toEqual([]);
  });

  it('runs preUpdate (whose changes are used) and postUpdate around the update', async () => {
    const { id } = await service.create({ title: 'to update' });
    service.steps.length = 0;
    events.length = 0;
    const row = await service.update(id as string, { is_completed: true });
    expect(service.steps).toEqual(['preUpdate', 'postUpdate']);
    expect(row).toMatchObject({ is_completed: true, description: 'filled by preUpdate' });
    expect(events.map((e) => e.name)).toEqual(['tasks.updated', 'tasks.changed']);
  });

  it('runs preDelete and postDelete around the delete; a failing postDelete keeps the row', async () => {
    const { id } = await service.create({ title: 'to delete' });
    service.steps.length = 0;
    events.length = 0;

    service.failIn = 'postDelete';
    await expect(service.delete(id as string)).rejects.toThrow('postDelete failed');
    expect(await rowCount(suite.db, id)).toBe(1);
    expect(events).toEqual([]);

    service.failIn = undefined;
    await service.delete(id as string);
    expect(service.steps).toEqual(['preDelete', 'postDelete', 'preDelete', 'postDelete']);
    expect(await rowCount(suite.db, id)).toBe(0);
    expect(events.map((e) => e.name)).toEqual(['tasks.deleted', 'tasks.removed']);
  });

  it('throws NotFoundError from get() for a missing id, and passes other reads through', async () => {
    await expect(service.get(randomUUID())).rejects.toBeInstanceOf(NotFoundError);
    const { id } = await service.create({ title: 'readable' });
    expect(await service.get(id as string)).toEqual(await service.repository.get(id as string));
  });

  it('joins an outer unit: several writes commit together and their events follow the commit', async () => {
    const ids = await UnitOfWork.run(
      async () => [(await service.create({ title: 'one' })).id, (await service.create({ title: 'two' })).id],
      { db: suite.db },
    );
    expect(events.map((e) => e.name)).toEqual(['tasks.created', 'tasks.created', 'tasks.announced', 'tasks.announced']);
    for (const id of ids) expect(await rowCount(suite.db, id)).toBe(1);
  });
});

/**
 * GET by id asks `getDirect`, which answers without a promise where the read is synchronous: on a
 * SQLite file, through its read-only connection (`:memory:` reads through the pool).
 */
/**
 * A SQLite file for one describe block, with the fixture schema: the direct paths need a file (its
 * read-only connection; `:memory:` reads through the pool).
 */
function sqliteFile(): () => Database {
  const manager = new DatabaseManager();
  let dir: string;
  let db: Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'core-service-'));
    db = await manager.initApp(`sqlite:${join(dir, 'app.db')}`, false, {
      entities: fixtureEntities,
      cursorSecret: 'test-cursor-secret-0123456789abcdef',
    });
    await db.resetSchema();
  });
  afterAll(async () => {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return () => db;
}

/** A plain service of projects on `db`, with `repository` when given. */
function projectService(
  db: Database,
  repository = new BaseRepository<Project, ProjectInput, ProjectInput>(Project, db),
) {
  return new BaseService<Project, ProjectInput, ProjectInput>({ model: Project, repository });
}

type ProjectInput = { name: string };

describe('BaseService.getDirect [sqlite file]', () => {
  const file = sqliteFile();
  let db: Database;
  beforeAll(() => {
    db = file();
  });
  const serviceOf = (repository?: BaseRepository<Project, ProjectInput, ProjectInput>) =>
    projectService(db, repository);

  it('returns the row itself, with the tag get gives it', async () => {
    const service = serviceOf();
    const { id } = await service.create({ name: 'direct' });
    const direct = service.getDirect(id as string, { etag: true });
    expect(direct).not.toBeInstanceOf(Promise);
    const viaGet = await service.get(id as string, { etag: true });
    expect(direct).toEqual(viaGet);
    expect(etagOf(direct as Row<Project>)).toBe(etagOf(viaGet));
    expect(etagOf(viaGet)).toMatch(/^"[\w-]{22}"$/);
  });

  it('throws NotFoundError for a missing id, where get rejects with it', async () => {
    const service = serviceOf();
    const missing = randomUUID();
    expect(() => service.getDirect(missing, { etag: true })).toThrow(NotFoundError);
    await expect(service.get(missing, { etag: true })).rejects.toBeInstanceOf(NotFoundError);
    // A malformed id is the caller's error, thrown too.
    expect(() => service.getDirect('not-a-uuid', { etag: true })).toThrow(ValidationError);
    await expect(service.get('not-a-uuid', { etag: true })).rejects.toBeInstanceOf(ValidationError);
  });

  it('reads the tag first, with a promise, for a model that owns many-to-many links', async () => {
    const tasks = new TaskService({
      model: Task,
      repository: new BaseRepository<Task, TaskCreate, TaskUpdate>(Task, db),
    });
    const { id } = await tasks.create({ title: 'with labels' });
    const direct = tasks.getDirect(id as string, { etag: true });
    expect(direct).toBeInstanceOf(Promise);
    expect(etagOf(await direct)).toBe(etagOf(await tasks.get(id as string, { etag: true })));
  });

  it("asks a repository's own get when it overrides it", async () => {
    class StampingRepository extends BaseRepository<Project, ProjectInput, ProjectInput> {
      override async get(id: Id, options = {}) {
        const row = await super.get(id, options);
        return row && { ...row, name: `${row.name} (stamped)` };
      }
    }
    const service = serviceOf(new StampingRepository(Project, db));
    const { id } = await service.create({ name: 'overridden' });
    const direct = service.getDirect(id as string);
    expect(direct).toBeInstanceOf(Promise);
    expect(await direct).toMatchObject({ name: 'overridden (stamped)' });
  });
});

/**
 * Create asks `createDirect`, which answers without a promise where nothing has to wait: on SQLite,
 * hooks that answer at once, a plain row, and the writer connection free in knex's pool, which the
 * unit then takes at once (db/sqlite-writer-lease.ts). Anything else must still wait its turn.
 */
describe('BaseService.createDirect [sqlite file]', () => {
  const file = sqliteFile();
  let db: Database;
  beforeAll(() => {
    db = file();
  });
  const serviceOf = () => projectService(db);
  const names = async (): Promise<string[]> =>
    (await db.select<{ name: string }>('select name from projects order by name')).map((r) => r.name);

  it('returns the committed row itself, as create resolves it', async () => {
    const service = serviceOf();
    const direct = service.createDirect({ name: 'direct' });
    expect(direct).not.toBeInstanceOf(Promise);
    expect(UnitOfWork.current()).toBeUndefined();
    const row = direct as Row<Project>;
    // Committed: another connection reads it, and so does the service.
    expect(await names()).toContain('direct');
    expect(await service.get(row.id as string)).toEqual(row);
    const viaCreate = await service.create({ name: 'via create' });
    expect(Object.keys(viaCreate)).toEqual(Object.keys(row));
  });

  it('throws a conflict at once, and leaves nothing written', async () => {
    const service = serviceOf();
    service.createDirect({ name: 'unique-once' });
    expect(() => service.createDirect({ name: 'unique-once' })).toThrow(/already exists|conflict|unique/i);
    expect((await names()).filter((n) => n === 'unique-once')).toHaveLength(1);
    // The connection went back to the pool: the next create answers at once again.
    expect(service.createDirect({ name: 'after the conflict' })).not.toBeInstanceOf(Promise);
  });

  it('waits for a unit that holds the writer connection, and never writes inside its transaction', async () => {
    const service = serviceOf();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    // A unit that writes, then holds its transaction open across an await, then fails.
    const failing = UnitOfWork.run(
      async () => {
        await service.create({ name: 'rolled back' });
        wrote();
        await held;
        throw new Error('the holder fails');
      },
      { db },
    );
    await written;
    const waiting = service.createDirect({ name: 'waited' });
    expect(waiting).toBeInstanceOf(Promise);
    release();
    await expect(failing).rejects.toThrow('the holder fails');
    expect(await waiting).toMatchObject({ name: 'waited' });
    const after = await names();
    expect(after).toContain('waited');
    expect(after).not.toContain('rolled back');
  });

  it('answers with a promise when a hook does, and when an event handler is to be waited for', async () => {
    class SlowHooks extends BaseService<Project, ProjectInput, ProjectInput> {
      protected override async preCreate(input: ProjectInput): Promise<ProjectInput> {
        await Promise.resolve();
        return { name: `${input.name} (checked)` };
      }
    }
    const slow = new SlowHooks({ model: Project, repository: new BaseRepository(Project, db) });
    const viaHook = slow.createDirect({ name: 'async hook' });
    expect(viaHook).toBeInstanceOf(Promise);
    expect(await viaHook).toMatchObject({ name: 'async hook (checked)' });

    const dispatcher = new Dispatcher();
    const seen: string[] = [];
    dispatcher.subscribe('projects.created', async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.push(event.name);
    });
    const unregister = registerDbEventDispatcher(dispatcher, db);
    try {
      const withHandler = serviceOf().createDirect({ name: 'with a handler' });
      expect(withHandler).toBeInstanceOf(Promise);
      expect(seen).toEqual([]);
      await withHandler;
      expect(seen).toEqual(['projects.created']);
    } finally {
      unregister();
    }
  });
});
