import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { p, type Ref } from '@mikro-orm/core';
import { afterAll, describe, expect, it } from 'vitest';
import { Base, defineModel } from '@core/runtime';
import { DatabaseManager } from '../../runtime/src/db/database.js';

// Version 1 and version 2 of the same tables, as before and after a manifest edit.
class OwnerV1 extends Base {
  static override readonly tableName = 'owners';
  declare id: number;
}
class ItemV1 extends Base {
  static override readonly tableName = 'items';
  declare id: number;
  declare name: string;
}
class OwnerV2 extends Base {
  static override readonly tableName = 'owners';
  declare id: number;
}
class ItemV2 extends Base {
  static override readonly tableName = 'items';
  declare id: number;
  declare name: string;
  declare note: string | null;
  declare owner: Ref<OwnerV2> | null;
}
const v1 = [
  defineModel(OwnerV1, { id: p.integer().primary() }),
  defineModel(ItemV1, { id: p.integer().primary(), name: p.string() }),
];
const v2 = [
  defineModel(OwnerV2, { id: p.integer().primary() }),
  defineModel(ItemV2, {
    id: p.integer().primary(),
    name: p.string(),
    note: p.string().nullable(),
    owner: () => p.manyToOne(OwnerV2).ref().nullable(),
  }),
];

const dir = mkdtempSync(join(tmpdir(), 'core-ddl-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite: adding a column and a foreign key to an existing table in one step', () => {
  it('puts the constraint on the foreign key column, not on the first column added', async () => {
    const url = `sqlite:${join(dir, 'app.db')}`;
    const first = new DatabaseManager();
    await (await first.initApp(url, false, { entities: v1 })).orm.schema.createSchema();
    await first.close();

    const second = new DatabaseManager();
    const db = await second.initApp(url, false, { entities: v2 });
    const sql = await db.orm.schema.getUpdateSchemaSQL();
    expect(sql).toMatch(/add column `owner_id` integer null constraint `items_owner_id_foreign` references `owners`/);
    expect(sql).not.toMatch(/add column `note` [^;]*references/);
    await db.orm.schema.updateSchema();
    // With the constraint on `note`, this insert failed with a foreign-key violation.
    await db.select('select 1'); // the connection is open and the schema updated
    await db.connection.execute("insert into items (id, name, note) values (1, 'a', 'free text')");
    expect(await db.select('select note, owner_id from items')).toEqual([{ note: 'free text', owner_id: null }]);
    await second.close();
  });
});
