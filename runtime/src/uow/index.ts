export { UnitOfWork, type UnitOfWorkOptions } from './unit-of-work.js';
export { registerDbEventDispatcher } from './entity-events.js';
