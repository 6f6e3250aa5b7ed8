/**
 * What the pending migrations would do to data already in the database, found before they run. The
 * development loop (`core run`, `core generate`) applies migrations on its own; this keeps it from
 * doing so when a migration would lose data or fail on the rows that are there.
 *
 * Two sources, because neither is enough alone:
 * - The difference between the database as it is (introspected) and the schema of the models, from
 *   MikroORM's own comparator: columns whose type, length, precision, nullability or enum values
 *   change, and required columns added to tables that have rows. Only the net effect of all pending
 *   migrations is visible there.
 * - The SQL text of each pending migration, for drops: a column dropped by one migration and added
 *   again by the next has no net difference, yet its values are gone.
 *
 * Each candidate is then checked against the data with a count of the rows the new schema cannot
 * keep (values longer than a new length, NULLs in a column becoming NOT NULL, values outside a new
 * enum…), so a change that touches no row is applied; an empty table may lose anything. The checks
 * ask about the target only, so an imprecise introspection (SQLite reports enum values of a CHECK
 * constraint only in part) cannot hide a risk.
 */
import type {
  AbstractSqlConnection,
  DatabaseSchema,
  DatabaseTable,
  SchemaDifference,
  TableDifference,
} from '@mikro-orm/knex';
import type { Database } from '../db/database.js';

/** One change of the pending migrations that would lose data, or fail on the rows there. */
export interface DataRisk {
  /** `tasks` or `tasks.priority`. */
  readonly target: string;
  /** What the migration does to it: `column dropped`, `becomes NOT NULL`… */
  readonly change: string;
  /** How many rows it affects, in words: `3 rows hold a value`. */
  readonly rows: string;
}

interface Candidate {
  table: { name: string; schema?: string };
  column?: string;
  change: string;
  /** Candidates of the same target and kind are one risk (a drop seen in the SQL and in the difference). */
  kind?: 'drop';
  /** Narrows the count to the rows at risk; none: every row of the table. */
  where?: (qb: CountQuery) => void;
  /** `3 rows hold a value` from 3. */
  rows: (count: number) => string;
}

interface CountQuery {
  whereNotNull(column: string): CountQuery;
  whereNull(column: string): CountQuery;
  whereNotIn(column: string, values: readonly string[]): CountQuery;
  whereRaw(sql: string, bindings: readonly unknown[]): CountQuery;
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
const holdValues = (count: number) => `${plural(count, 'row holds', 'rows hold')} a value`;

/**
 * The risks of applying the pending migrations whose sources (file contents) are given, against the
 * models `db` was initialised with. Empty when the migrations can run without losing data.
 */
export async function dataRisks(db: Database, pendingSources: readonly string[]): Promise<DataRisk[]> {
  const { DatabaseSchema, SchemaComparator } = await import('@mikro-orm/knex');
  const orm = db.orm;
  const generator = orm.getSchemaGenerator() as unknown as { getTargetSchema(): DatabaseSchema };
  const target = generator.getTargetSchema();
  // Tables the schema generator skips (Core's own) are not the models' to drop.
  const skip = orm.config.get('schemaGenerator').skipTables;
  const current = await DatabaseSchema.create(
    db.connection,
    db.platform,
    orm.config,
    undefined,
    target.getNamespaces(),
    undefined,
    skip,
  );
  const diff = new SchemaComparator(db.platform).compare(current, target);

  const candidates = [...fromDifference(diff), ...fromSql(current, target, pendingSources)];
  const risks: DataRisk[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    const name = candidate.column ? `${candidate.table.name}.${candidate.column}` : candidate.table.name;
    const key = `${name}\0${candidate.kind ?? candidate.change}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const count = await countRows(db.connection, candidate);
    if (count > 0) risks.push({ target: name, change: candidate.change, rows: candidate.rows(count) });
  }
  return risks.sort((a, b) => a.target.localeCompare(b.target));
}

/** Candidates from the comparator's difference between the database and the models. */
function fromDifference(diff: SchemaDifference): Candidate[] {
  const out: Candidate[] = [];
  for (const table of Object.values(diff.removedTables))
    out.push({ table, change: 'table dropped', rows: (n) => plural(n, 'row', 'rows') });
  for (const tableDiff of Object.values(diff.changedTables)) {
    const table = tableDiff.fromTable;
    const added = Object.keys(tableDiff.addedColumns);
    for (const column of Object.values(tableDiff.removedColumns)) out.push(dropped(table, column.name, added));
    for (const column of Object.values(tableDiff.addedColumns)) {
      if (column.nullable || column.default != null || column.autoincrement || column.generated) continue;
      out.push({
        table,
        column: column.name,
        change: 'added as NOT NULL without a default',
        rows: (n) => `the table has ${plural(n, 'row', 'rows')}`,
      });
    }
    out.push(...changedColumns(tableDiff));
  }
  return out;
}

function dropped(table: Candidate['table'], column: string, added: readonly string[]): Candidate {
  const change = added.includes(column)
    ? 'column dropped and added again'
    : added.length > 0
      ? `column dropped while ${added.join(', ')} is added (a rename done as drop and add)`
      : 'column dropped';
  return { table, column, change, kind: 'drop', where: (qb) => qb.whereNotNull(column), rows: holdValues };
}

function changedColumns(tableDiff: TableDifference): Candidate[] {
  const out: Candidate[] = [];
  const table = tableDiff.fromTable;
  for (const { column: to, fromColumn: from, changedProperties: changed } of Object.values(tableDiff.changedColumns)) {
    const name = to.name;
    if (changed.has('nullable') && from.nullable && !to.nullable) {
      out.push(becomesNotNull(table, name));
    }
    const fromFamily = typeFamily(from.type);
    const toFamily = typeFamily(to.type);
    if (changed.has('type') && fromFamily !== toFamily && !WIDER[fromFamily]?.includes(toFamily)) {
      out.push({
        table,
        column: name,
        change: `type changes from ${from.type.toLowerCase()} to ${to.type.toLowerCase()}`,
        where: (qb) => qb.whereNotNull(name),
        rows: holdValues,
      });
      continue; // every value is at risk: the narrower checks below would only repeat it
    }
    if (toFamily === 'text' && to.length && (changed.has('length') || changed.has('type'))) {
      const length = to.length;
      out.push({
        table,
        column: name,
        change: `shortened to ${length} characters`,
        where: (qb) => qb.whereRaw('length(??) > ?', [name, length]),
        rows: (n) => `${plural(n, 'row holds', 'rows hold')} a longer value`,
      });
    }
    if (
      toFamily === 'decimal' &&
      to.precision !== undefined &&
      (changed.has('precision') || changed.has('scale') || changed.has('type'))
    ) {
      const scale = to.scale ?? 0;
      const limit = 10 ** (to.precision - scale);
      out.push({
        table,
        column: name,
        change: `narrowed to numeric(${to.precision},${scale})`,
        // More decimals than the scale keeps, or more integer digits than the precision leaves.
        where: (qb) => qb.whereRaw('(round(??, ?) <> ?? or abs(??) >= ?)', [name, scale, name, name, limit]),
        rows: (n) => `${plural(n, 'row holds', 'rows hold')} a value that does not fit`,
      });
    }
    if (to.enumItems?.length && changed.has('enumItems')) out.push(onlyAllows(table, name, to.enumItems));
  }
  return out;
}

function becomesNotNull(table: DatabaseTable, column: string): Candidate {
  return {
    table,
    column,
    change: 'becomes NOT NULL',
    where: (qb) => qb.whereNull(column),
    rows: (n) => `${plural(n, 'row is', 'rows are')} NULL`,
  };
}

function onlyAllows(table: DatabaseTable, column: string, items: readonly string[]): Candidate {
  return {
    table,
    column,
    change: `allows only ${items.map((i) => `'${i}'`).join(', ')}`,
    where: (qb) => qb.whereNotNull(column).whereNotIn(column, items),
    rows: (n) => `${plural(n, 'row holds', 'rows hold')} another value`,
  };
}

/** The kind of a column type, so that a widening (integer → bigint, varchar → text) is not a risk. */
function typeFamily(type: string): string {
  const base = type.toLowerCase().replace(/\(.*$/, '').trim();
  for (const [family, names] of Object.entries(TYPE_FAMILIES)) if (names.includes(base)) return family;
  return base;
}

const TYPE_FAMILIES: Record<string, readonly string[]> = {
  text: ['text', 'varchar', 'character varying', 'char', 'character', 'clob'],
  int: ['int', 'integer', 'int4', 'smallint', 'int2', 'tinyint', 'mediumint'],
  bigint: ['bigint', 'int8'],
  float: ['real', 'float', 'float4', 'float8', 'double', 'double precision'],
  decimal: ['numeric', 'decimal'],
  bool: ['bool', 'boolean'],
  date: ['date'],
  datetime: ['datetime', 'timestamp', 'timestamptz', 'timestamp with time zone', 'timestamp without time zone'],
  json: ['json', 'jsonb'],
  uuid: ['uuid'],
};

/** Type changes every value survives (its length or precision is checked on its own). */
const WIDER: Record<string, readonly string[]> = {
  int: ['bigint', 'float', 'decimal', 'text'],
  bigint: ['decimal', 'text'],
  float: ['text'],
  decimal: ['text'],
  bool: ['text'],
  date: ['datetime', 'text'],
  datetime: ['text'],
  uuid: ['text'],
  json: ['text'],
};

/**
 * Drops written in the migrations' SQL (`drop table`, `alter table … drop column`). SQLite alters a column by copying the table into `<table>__temp_alter`
 * and dropping the original: that drop loses only the columns the copy leaves out, and the copy
 * refuses rows that break the new table's NOT NULL and enum constraints.
 */
function fromSql(current: DatabaseSchema, target: DatabaseSchema, sources: readonly string[]): Candidate[] {
  // Identifiers as bare words: quotes (`"`, backticks, escaped backticks in a template literal) removed.
  const sql = sources.map((source) => source.replace(/\\?[`"]/g, '').toLowerCase()).join(';\n');
  const alters = [...sql.matchAll(/alter table ([\w.]+) ([^;]*)/g)].map(([, table, body]) => ({
    table: table!,
    body: body!,
  }));
  const added = new Map<string, string[]>();
  for (const { table, body } of alters) {
    for (const [, column] of body.matchAll(/add column (?:if not exists )?(\w+)/g))
      added.set(table, [...(added.get(table) ?? []), column!]);
  }
  const out: Candidate[] = [];
  for (const { table: name, body } of alters) {
    const table = current.getTable(name) ?? { name };
    for (const [, column] of body.matchAll(/drop column (?:if exists )?(\w+)/g))
      out.push(dropped(table, column!, added.get(name) ?? []));
  }
  const copies = new Map<string, string[]>();
  for (const [, copy, columns, from] of sql.matchAll(
    /insert into (\w+)__temp_alter(?: \([^)]*\))? select (.+?) from (\w+)/g,
  )) {
    if (copy === from)
      copies.set(
        from!,
        columns!.split(',').map((c) => c.trim()),
      );
  }
  for (const [, name] of sql.matchAll(/drop table (?:if exists )?([\w.]+)/g)) {
    const kept = copies.get(name!);
    // Looked up without the tables the schema generator skips: a drop of one of those loses data too.
    if (!kept) {
      out.push({
        table: current.getTable(name!) ?? { name: name! },
        change: 'table dropped',
        rows: (n) => plural(n, 'row', 'rows'),
      });
      continue;
    }
    const table = current.getTable(name!);
    if (!table) continue;
    for (const column of table.getColumns())
      if (!kept.includes(column.name.toLowerCase())) out.push(dropped(table, column.name, []));
    for (const column of target.getTable(name!)?.getColumns() ?? []) {
      if (!table.getColumn(column.name)) continue;
      if (!column.nullable) out.push(becomesNotNull(table, column.name));
      if (column.enumItems?.length) out.push(onlyAllows(table, column.name, column.enumItems));
    }
  }
  return out;
}

/**
 * The rows at risk. A table or column the database does not have (yet: a pending migration creates it
 * before another drops it) holds nothing, so a failing count is 0.
 */
async function countRows(connection: AbstractSqlConnection, candidate: Candidate): Promise<number> {
  const { table } = candidate;
  let query = connection.getKnex()(table.name);
  if (table.schema) query = query.withSchema(table.schema);
  query = query.count({ n: '*' });
  candidate.where?.(query as unknown as CountQuery);
  try {
    const [row] = (await query) as { n: number | string }[];
    return Number(row?.n ?? 0);
  } catch {
    return 0;
  }
}
