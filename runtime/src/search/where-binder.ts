import type { Database } from '../db/database.js';
import type { FieldHandlerContext, WherePiece } from './filter-compiler.js';
import type { LeafRef } from './request-shape.js';
import { countPlaceholders } from './sql-text.js';

/** A compiled WHERE: its pieces, and the SQL text itself when no custom handler makes it per-request. */
export interface CompiledWhere {
  readonly pieces: readonly WherePiece[];
  /** Null when empty or when a handler produces part of the text per request. */
  readonly sql: string | null;
  readonly empty: boolean;
}

/** What a handler may ask about the statement: alias and columns of the root table. */
export interface HandlerEnv {
  readonly db: Database;
  readonly alias: string;
  column(field: string): string;
}

export function finishWhere(pieces: readonly WherePiece[]): CompiledWhere {
  if (pieces.length === 0) return { pieces, sql: null, empty: true };
  let sql = '';
  for (const p of pieces) {
    if (typeof p === 'string') sql += p;
    else if (p.kind === 'bind') sql += p.text;
    else return { pieces, sql: null, empty: false };
  }
  return { pieces, sql, empty: false };
}

/**
 * Binds this request's values to a compiled WHERE: each slot checks and converts its leaf's value
 * (throwing ValidationError), and handlers produce their fragment. The SQL text is reused as is
 * unless a handler is involved.
 */
export function bindWhere(
  where: CompiledWhere,
  leaves: readonly LeafRef[],
  env: HandlerEnv,
): { sql: string | null; params: unknown[] } {
  const params: unknown[] = [];
  if (where.empty) return { sql: null, params };
  let text = where.sql === null ? '' : null;
  for (const piece of where.pieces) {
    if (typeof piece === 'string') {
      if (text !== null) text += piece;
      continue;
    }
    const leaf = leaves[piece.leaf]!;
    const path = `${leaf.path}.value`;
    if (piece.kind === 'bind') {
      for (const v of piece.bind(leaf.node.value, path)) params.push(v);
      if (text !== null) text += piece.text;
      continue;
    }
    const fragment = piece.handler(handlerContext(env, piece.field, leaf, path));
    if (!fragment || typeof fragment.sql !== 'string' || !Array.isArray(fragment.params)) {
      throw new Error(`The search handler for '${piece.field}' must return { sql: string, params: unknown[] }`);
    }
    if (countPlaceholders(fragment.sql) !== fragment.params.length) {
      throw new Error(
        `The search handler for '${piece.field}' returned SQL with ${countPlaceholders(fragment.sql)} '?' placeholders but ${fragment.params.length} params; they must match (write no literal '?')`,
      );
    }
    params.push(...fragment.params);
    text += fragment.sql;
  }
  return { sql: where.sql ?? text, params };
}

function handlerContext(env: HandlerEnv, field: string, leaf: LeafRef, path: string): FieldHandlerContext {
  return {
    field,
    op: leaf.node.op,
    value: leaf.node.value,
    path,
    dialect: env.db.dialect,
    alias: env.alias,
    column: (name) => env.column(name),
    quote: (identifier) => env.db.quote(identifier),
  };
}
