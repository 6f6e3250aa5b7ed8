export { MigrationError, applyMigrations, createMigration, migrationsFolder, pendingMigrations } from './migrations.js';
export type { CreatedMigration, MigrationOptions } from './migrations.js';
