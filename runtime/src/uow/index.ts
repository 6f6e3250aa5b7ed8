export { UnitOfWork, type UnitOfWorkOptions } from './unit-of-work.js';
export { registerDbEventDispatcher, type RegisterDbEventDispatcherOptions } from './entity-events.js';
