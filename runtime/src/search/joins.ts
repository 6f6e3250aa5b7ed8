import type { Database } from '../db/database.js';
import { invalid } from '../model/issues.js';
import type { ModelInfo, RelationInfo } from '../model/model-info.js';
import type { WherePiece } from './filter-compiler.js';
import type { AliasAllocator } from './sql-text.js';

/** `alias.column`, with the column quoted for the dialect (aliases are generated, `[a-z]+\d+`). */
export function qualified(alias: string, quotedColumn: string): string {
  return `${alias}.${quotedColumn}`;
}

/**
 * What confines the rows of a joined table to those the caller may see: the condition on the table
 * read at `alias` (with bind slots), or null when every row is visible.
 */
export type JoinScoper = (target: ModelInfo, alias: string, aliases: AliasAllocator) => WherePiece[] | null;

/**
 * The left joins of one statement (or of one `exists` subquery). A to-one chain is joined once per
 * path and reused by filters, sort keys and includes alike — a to-one join never multiplies rows.
 *
 * With a scoper, a join reads only the related rows the caller may see (the condition is part of the
 * join's `on`), so a hidden related row reads as a missing one: null in an include, no match in a
 * filter, null in a sort. A row filter's own paths are joined `raw`, as the rows are stored.
 */
export class JoinGraph {
  /** The join clauses, in order: text and, where a join is scoped, the bind slots of its condition. */
  readonly pieces: WherePiece[] = [];
  private readonly byPath = new Map<string, string>();

  constructor(
    private readonly db: Database,
    private readonly aliases: AliasAllocator,
    private readonly prefix: string,
    private readonly scoper?: JoinScoper,
  ) {}

  /** True when nothing has been joined. */
  get empty(): boolean {
    return this.pieces.length === 0;
  }

  /**
   * Joins each to-one relation of `relations` from `fromAlias`; returns the alias of the last target.
   * `raw`: the joins ignore the scoper (a row filter's own relation paths).
   */
  toOne(fromAlias: string, relations: readonly RelationInfo[], raw = false): string {
    let alias = fromAlias;
    for (const rel of relations) {
      // Keyed by (source alias, relation): the chain t0→project→owner and a nested include reach the same joins.
      const key = raw && this.scoper ? `${alias}.${rel.name}~raw` : `${alias}.${rel.name}`;
      let next = this.byPath.get(key);
      if (!next) {
        next = this.aliases.next(this.prefix);
        this.byPath.set(key, next);
        const target = rel.target();
        this.pieces.push(` left join ${target.quotedTable} ${next} on ${this.condition(rel, alias, next)}`);
        const scope = raw || !this.scoper ? null : this.scoper(target, next, this.aliases);
        if (scope) this.pieces.push(' and (', ...scope, ')');
      }
      alias = next;
    }
    return alias;
  }

  /** `target.key = source.key` for a to-one relation (local and remote keys read the same way). */
  private condition(rel: RelationInfo, fromAlias: string, toAlias: string): string {
    if (rel.join.type === 'pivot') throw new Error(`${rel.name} is to-many and cannot be joined as to-one`);
    return `${qualified(toAlias, this.db.quote(rel.join.targetColumn))} = ${qualified(fromAlias, this.db.quote(rel.join.sourceColumn))}`;
  }
}

/**
 * The tables a request's filters add to its statement, counted against `SearchLimits.maxJoins` (what
 * counts: `emitOnPath` in filter-compiler.ts). PostgreSQL pulls a filter's `exists` up into the
 * statement's own join search, whose planning time grows much faster than linearly with the tables
 * in it, so the count is capped while the statement is compiled, before any SQL is sent.
 */
export class JoinBudget {
  private used = 0;
  constructor(private readonly max: number) {}

  /** Takes `tables` more for the leaf at `path` (its JSON path); a ValidationError past the limit. */
  take(tables: number, path: string): void {
    if (tables === 0) return;
    this.used += tables;
    if (this.used > this.max) {
      throw invalid(
        `${path}.field`,
        `the filters' relation paths join more than ${this.max} tables (search limit maxJoins): a to-one path joins ` +
          'its tables once, but each filter through a to-many relation adds a subquery of its own; ' +
          'use fewer such filters or split the search',
        'too_many_joins',
      );
    }
  }
}

/** The text of pieces that hold no bind slot (raw joins); a programming error otherwise. */
export function plainText(pieces: readonly WherePiece[]): string {
  let text = '';
  for (const piece of pieces) {
    if (typeof piece !== 'string') throw new Error('plainText: these SQL pieces carry parameters');
    text += piece;
  }
  return text;
}

/**
 * The `from … where <link>` of a subquery over a to-many relation, correlated with `fromAlias`:
 * one-to-many reads the target table, many-to-many the pivot joined to the target.
 * Returns the target's alias and the expression holding the parent key.
 */
export function toManySource(
  db: Database,
  rel: RelationInfo,
  source: ModelInfo,
  aliases: AliasAllocator,
  prefix: string,
): { from: string; alias: string; parentKey: string; sourceColumn: string } {
  const target = rel.target();
  const alias = aliases.next(prefix);
  const join = rel.join;
  if (join.type === 'remote') {
    return {
      from: `${target.quotedTable} ${alias}`,
      alias,
      parentKey: qualified(alias, db.quote(join.targetColumn)),
      sourceColumn: join.sourceColumn,
    };
  }
  if (join.type === 'pivot') {
    const pivot = aliases.next('p');
    return {
      from: `${db.quote(join.table)} ${pivot} inner join ${target.quotedTable} ${alias} on ${qualified(alias, db.quote(join.targetColumn))} = ${qualified(pivot, db.quote(join.targetFk))}`,
      alias,
      parentKey: qualified(pivot, db.quote(join.sourceFk)),
      sourceColumn: join.sourceColumn,
    };
  }
  throw new Error(`${source.className}.${rel.name} is to-one; it has no to-many source`);
}
