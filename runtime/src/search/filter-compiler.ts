import { isPathRestricted } from '../context/restrictions.js';
import type { Database, Dialect } from '../db/database.js';
import { coerceValue, type ValueKind } from '../model/codecs.js';
import { describeValue, forbidden, invalid } from '../model/issues.js';
import { type JoinBudget, JoinGraph, type JoinScoper, qualified, toManySource } from './joins.js';
import type { SearchLimits } from './limits.js';
import type { ColumnInfo, ModelInfo, RelationInfo } from '../model/model-info.js';
import { resolveFieldPath } from '../model/paths.js';
import { valueTag, type LeafRef } from './request-shape.js';
import type { FilterNode, FilterOperator } from './search-request.js';
import {
  type AliasAllocator,
  bucketSize,
  escapeGlob,
  escapeLike,
  hasDanglingEscape,
  likeToGlob,
  padValues,
  placeholders,
} from './sql-text.js';

/** A custom filter field's SQL: a boolean expression with `?` placeholders and their values. */
export interface SqlFragment {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** What a custom field handler receives for one filter leaf. */
export interface FieldHandlerContext {
  readonly field: string;
  readonly op: FilterOperator;
  readonly value: unknown;
  /** JSON path of the leaf's value, for the handler's own ValidationErrors. */
  readonly path: string;
  readonly dialect: Dialect;
  /** Alias of the searched model's table in the statement. */
  readonly alias: string;
  /** The qualified, quoted column of a field of the searched model (`t0."title"`). */
  column(field: string): string;
  quote(identifier: string): string;
}

/** Produces the SQL of a custom filter field (e.g. full-text search). Runs once per leaf per request. */
export type FieldHandler = (ctx: FieldHandlerContext) => SqlFragment;

/**
 * A placeholder run (`?` or a bucketed `(?, ?, …)`) and how to turn the leaf's value into its parameters.
 * `source` says whose leaf it is: 0 the request's, n > 0 the n-th row scope a compiled statement uses
 * (see `ShapeScoping`), whose values come from the caller's context.
 */
export interface BindSlot {
  readonly kind: 'bind';
  readonly source: number;
  readonly leaf: number;
  readonly text: string;
  readonly bind: (value: unknown, path: string) => unknown[];
}

/** A custom handler's fragment, produced per request. */
export interface HandlerSlot {
  readonly kind: 'handler';
  readonly leaf: number;
  readonly field: string;
  readonly handler: FieldHandler;
}

export type WherePiece = string | BindSlot | HandlerSlot;

/** What the filter compiler needs about the statement being built. */
export interface FilterScope {
  readonly db: Database;
  readonly root: ModelInfo;
  readonly rootAlias: string;
  readonly aliases: AliasAllocator;
  readonly joins: JoinGraph;
  readonly restricted: ReadonlySet<string>;
  readonly limits: Readonly<SearchLimits>;
  readonly handlers: ReadonlyMap<string, FieldHandler>;
  /** The row scopes of related tables, for a request's relation paths; absent when none applies. */
  readonly scoping?: RelatedScoping;
  /** Counts the tables the request's relation paths join (`maxJoins`); absent for row filters, which the server writes. */
  readonly budget?: JoinBudget;
  /** Whose leaves these are (see `BindSlot.source`); 0, the request's, by default. */
  readonly source?: number;
  /**
   * Compiling a row filter: its fields are not subject to the caller's restrictions, and its relation
   * paths read the related rows as stored (no related table's scope applies inside another's filter).
   */
  readonly raw?: boolean;
}

/** How a request's relation paths reach only the related rows the caller may see. */
export interface RelatedScoping {
  /** The condition confining rows of `target` read at `alias` (bind slots included), or null: every row. */
  related(target: ModelInfo, alias: string, aliases: AliasAllocator): WherePiece[] | null;
  /** Whether some rows of `target` may be hidden: `project.id` then goes through the join, not the key. */
  scoped(target: ModelInfo): boolean;
}

const NOTHING_RESTRICTED: ReadonlySet<string> = new Set();

const ORDERED: ReadonlySet<ValueKind> = new Set(['string', 'uuid', 'number', 'bigint', 'decimal', 'date', 'datetime']);
const EQUATABLE: ReadonlySet<ValueKind> = new Set([...ORDERED, 'boolean']);
const STRING_OPS: ReadonlySet<FilterOperator> = new Set(['like', 'ilike', 'contains', 'startswith', 'endswith']);

/**
 * Compiles the top-level filters (an implicit `and`) into WHERE pieces. Leaves are numbered in the
 * same depth-first order as `analyzeRequest` collected them, so slot `leaf` indexes `leaves`.
 * Returns an empty list when there is nothing to filter.
 */
export function compileFilters(
  scope: FilterScope,
  filters: readonly FilterNode[],
  leaves: readonly LeafRef[],
): WherePiece[] {
  const counter = { next: 0 };
  const out: WherePiece[] = [];
  filters.forEach((node, i) => {
    if (i > 0) out.push(' and ');
    compileNode(scope, node, leaves, counter, out);
  });
  return out;
}

function compileNode(
  scope: FilterScope,
  node: FilterNode,
  leaves: readonly LeafRef[],
  counter: { next: number },
  out: WherePiece[],
): void {
  if (node.op === 'and' || node.op === 'or') {
    const items = (node as { items: FilterNode[] }).items;
    if (items.length === 0) {
      // An empty `and` is true, an empty `or` is false — the identities of each operator.
      out.push(node.op === 'and' ? '1 = 1' : '1 = 0');
      return;
    }
    out.push('(');
    items.forEach((item, i) => {
      if (i > 0) out.push(` ${node.op} `);
      compileNode(scope, item, leaves, counter, out);
    });
    out.push(')');
    return;
  }
  const index = counter.next++;
  compileLeaf(scope, leaves[index]!, index, out);
}

function compileLeaf(scope: FilterScope, ref: LeafRef, index: number, out: WherePiece[]): void {
  const { field } = ref.node;
  const handler = scope.raw ? undefined : scope.handlers.get(field);
  if (handler) {
    if (isPathRestricted(scope.restricted, [{ namespace: scope.root.namespace, name: field }]))
      throw forbidden(`${ref.path}.field`, field);
    out.push('(', { kind: 'handler', leaf: index, field, handler }, ')');
    return;
  }
  let resolved = resolveFieldPath(
    scope.root,
    field,
    `${ref.path}.field`,
    scope.limits.maxPathDepth,
    scope.raw ? NOTHING_RESTRICTED : scope.restricted,
  );
  // `project.id` names the project, not the key: a hidden project must not match through its key.
  const joined = resolved.joined;
  if (joined && scope.scoping?.scoped(joined.owner)) resolved = joined;
  const condition = leafCondition(scope, resolved.column, ref, index);
  const tables = emitOnPath(scope, scope.joins, scope.rootAlias, scope.root, resolved.relations, 0, out, condition, 0);
  scope.budget?.take(tables, ref.path);
}

/**
 * Places a condition at the end of a relation path. To-one hops are left-joined in the current scope;
 * a to-many hop opens `exists (select 1 …)` so a parent row is never duplicated, and the rest of the
 * path continues inside it. The meaning is "some related row matches" — each leaf gets its own exists.
 *
 * Returns the tables it adds that count against `maxJoins` (see `JoinBudget`): the new joins of the
 * statement's top level, and every table of a subquery opened there (`depth` 0), its joins and its
 * related row scope's included; a subquery nested in another one is not counted.
 */
function emitOnPath(
  scope: FilterScope,
  graph: JoinGraph,
  alias: string,
  model: ModelInfo,
  relations: readonly RelationInfo[],
  start: number,
  out: WherePiece[],
  condition: (alias: string) => WherePiece[],
  depth: number,
): number {
  let end = start;
  let owner = model;
  while (end < relations.length && !relations[end]!.toMany) owner = relations[end++]!.target();
  // Every table of the statement gets an alias: the aliases handed out are the tables added.
  const aliases = scope.aliases;
  let mark = aliases.count;
  const joined = graph.toOne(alias, relations.slice(start, end), scope.raw);
  let tables = depth <= 1 ? aliases.count - mark : 0;
  if (end === relations.length) {
    out.push(...condition(joined));
    return tables;
  }
  const rel = relations[end]!;
  mark = aliases.count;
  const source = toManySource(scope.db, rel, owner, aliases, 'e');
  const scoping = scope.raw ? undefined : scope.scoping;
  const inner = new JoinGraph(scope.db, aliases, 'e', scoping && scoperOf(scoping));
  const body: WherePiece[] = [];
  if (depth === 0) tables += aliases.count - mark;
  tables += emitOnPath(scope, inner, source.alias, rel.target(), relations, end + 1, body, condition, depth + 1);
  const link = `${source.parentKey} = ${qualified(joined, scope.db.quote(source.sourceColumn))}`;
  // Only the related rows the caller may see can make "some related row matches" true.
  mark = aliases.count;
  const visible = scoping?.related(rel.target(), source.alias, aliases);
  if (depth === 0) tables += aliases.count - mark;
  out.push(`exists (select 1 from ${source.from}`, ...inner.pieces, ` where ${link} and `);
  if (visible) out.push('(', ...visible, ') and ');
  out.push(...body, ')');
  return tables;
}

/** The join scoper of a statement whose relation paths are scoped. */
export function scoperOf(scoping: RelatedScoping): JoinScoper {
  return (target, alias, aliases) => scoping.related(target, alias, aliases);
}

/** The SQL of one leaf against a column, as a function of the alias the column is read from. */
function leafCondition(
  scope: FilterScope,
  column: ColumnInfo,
  ref: LeafRef,
  index: number,
): (alias: string) => WherePiece[] {
  const { op, value, field } = ref.node;
  const { db, limits } = scope;
  const dialect = db.dialect;
  const valuePath = `${ref.path}.value`;
  const tag = valueTag(op, value);
  const col = (alias: string) => qualified(alias, column.quoted);
  const unsupported = (what: string) =>
    invalid(
      `${ref.path}.op`,
      `'${op}' does not apply to ${field} (${column.kind} column): ${what}`,
      'invalid_operator',
    );
  const wrongValue = (expected: string) =>
    invalid(valuePath, `'${op}' on ${field} expects ${expected}, received ${describeValue(value)}`, 'invalid_value');
  const source = scope.source ?? 0;
  const scalar = (checkEnum: boolean): BindSlot => ({
    kind: 'bind',
    source,
    leaf: index,
    text: '?',
    bind: (v, p) => [coerceValue(column, v, p, dialect, limits.maxStringLength, checkEnum)],
  });
  const requireScalar = () => {
    if (tag === 'u') throw wrongValue('a value');
    if (tag === 'o') throw wrongValue('a JSON scalar (objects are not values)');
    if (tag.startsWith('a')) throw wrongValue(`a single value (use 'in' for a list)`);
  };

  switch (op) {
    case 'isnull':
      if (tag !== 'T' && tag !== 'F') throw wrongValue('true or false');
      return (a) => [`${col(a)} ${tag === 'T' ? 'is null' : 'is not null'}`];
    case 'eq':
    case 'ne': {
      // `eq null` means "is null" and `ne null` "is not null": SQL's `= null` would match nothing.
      if (tag === 'n') return (a) => [`${col(a)} ${op === 'eq' ? 'is null' : 'is not null'}`];
      if (!EQUATABLE.has(column.kind)) throw unsupported('only isnull does');
      requireScalar();
      const slot = scalar(true);
      if (op === 'eq') return (a) => [`${col(a)} = `, slot];
      // `ne` keeps rows whose column is null ("not bob" includes "nobody"), as `is distinct from` would.
      return column.nullable
        ? (a) => [`(${col(a)} <> `, slot, ` or ${col(a)} is null)`]
        : (a) => [`${col(a)} <> `, slot];
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (!ORDERED.has(column.kind)) throw unsupported('use eq, ne, in, nin or isnull');
      if (tag === 'n') throw wrongValue('a value (null has no order; use isnull)');
      requireScalar();
      const sign = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op];
      const slot = scalar(false);
      return (a) => [`${col(a)} ${sign} `, slot];
    }
    case 'in':
    case 'nin': {
      if (!EQUATABLE.has(column.kind)) throw unsupported('only isnull does');
      if (!tag.startsWith('a')) throw wrongValue('an array of values');
      const size = Number(tag.slice(1));
      // In an empty list nothing is, and everything is not.
      if (size === 0) return () => [op === 'in' ? '1 = 0' : '1 = 1'];
      const slot: BindSlot = {
        kind: 'bind',
        source,
        leaf: index,
        text: placeholders(size),
        bind: (v, p) => {
          const list = (v as unknown[]).map((item, i) => {
            if (item === null || typeof item === 'object') {
              throw invalid(
                `${p}[${i}]`,
                `expected a scalar, received ${describeValue(item)} (use isnull for nulls)`,
                'invalid_value',
              );
            }
            return coerceValue(column, item, `${p}[${i}]`, dialect, limits.maxStringLength, true);
          });
          return padValues(list, bucketSize(list.length));
        },
      };
      if (op === 'in') return (a) => [`${col(a)} in `, slot];
      return column.nullable
        ? (a) => [`(${col(a)} not in `, slot, ` or ${col(a)} is null)`]
        : (a) => [`${col(a)} not in `, slot];
    }
    default:
      return stringCondition(scope, column, ref, index, op, tag, col, unsupported, wrongValue);
  }
}

/**
 * String operators. `ilike` is a case-insensitive substring match (`lower(col) like lower(?)` on
 * PostgreSQL, `col like +?` on SQLite; the value's `%`, `_`, `\` escaped). `like` takes the caller's
 * own pattern (`%`, `_`, `\` escapes) and, with `contains` / `startswith` / `endswith`, is
 * case-sensitive on both databases: PostgreSQL's LIKE already is; on SQLite (whose LIKE ignores ASCII
 * case) the same pattern runs as GLOB.
 */
function stringCondition(
  scope: FilterScope,
  column: ColumnInfo,
  ref: LeafRef,
  index: number,
  op: FilterOperator,
  tag: string,
  col: (alias: string) => string,
  unsupported: (what: string) => Error,
  wrongValue: (expected: string) => Error,
): (alias: string) => WherePiece[] {
  if (!STRING_OPS.has(op)) throw invalid(`${ref.path}.op`, `unknown operator '${op}'`, 'unknown_operator');
  if (column.kind !== 'string') throw unsupported('string operators apply to text columns');
  if (tag !== 's') throw wrongValue('a string');
  const sqlite = scope.db.dialect === 'sqlite';
  const max = scope.limits.maxStringLength;
  const source = scope.source ?? 0;
  const text = (v: unknown, p: string): string => coerceValue(column, v, p, scope.db.dialect, max, false) as string;
  let bind: (v: unknown, p: string) => unknown[];
  switch (op) {
    case 'ilike': {
      bind = (v, p) => [`%${escapeLike(text(v, p))}%`];
      const slot: BindSlot = { kind: 'bind', source, leaf: index, text: '?', bind };
      // SQLite's LIKE already folds ASCII case, as its lower() does, so the column is compared as it
      // is stored. The unary plus keeps the pattern from being a bare parameter: with one, SQLite
      // weighs the LIKE index optimization and compiles the statement again each time the pattern
      // is bound, which a pattern that starts with `%` never benefits from.
      return sqlite
        ? (a) => [`${col(a)} like +`, slot, ` escape '\\'`]
        : (a) => [`lower(${col(a)}) like lower(`, slot, `) escape '\\'`];
    }
    case 'like':
      bind = (v, p) => {
        const pattern = text(v, p);
        if (hasDanglingEscape(pattern))
          throw invalid(
            p,
            'the pattern ends with a lone \\ that escapes nothing; write \\\\ for a backslash',
            'invalid_value',
          );
        return [sqlite ? likeToGlob(pattern) : pattern];
      };
      break;
    case 'contains':
      bind = (v, p) => [sqlite ? `*${escapeGlob(text(v, p))}*` : `%${escapeLike(text(v, p))}%`];
      break;
    case 'startswith':
      bind = (v, p) => [sqlite ? `${escapeGlob(text(v, p))}*` : `${escapeLike(text(v, p))}%`];
      break;
    default:
      bind = (v, p) => [sqlite ? `*${escapeGlob(text(v, p))}` : `%${escapeLike(text(v, p))}`];
  }
  const slot: BindSlot = { kind: 'bind', source, leaf: index, text: '?', bind };
  return sqlite ? (a) => [`${col(a)} glob `, slot] : (a) => [`${col(a)} like `, slot, ` escape '\\'`];
}
