/**
 * MikroORM's transaction context kept in Core's one AsyncLocalStorage store.
 *
 * MikroORM 6 finds the EntityManager of the active transaction through `TransactionContext`, a class
 * whose static `storage` is an AsyncLocalStorage of its own: a unit of work enters it, and so do
 * `em.transactional()` and `@Transactional()`. On Node 20 an AsyncLocalStorage that has been entered
 * once costs something on every promise and async resource created afterwards, for good (its store is
 * copied onto each one), so after the first write every read of the process paid for two stores. Here
 * `TransactionContext.storage` is replaced, once, when the first database opens, by a view of the
 * `transaction` field of Core's store (container/request-store.ts): entering a transaction context
 * derives a store that keeps the active context and scope, and reading it reads that field. Nothing
 * else changes for MikroORM or for code that uses it.
 *
 * `TransactionContext` calls `run(store, fn)` and `getStore()` of its storage and nothing else (checked
 * for @mikro-orm/core 6.6.16 by test/runtime/transaction-context.test.ts). A MikroORM version whose
 * `TransactionContext` has no `storage` keeps its own, and everything still works, at that cost.
 */
import { TransactionContext } from '@mikro-orm/core';
import { requestStorage, runWithStoreTransaction } from '../container/request-store.js';

/** The two members of AsyncLocalStorage that `TransactionContext` uses. */
interface TransactionStorage {
  run<A extends unknown[], R>(store: TransactionContext, fn: (...args: A) => R, ...args: A): R;
  getStore(): TransactionContext | undefined;
}

const storageView: TransactionStorage = {
  run: (store, fn, ...args) => runWithStoreTransaction(store, fn, ...args),
  getStore: () => requestStorage.getStore()?.transaction as TransactionContext | undefined,
};

const holder = TransactionContext as unknown as { storage?: TransactionStorage };
let installed: boolean | undefined;

/**
 * Puts MikroORM's transaction context into Core's store (the first call does it) and says whether it
 * is there: false for a MikroORM whose `TransactionContext` has no `storage`, where a unit of work
 * enters it with `TransactionContext.create` instead.
 */
export function keepTransactionContextInCoreStore(): boolean {
  if (installed === undefined) {
    installed = holder.storage !== undefined;
    if (installed) holder.storage = storageView;
  }
  return installed;
}
