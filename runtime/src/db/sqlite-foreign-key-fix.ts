/**
 * Works around a MikroORM 6.6.16 bug in SQLite DDL: when a migration adds a column with a foreign key
 * to an existing table, `SqliteTableCompiler.foreign` looks for the `add column` statement with
 * ``includes(`add column ${column[0]}`)``, where `column` is already a quoted string, so `column[0]`
 * is the quote character and the constraint lands on the FIRST column added in that migration
 * (e.g. `due_on … references projects`). This copy of the method matches the whole quoted column name;
 * everything else is unchanged. Remove when MikroORM fixes it upstream.
 */
import { SqliteTableCompiler } from '@mikro-orm/knex';

interface ForeignInfo {
  column: string | string[];
  inTable: string;
  references: string | string[];
  keyName: string;
  onUpdate?: string;
  onDelete?: string;
}

interface CompilerInternals {
  client: {
    customWrapIdentifier(value: string, fn: (a: string) => string): string;
    ddl(compiler: CompilerInternals, pragma: unknown, connection: unknown): { foreign(info: ForeignInfo): unknown };
  };
  formatter: { columnize(value: string | string[]): string };
  sequence: { sql: string }[];
  method: string;
  tableName(): string;
  pushQuery(query: { sql: string; statementsProducer(pragma: unknown, connection: unknown): unknown }): void;
}

let applied = false;

export function applySqliteForeignKeyFix(): void {
  if (applied) return;
  applied = true;
  const proto = SqliteTableCompiler.prototype as unknown as {
    foreign(this: CompilerInternals, info: ForeignInfo): void;
  };
  proto.foreign = function foreign(this: CompilerInternals, info: ForeignInfo): void {
    info.column = (Array.isArray(info.column) ? info.column : [info.column]).map((c) =>
      this.client.customWrapIdentifier(c, (a) => a),
    );
    info.inTable = this.client.customWrapIdentifier(info.inTable, (a) => a);
    info.references = (Array.isArray(info.references) ? info.references : [info.references]).map((c) =>
      this.client.customWrapIdentifier(c, (a) => a),
    );
    const column = this.formatter.columnize(info.column);
    // The fix: the whole quoted column name (upstream compares its first character only).
    const addColumn = this.sequence.find((query) => query.sql.includes(`add column ${column} `));
    if (addColumn) {
      const onUpdate = info.onUpdate ? ` on update ${info.onUpdate}` : '';
      const onDelete = info.onDelete ? ` on delete ${info.onDelete}` : '';
      addColumn.sql += ` constraint ${this.formatter.columnize(info.keyName)} references ${this.formatter.columnize(info.inTable)} (${this.formatter.columnize(info.references)})${onUpdate}${onDelete}`;
      return;
    }
    // As upstream: an existing column gets its foreign key through knex's table rebuild.
    if (this.method !== 'create' && this.method !== 'createIfNot') {
      const compiler = this;
      this.pushQuery({
        sql: `PRAGMA table_info(${this.tableName()})`,
        statementsProducer(pragma, connection) {
          return compiler.client.ddl(compiler, pragma, connection).foreign(info);
        },
      });
    }
  };
}
