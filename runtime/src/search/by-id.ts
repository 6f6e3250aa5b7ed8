import type { CoreContext } from '../context/context.js';
import type { Database } from '../db/database.js';
import { coerceValue } from '../model/codecs.js';
import { describeValue, invalid } from '../model/issues.js';
import { qualified } from './joins.js';
import { limitsKey, type SearchLimits } from './limits.js';
import type { ColumnInfo, ModelInfo } from '../model/model-info.js';
import { analyzeIncludes, type IncludeRef } from './request-shape.js';
import type { SelectedColumn } from './include-planner.js';
import { materializeRows, materializeRowsSync } from './row-loader.js';
import type { ScopeRequest } from './row-scope.js';
import { type CompiledShape, compiledShape, restrictionKey, type ShapeUse } from './shape-compiler.js';
import { bucketSize, padValues, placeholders } from './sql-text.js';
import { bindParams, type LeafSources } from './where-binder.js';

const INTEGER_TEXT = /^-?\d{1,15}$/;
const NO_HANDLERS: ReadonlyMap<string, never> = new Map<string, never>();

/**
 * A primary-key value as the database wants it. Route parameters arrive as strings, so an integer key
 * also accepts a string of digits. Throws ValidationError at `path` — an id that cannot exist never
 * reaches the database (on PostgreSQL an invalid uuid would be a server error).
 */
export function coerceId(
  pk: ColumnInfo,
  id: unknown,
  path: string,
  db: Database,
  limits: Readonly<SearchLimits>,
): unknown {
  if (pk.kind === 'number') {
    const n = typeof id === 'string' && INTEGER_TEXT.test(id) ? Number(id) : id;
    // Through coerceValue for the column's range: PostgreSQL fails on an id its column cannot hold.
    if (typeof n === 'number' && Number.isSafeInteger(n))
      return coerceValue(pk, n, path, db.dialect, limits.maxStringLength, false);
    throw invalid(path, `expected an integer id, received ${describeValue(id)}`, 'invalid_value');
  }
  if (pk.kind === 'string' && (typeof id !== 'string' || id === '')) {
    throw invalid(path, `expected a non-empty string id, received ${describeValue(id)}`, 'invalid_value');
  }
  return coerceValue(pk, id, path, db.dialect, limits.maxStringLength, false);
}

/** Comparable form of a key: uuids compare case-insensitively (PostgreSQL prints them lowercase). */
function keyString(pk: ColumnInfo, value: unknown): string {
  const text = String(value);
  return pk.kind === 'uuid' ? text.toLowerCase() : text;
}

/** Ids per statement. */
const CHUNK = 500;

/**
 * Columns a caller reads with each row in the same statement, outside the row's output: a record's
 * stored state for its ETag (`RecordTags.alongRow`), so GET sends one statement, not two, and the tag
 * and the row come from the same snapshot.
 */
export interface RowExtras {
  /** Tells one set of extra columns from another in the statement cache. */
  readonly key: string;
  /**
   * The select-list items to add, on the root table's `alias`, under aliases no output key can take;
   * `selected` are the root's columns the statement selects already, which need not be read twice.
   */
  select(alias: string, selected: readonly SelectedColumn[]): string;
  /** Receives each raw row and the output object made of it. */
  attach(
    raw: Readonly<Record<string, unknown>>,
    out: Record<string, unknown>,
    selected: readonly SelectedColumn[],
  ): void;
}

/**
 * One row by primary key, or null: `readByIds` for a single id, without its bookkeeping, and without
 * a promise when the read is synchronous (`Database.selectSync`) and the row needs no loader: GET by id
 * is the hottest read. With `scope`, a row outside the caller's scope is null as a missing one is.
 */
export function readById(
  db: Database,
  info: ModelInfo,
  id: unknown,
  include: unknown,
  ctx: CoreContext,
  limits: Readonly<SearchLimits>,
  scope?: ScopeRequest,
  extras?: RowExtras,
): Record<string, unknown> | null | Promise<Record<string, unknown> | null> {
  const refs = analyzeIncludes(include, 'include', limits);
  const value = coerceId(info.pk, id, 'id', db, limits);
  const restricted = ctx.restrictedFields;
  const { shape, sources } = byIdShape(db, info, refs, restricted, limits, scope);
  const sql = byIdStatement(shape, info, 1, extras);
  const where = shape.where;
  const params =
    shape.fromSlots || !where.empty
      ? [
          ...(shape.fromSlots ? bindParams(shape.fromSlots, sources) : []),
          value,
          ...(where.empty ? [] : bindParams(where.pieces, sources)),
        ]
      : [value];
  const rows = db.selectSync<Record<string, unknown>>(sql, params);
  if (rows) return oneRow(rows, db, shape, limits, sources, extras);
  return db
    .select<Record<string, unknown>>(sql, params)
    .then((read) => oneRow(read, db, shape, limits, sources, extras));
}

/** The output object of a by-id read's rows (none or one), with its extras attached. */
function oneRow(
  rows: readonly Record<string, unknown>[],
  db: Database,
  shape: CompiledShape,
  limits: Readonly<SearchLimits>,
  sources: LeafSources,
  extras: RowExtras | undefined,
): Record<string, unknown> | null | Promise<Record<string, unknown> | null> {
  const raw = rows[0];
  if (raw === undefined) return null;
  const items = materializeRowsSync(shape.plan, rows);
  if (items) return attached(raw, items[0]!, shape, extras);
  return materializeRows(db, shape.plan, rows, limits, sources).then((all) => attached(raw, all[0]!, shape, extras));
}

function attached(
  raw: Readonly<Record<string, unknown>>,
  item: Record<string, unknown>,
  shape: CompiledShape,
  extras: RowExtras | undefined,
): Record<string, unknown> {
  extras?.attach(raw, item, shape.plan.columns);
  return item;
}

/**
 * The compiled shape of a read by id, kept per includes, restrictions and limits (and row scopes).
 * Compiling it checks the includes, even when there is nothing to read.
 */
function byIdShape(
  db: Database,
  info: ModelInfo,
  refs: readonly IncludeRef[],
  restricted: ReadonlySet<string>,
  limits: Readonly<SearchLimits>,
  scope: ScopeRequest | undefined,
): ShapeUse {
  const paths = refs.length === 0 ? '[]' : JSON.stringify(refs.map((r) => r.path));
  return compiledShape(`B${paths}|${restrictionKey(restricted)}|${limitsKey(limits)}`, {
    db,
    info,
    restricted,
    limits,
    handlers: NO_HANDLERS,
    filters: [],
    leaves: [],
    sort: [],
    include: refs,
    scope,
  });
}

/** `<shape's select> where <pk> = ?` (or `in (…)` for `size` ids), with the row scope and the extras, kept in the shape. */
function byIdStatement(shape: CompiledShape, info: ModelInfo, size: number, extras: RowExtras | undefined): string {
  const mode = extras ? `id${size}|${extras.key}` : `id${size}`;
  let sql = shape.statements.get(mode);
  if (sql === undefined) {
    const pk = qualified(shape.rootAlias, info.pk.quoted);
    const added = extras?.select(shape.rootAlias, shape.plan.columns);
    const from = added ? `select ${added}, ${shape.from.slice('select '.length)}` : shape.from;
    sql = `${from} where ${pk} ${size === 1 ? '= ?' : `in ${placeholders(size)}`}`;
    // The row scope: a hidden row is left out exactly as a missing one.
    if (!shape.where.empty) sql += ` and (${shape.where.sql})`;
    shape.statements.set(mode, sql);
  }
  return sql;
}

/**
 * Rows by primary key, in the order of `ids` (first occurrence; duplicates collapse; missing ids are
 * left out). One statement per 500 ids, plus one per to-many include. All ids are checked first.
 * With `scope`, a row outside the caller's scope is left out as a missing one is.
 */
export async function readByIds(
  db: Database,
  info: ModelInfo,
  ids: readonly unknown[],
  include: unknown,
  ctx: CoreContext,
  limits: Readonly<SearchLimits>,
  scope?: ScopeRequest,
): Promise<Record<string, unknown>[]> {
  const refs = analyzeIncludes(include, 'include', limits);
  const wanted = new Map<string, unknown>();
  ids.forEach((id, i) => {
    const value = coerceId(info.pk, id, `ids[${i}]`, db, limits);
    const key = keyString(info.pk, value);
    if (!wanted.has(key)) wanted.set(key, value);
  });
  const restricted = ctx.restrictedFields;
  const { shape, sources } = byIdShape(db, info, refs, restricted, limits, scope);
  if (wanted.size === 0) return [];
  const where = shape.where;
  const fromParams = shape.fromSlots ? bindParams(shape.fromSlots, sources) : [];
  const scopeParams = where.empty ? [] : bindParams(where.pieces, sources);

  const values = [...wanted.values()];
  const rows: Record<string, unknown>[] = [];
  for (let start = 0; start < values.length; start += CHUNK) {
    const chunk = values.slice(start, start + CHUNK);
    const size = bucketSize(chunk.length);
    const sql = byIdStatement(shape, info, size, undefined);
    const ids = padValues(chunk, size);
    const params = fromParams.length > 0 || scopeParams.length > 0 ? [...fromParams, ...ids, ...scopeParams] : ids;
    rows.push(
      ...(db.selectSync<Record<string, unknown>>(sql, params) ??
        (await db.select<Record<string, unknown>>(sql, params))),
    );
  }
  const items = await materializeRows(db, shape.plan, rows, limits, sources);
  const byKey = new Map<string, Record<string, unknown>>();
  for (const [i, row] of rows.entries()) byKey.set(keyString(info.pk, row[shape.plan.pkAlias]), items[i]!);
  const out: Record<string, unknown>[] = [];
  for (const key of wanted.keys()) {
    const item = byKey.get(key);
    if (item) out.push(item);
  }
  return out;
}
