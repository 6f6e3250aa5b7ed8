export {
  DataLossError,
  MigrationError,
  applyMigrations,
  createMigration,
  migrationsFolder,
  pendingMigrations,
} from './migrations.js';
export type { CreatedMigration, MigrationOptions } from './migrations.js';
export type { DataRisk } from './guard.js';
export { CORE_TABLES, applyCoreMigrations, pendingCoreMigrations } from './core-migrations.js';
