/**
 * MikroORM's statements reach the driver with their values bound, not written into the SQL text:
 * entity writes through a flush, and what an app sends itself with `em.execute`, in every form
 * MikroORM accepts there (a list for `in (?)`, `??` for an identifier, a raw fragment with values of
 * its own, a plain object as JSON, a Date), on both databases.
 */
import { raw } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/knex';
import { expect, it } from 'vitest';
import { UnitOfWork, type QueryEvent } from '@core/runtime';
import { fixtureEntities, Task } from '../../fixtures/models/index.js';
import { describeEachDatabase } from '../helpers/databases.js';

const AWKWARD = `it's \\ "quoted" ? ?? $1 -- ; \u0001 ü 😀`;

describeEachDatabase('MikroORM statements are bound', { entities: fixtureEntities }, (suite) => {
  const em = (): SqlEntityManager => suite.db.orm.em.fork() as SqlEntityManager;
  const statements = async (fn: () => Promise<unknown>): Promise<QueryEvent[]> => {
    const seen: QueryEvent[] = [];
    const off = suite.db.onQuery((q) => seen.push(q));
    try {
      await fn();
    } finally {
      off();
    }
    return seen.filter((q) => q.source === 'orm' && !/^\s*(begin|commit|rollback|savepoint|release)/i.test(q.sql));
  };

  it('a flush inserts, updates and deletes with placeholders; the values travel beside the SQL and come back intact', async () => {
    let id = '';
    const writes = await statements(async () => {
      await UnitOfWork.run(
        async (uow) => {
          const task = uow.em.create(Task, {
            title: AWKWARD,
            description: `${AWKWARD}!`,
            points: 7,
            due_at: new Date('2026-01-31T09:30:00.123Z'),
          } as never);
          await uow.em.flush();
          id = (task as unknown as { id: string }).id;
          (task as unknown as { title: string }).title = `${AWKWARD}?`;
        },
        { db: suite.db },
      );
      await UnitOfWork.run(
        async (uow) => {
          uow.em.remove(uow.em.getReference(Task, id as never));
        },
        { db: suite.db },
      );
    });
    const kinds = writes.map((q) => q.sql.trim().split(/\s/)[0]!.toLowerCase()).filter((k) => k !== 'select');
    expect(kinds).toEqual(['insert', 'update', 'delete']);
    for (const q of writes) {
      expect(q.sql).not.toContain("it's");
      expect(q.sql).not.toContain(id);
    }
    const [insert] = writes;
    expect(insert!.params).toEqual(expect.arrayContaining([AWKWARD, `${AWKWARD}!`, 7]));
  });

  it('em.execute binds a list, an identifier, a raw fragment, JSON and a Date, and returns what it was given', async () => {
    await em().execute('delete from tasks');
    const first = await suite.db.orm.em.fork().getConnection().execute('select 1 as one');
    expect(first).toHaveLength(1);
    await UnitOfWork.run(
      async (uow) => {
        for (const title of [AWKWARD, 'b', 'c']) uow.em.create(Task, { title } as never);
      },
      { db: suite.db },
    );
    const byTitle = new Map(
      (await em().find(Task, {})).map((t) => [
        (t as unknown as { title: string }).title,
        (t as unknown as { id: string }).id,
      ]),
    );
    const ids = [AWKWARD, 'b', 'c'].map((title) => byTitle.get(title)!);

    const rows = await em().execute<{ title: string }[]>('select title from ?? where id in (?) order by title', [
      'tasks',
      [ids[0], ids[2]],
    ]);
    expect(rows.map((r) => r.title).sort()).toEqual([AWKWARD, 'c'].sort());

    const fragment = await em().execute<{ n: number | string }[]>(
      'select count(*) as n from tasks where title = ? or title = ?',
      [raw('lower(?)', ['B']), AWKWARD],
    );
    expect(Number(fragment[0]!.n)).toBe(2);

    const echoed = await em().execute<{ j: string; s: string }[]>('select ? as j, ? as s', [{ a: AWKWARD }, AWKWARD]);
    expect(JSON.parse(echoed[0]!.j)).toEqual({ a: AWKWARD });
    expect(echoed[0]!.s).toBe(AWKWARD);

    const when = new Date('2026-01-31T09:30:00.123Z');
    await em().execute('update tasks set due_at = ? where id = ?', [when, ids[1]]);
    const task = await em().findOneOrFail(Task, ids[1] as never);
    expect((task as unknown as { due_at: Date }).due_at.toISOString()).toBe(when.toISOString());
  });
});
