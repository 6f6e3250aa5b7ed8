import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '@core/runtime';
import { DatabaseManager } from '../../runtime/src/db/database.js';
import { leaseFreeConnection, releaseLeased } from '../../runtime/src/db/sqlite-writer-lease.js';
import { fixtureEntities } from '../../fixtures/models/index.js';

/** The SQLite writer connection taken from knex's (tarn's) pool at once: a lease like any other. */
describe('leaseFreeConnection [sqlite file]', () => {
  const manager = new DatabaseManager();
  let dir: string;
  let db: Database;
  interface Client {
    pool: { numUsed(): number; numFree(): number; numPendingAcquires(): number };
    acquireConnection(): Promise<unknown>;
    releaseConnection(conn: unknown): Promise<void>;
  }
  const client = (): Client => db.connection.getKnex().client as unknown as Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'core-lease-'));
    db = await manager.initApp(`sqlite:${join(dir, 'app.db')}`, false, { entities: fixtureEntities });
    await db.resetSchema();
  });
  afterAll(async () => {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes the free connection as used; an acquire waits for it and gets it back', async () => {
    const conn = leaseFreeConnection(client());
    expect(conn).toBeDefined();
    expect(client().pool.numUsed()).toBe(1);
    expect(client().pool.numFree()).toBe(0);
    let acquired: unknown;
    const acquire = client()
      .acquireConnection()
      .then((c) => (acquired = c));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(acquired).toBeUndefined();
    expect(client().pool.numPendingAcquires()).toBe(1);
    releaseLeased(client(), conn);
    await acquire;
    expect(acquired).toBe(conn);
    // Held by knex now, and then waited for by another acquire: no lease either way.
    expect(leaseFreeConnection(client())).toBeUndefined();
    const second = client().acquireConnection();
    await client().releaseConnection(acquired);
    expect(await second).toBe(conn);
    await client().releaseConnection(conn);
    expect(client().pool.numFree()).toBe(1);
  });
});
