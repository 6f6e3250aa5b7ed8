import type { Database } from '../db/database.js';
import type { RelatedScoping } from './filter-compiler.js';
import { invalid } from '../model/issues.js';
import type { JoinGraph } from './joins.js';
import { qualified } from './joins.js';
import type { SearchLimits } from './limits.js';
import type { ModelInfo } from '../model/model-info.js';
import { isColumnRestricted, resolveFieldPath } from '../model/paths.js';
import type { SortRule } from './search-request.js';

/** One key of the ORDER BY, and where its value is found in a fetched row (for the next cursor). */
export interface SortKey {
  /** Field as requested (`project.name`); the tiebreaker is the primary key's name. */
  readonly field: string;
  readonly desc: boolean;
  /** Left-joined columns count as nullable: the relation itself may be missing. */
  readonly nullable: boolean;
  /** Qualified column expression. */
  readonly expr: string;
  /** Name of the raw value in a fetched row. */
  readonly alias: string;
}

export interface CompiledSort {
  readonly keys: readonly SortKey[];
  /** Text after `order by`. */
  readonly orderBy: string;
  /** Extra select items for sort values not already selected (`j1."name" as "__s0"`). */
  readonly extraSelect: readonly string[];
  /** Canonical description, part of what a cursor is bound to. */
  readonly signature: string;
  /**
   * A key holds a value the caller may not see: the primary key, restricted for them, added as the
   * tiebreaker. Their cursors are then sealed (encrypted), not only signed (see `CursorCodec`).
   */
  readonly sealCursor: boolean;
}

export interface SortScope {
  readonly db: Database;
  readonly root: ModelInfo;
  readonly rootAlias: string;
  readonly joins: JoinGraph;
  readonly restricted: ReadonlySet<string>;
  readonly limits: Readonly<SearchLimits>;
  readonly scoping?: RelatedScoping;
}

/**
 * Resolves the sort rules and appends the primary key as a unique tiebreaker (so the order is total
 * and keyset pages never skip or repeat rows). NULL placement is made explicit and identical on both
 * databases — NULL sorts as the lowest value: first in `asc`, last in `desc` — which is SQLite's
 * default and has to be spelled out for PostgreSQL. Non-nullable keys carry no NULLS clause so an
 * index on them still serves the order.
 */
export function compileSort(scope: SortScope, rules: readonly Required<SortRule>[]): CompiledSort {
  const { db, root, rootAlias } = scope;
  const keys: SortKey[] = [];
  const extraSelect: string[] = [];
  const seen = new Set<string>();
  let unique = false;
  rules.forEach((rule, i) => {
    const path = `sort[${i}].field`;
    let resolved = resolveFieldPath(root, rule.field, path, scope.limits.maxPathDepth, scope.restricted);
    // A hidden related row sorts as a missing one: through the join, not by the key it leaves behind.
    if (resolved.joined && scope.scoping?.scoped(resolved.joined.owner)) resolved = resolved.joined;
    const toMany = resolved.relations.find((r) => r.toMany);
    if (toMany) {
      throw invalid(
        path,
        `'${rule.field}' goes through the to-many relation '${toMany.name}', which has no single value to sort by; sort on a column or a to-one path`,
        'invalid_sort',
      );
    }
    const { column } = resolved;
    if (column.kind === 'json' || column.kind === 'other') {
      throw invalid(path, `'${rule.field}' is a ${column.kind} column and has no order`, 'invalid_sort');
    }
    const alias = scope.joins.toOne(rootAlias, resolved.relations);
    const expr = qualified(alias, column.quoted);
    if (seen.has(expr))
      throw invalid(path, `'${rule.field}' is already a sort key; name each field once`, 'invalid_sort');
    seen.add(expr);
    let valueAlias = column.key;
    if (resolved.relations.length > 0) {
      valueAlias = `__s${extraSelect.length}`;
      extraSelect.push(`${expr} as ${db.quote(valueAlias)}`);
    }
    keys.push({
      field: rule.field,
      desc: rule.order === 'desc',
      nullable: column.nullable || resolved.relations.length > 0,
      expr,
      alias: valueAlias,
    });
    if (resolved.relations.length === 0 && column.primary) unique = true;
  });
  // Explicit keys passed resolveFieldPath, which refuses restricted fields; the tiebreaker did not.
  let sealCursor = false;
  if (!unique) {
    keys.push({
      field: root.pk.key,
      desc: false,
      nullable: false,
      expr: qualified(rootAlias, root.pk.quoted),
      alias: root.pk.key,
    });
    sealCursor = isColumnRestricted(scope.restricted, [], root.namespace, root.pk);
  }
  return {
    keys,
    orderBy: keys.map(orderTerm).join(', '),
    extraSelect,
    signature: keys.map((k) => `${k.field}:${k.desc ? 'desc' : 'asc'}`).join(','),
    sealCursor,
  };
}

function orderTerm(key: SortKey): string {
  const direction = key.desc ? 'desc' : 'asc';
  if (!key.nullable) return `${key.expr} ${direction}`;
  return `${key.expr} ${direction} ${key.desc ? 'nulls last' : 'nulls first'}`;
}
