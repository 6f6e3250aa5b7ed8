import { randomUUID } from 'node:crypto';
import { TransactionContext } from '@mikro-orm/core';
import { describe, expect, it } from 'vitest';
import { Container, UnitOfWork, getContext, runWithContext, type CoreContext } from '@core/runtime';
import { fixtureEntities, Task } from '../../fixtures/models/index.js';
import { describeEachDatabase } from '../helpers/databases.js';

/**
 * MikroORM's transaction context lives in Core's one AsyncLocalStorage store, not in MikroORM's own
 * store: on Node 20 a store entered once costs every later promise of the process something.
 */

/** MikroORM's own AsyncLocalStorage, taken before a database opens (and replaces it). */
const ormStorage = (TransactionContext as unknown as { storage: { getStore(): unknown } }).storage;

const caller: CoreContext = {
  sub: 'user-1',
  roles: ['member'],
  permissions: new Set(['tasks:view']),
  restrictedFields: new Set(),
};

describe('MikroORM TransactionContext', () => {
  it('uses only run and getStore of its storage (what Core replaces)', () => {
    const used = new Set([...TransactionContext.toString().matchAll(/\bstorage\.(\w+)/g)].map((m) => m[1]));
    expect([...used].sort()).toEqual(['getStore', 'run']);
  });
});

describeEachDatabase('Transaction context in Core’s store', { entities: fixtureEntities }, (suite) => {
  it('makes the unit the active transaction without entering MikroORM’s own store', async () => {
    await UnitOfWork.run(
      async (uow) => {
        expect(ormStorage.getStore()).toBeUndefined();
        expect(TransactionContext.getEntityManager(uow.em.name)).toBe(uow.em);
        expect(UnitOfWork.current()).toBe(uow);
        await Promise.resolve();
        expect(UnitOfWork.current()).toBe(uow);
      },
      { db: suite.db },
    );
    expect(UnitOfWork.current()).toBeUndefined();
    expect(TransactionContext.currentTransactionContext()).toBeUndefined();
  });

  it('keeps the caller’s context and scope inside a unit, and the unit inside a new context or scope', async () => {
    const container = new Container();
    await runWithContext(caller, () =>
      container.runInScope(async (scope) => {
        await UnitOfWork.run(
          async (uow) => {
            expect(getContext()).toBe(caller);
            expect(scope.run(() => UnitOfWork.current())).toBe(uow);
            await runWithContext(caller, async () => {
              await Promise.resolve();
              expect(UnitOfWork.current()).toBe(uow);
            });
          },
          { db: suite.db },
        );
        expect(getContext()).toBe(caller);
      }),
    );
  });

  it('runs the ORM’s em.transactional inside a unit as part of it, and alone outside any unit', async () => {
    const inside = `t-${randomUUID()}`;
    await expect(
      UnitOfWork.run(
        async (uow) => {
          await suite.db.orm.em.transactional(async (em) => {
            em.create(Task, { title: inside } as never);
          });
          // Seen inside the unit's transaction, through the ORM's global EntityManager.
          expect(await suite.db.orm.em.count(Task, { title: inside } as never)).toBe(1);
          expect(uow).toBe(UnitOfWork.current());
          throw new Error('roll back');
        },
        { db: suite.db },
      ),
    ).rejects.toThrow('roll back');
    expect(await suite.db.orm.em.fork().count(Task, { title: inside } as never)).toBe(0);

    const alone = `t-${randomUUID()}`;
    await suite.db.orm.em.fork().transactional(async (em) => {
      expect(TransactionContext.getEntityManager(em.name)).toBe(em);
      em.create(Task, { title: alone } as never);
    });
    expect(await suite.db.orm.em.fork().count(Task, { title: alone } as never)).toBe(1);
  });
});
