export { UnitOfWork, type UnitOfWorkOptions } from './unit-of-work.js';
