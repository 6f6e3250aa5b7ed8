/**
 * Core's own tables reach a project through its migrations (`core migrate`, `npm run migrate` and
 * `core run` all call `applyMigrations`): `core_outbox` is created on SQLite and PostgreSQL with
 * nothing written by the user, once, and a migration written from the models never drops it.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { applyMigrations, createMigration, pendingMigrations } from '@core/runtime';
import { DatabaseManager } from '../../runtime/src/db/database.js';
import '../../fixtures/apps/tasks/src/main.js';
import { describePerDatabase } from '../helpers/databases.js';

describePerDatabase('Core migrations', ({ name: dialect, url }) => {
  let cwd: string;
  let databaseUrl: string;

  beforeAll(() => {
    cwd = mkdtempSync(join(tmpdir(), 'core-migrations-'));
    databaseUrl = dialect === 'sqlite' ? `sqlite:${join(cwd, 'app.db')}` : url();
    mkdirSync(join(cwd, 'migrations', dialect), { recursive: true });
  });
  afterAll(() => {
    rmSync(cwd, { recursive: true, force: true });
  });

  it('creates core_outbox first, once, and lists it as pending until then', async () => {
    expect(await pendingMigrations({ cwd, databaseUrl })).toEqual(['core_0001_outbox']);
    expect(await applyMigrations({ cwd, databaseUrl })).toEqual(['core_0001_outbox']);
    expect(await pendingMigrations({ cwd, databaseUrl })).toEqual([]);
    expect(await applyMigrations({ cwd, databaseUrl })).toEqual([]);

    const manager = new DatabaseManager();
    const db = await manager.initApp(databaseUrl);
    try {
      const occurred = dialect === 'sqlite' ? Date.now() : new Date();
      await db.connection
        .getKnex()
        .raw('insert into core_outbox (id, name, body, occurred_at) values (?, ?, ?, ?)', [
          'e1',
          'tasks.created',
          '{}',
          occurred,
        ]);
      const rows = await db.select<Record<string, unknown>>(
        'select seq, id, name, body, published_at, attempts, last_error from core_outbox',
      );
      expect(rows).toEqual([
        {
          seq: dialect === 'sqlite' ? 1 : '1',
          id: 'e1',
          name: 'tasks.created',
          body: '{}',
          published_at: null,
          attempts: 0,
          last_error: null,
        },
      ]);
    } finally {
      await manager.close();
    }
  });

  it('never drops Core tables from a migration written from the models, even one diffed against the database', async () => {
    const made = await createMigration({ cwd, databaseUrl, name: 'first' });
    expect(made.file).not.toBeNull();
    expect(made.statements.join('\n')).toMatch(/create table .tasks./);
    expect(made.statements.join('\n')).not.toMatch(/core_/);
  });
});
