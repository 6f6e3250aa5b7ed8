import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ScopeImpl } from './scope.js';

/**
 * What Core keeps in AsyncLocalStorage: the caller's context (`getContext()`), the DI scope
 * (`Inject`, `currentScope()`) and MikroORM's transaction context (the unit of work's, see
 * db/transaction-context.ts), in **one** store.
 *
 * Why one: on Node 20 every AsyncLocalStorage that has ever been entered costs something on every
 * promise and async resource created afterwards (its store is copied onto each one), whether or not
 * anything reads it. Two stores per request (context and scope) were measured as a visible share of a
 * read's CPU time; one store halves that. MikroORM's own store for transactions would be a second one
 * from the first write on, paid by every later read too.
 *
 * A store opened for an HTTP request is shared by Core's `onRequest` hooks: the first one opens it with
 * a single `als.run`, the later ones find it on the request (`requestStoreFor`), set their field and
 * continue inside it. A store opened by `runWithContext` / `scope.run` is a derived one: it copies the
 * other fields from the store around it and is never changed afterwards. A store holds no reference to
 * its request: stores travel with every async resource created under them, and a long-lived one (a
 * pool's timer, say) would otherwise keep a whole request and its socket alive.
 */
export class RequestStore {
  constructor(
    /** The caller's context; undefined means "none set", i.e. `SYSTEM_CONTEXT`. */
    /** The caller's `CoreContext` (context/context.ts reads and writes it). */
    public context: object | undefined,
    /** The active DI scope, if any. */
    public scope: ScopeImpl | undefined,
    /** MikroORM's `TransactionContext` active here, if any (a unit of work's, or `em.transactional`'s). */
    public transaction: object | undefined = undefined,
  ) {}
}

/** The one AsyncLocalStorage of Core's web layer. `run` only, never `enterWith` (it leaks across keep-alive requests). */
export const requestStorage = new AsyncLocalStorage<RequestStore>();

/** The store active in the current async context, if any. */
export function activeStore(): RequestStore | undefined {
  return requestStorage.getStore();
}

/** Where a request keeps its store (a request decoration, so every request object has the same shape). */
const kRequestStore = Symbol('core.requestStore');

type RequestWithStore = FastifyRequest & { [kRequestStore]: RequestStore | null };

/** Declares the request field `requestStoreFor` uses; each plugin using it calls this at registration. */
export function decorateRequestStore(app: FastifyInstance): void {
  if (!app.hasRequestDecorator(kRequestStore)) app.decorateRequest(kRequestStore, null);
}

/**
 * The store of `request`, for an `onRequest` hook: the one an earlier Core hook of the same request
 * opened, else a new one (not entered yet) that starts from what is active around the request — so a
 * request served inside `runWithContext(...)` or `scope.run(...)` sees that context and scope until
 * Core's own hooks set the request's.
 */
export function requestStoreFor(request: FastifyRequest): RequestStore {
  const own = (request as RequestWithStore)[kRequestStore];
  if (own) return own;
  const active = requestStorage.getStore();
  const store = new RequestStore(active?.context, active?.scope, active?.transaction);
  (request as RequestWithStore)[kRequestStore] = store;
  return store;
}

/**
 * Continues a callback-style hook chain inside `store` (from `requestStoreFor`): a plain call when the
 * chain already runs in it (an earlier hook of the request opened it), else one `als.run`, so every
 * later hook, the body parser, the handler and what they await inherit it. (Compared with the active
 * store rather than remembered: a hook in between may have moved the chain into another store.)
 */
export function continueIn(store: RequestStore, next: (error?: Error) => void, error?: Error): void {
  if (requestStorage.getStore() === store) next(error);
  else requestStorage.run(store, next, error);
}

/** Runs `fn` in a derived store with `context` and the active scope and transaction. */
export function runWithStoreContext<T>(context: object, fn: () => T): T {
  const active = requestStorage.getStore();
  return requestStorage.run(new RequestStore(context, active?.scope, active?.transaction), fn);
}

/** Runs `fn` in a derived store with `scope` and the active context and transaction. */
export function runWithStoreScope<T>(scope: ScopeImpl, fn: () => T): T {
  const active = requestStorage.getStore();
  return requestStorage.run(new RequestStore(active?.context, scope, active?.transaction), fn);
}

/** Runs `fn(...args)` in a derived store with `transaction` and the active context and scope. */
export function runWithStoreTransaction<A extends unknown[], T>(
  transaction: object | undefined,
  fn: (...args: A) => T,
  ...args: A
): T {
  const active = requestStorage.getStore();
  return requestStorage.run(new RequestStore(active?.context, active?.scope, transaction), fn, ...args);
}
