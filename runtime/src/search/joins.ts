import type { Database } from '../db/database.js';
import type { ModelInfo, RelationInfo } from '../model/model-info.js';
import type { AliasAllocator } from './sql-text.js';

/** `alias.column`, with the column quoted for the dialect (aliases are generated, `[a-z]+\d+`). */
export function qualified(alias: string, quotedColumn: string): string {
  return `${alias}.${quotedColumn}`;
}

/**
 * The left joins of one statement (or of one `exists` subquery). A to-one chain is joined once per
 * path and reused by filters, sort keys and includes alike — a to-one join never multiplies rows.
 */
export class JoinGraph {
  readonly clauses: string[] = [];
  private readonly byPath = new Map<string, string>();

  constructor(
    private readonly db: Database,
    private readonly aliases: AliasAllocator,
    private readonly prefix: string,
  ) {}

  /** Joins each to-one relation of `relations` from `fromAlias`; returns the alias of the last target. */
  toOne(fromAlias: string, relations: readonly RelationInfo[]): string {
    let alias = fromAlias;
    for (const rel of relations) {
      // Keyed by (source alias, relation): the chain t0→project→owner and a nested include reach the same joins.
      const key = `${alias}.${rel.name}`;
      let next = this.byPath.get(key);
      if (!next) {
        next = this.aliases.next(this.prefix);
        this.byPath.set(key, next);
        this.clauses.push(`left join ${rel.target().quotedTable} ${next} on ${this.condition(rel, alias, next)}`);
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
