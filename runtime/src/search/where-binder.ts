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
 * The leaves a compiled statement binds, by source: the request's first, then those of each row scope
 * the statement uses (see `BindSlot.source`).
 */
export type LeafSources = readonly (readonly LeafRef[])[];

/**
 * Binds this request's values to a compiled WHERE: each slot checks and converts its leaf's value
 * (throwing ValidationError), and handlers produce their fragment. The SQL text is reused as is
 * unless a handler is involved.
 */
export function bindWhere(
  where: CompiledWhere,
  sources: LeafSources,
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
    if (piece.kind === 'bind') {
      const leaf = sources[piece.source]![piece.leaf]!;
      for (const v of piece.bind(leaf.node.value, `${leaf.path}.value`)) params.push(v);
      if (text !== null) text += piece.text;
      continue;
    }
    const leaf = sources[0]![piece.leaf]!;
    const path = `${leaf.path}.value`;
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

/** The parameters of pieces that hold bind slots only (scoped joins, a loader's scope); none when there are none. */
export function bindParams(pieces: readonly WherePiece[], sources: LeafSources): readonly unknown[] {
  let params: unknown[] | undefined;
  for (const piece of pieces) {
    if (typeof piece === 'string') continue;
    if (piece.kind !== 'bind') throw new Error('bindParams: a custom handler cannot appear here');
    const leaf = sources[piece.source]![piece.leaf]!;
    params ??= [];
    for (const v of piece.bind(leaf.node.value, `${leaf.path}.value`)) params.push(v);
  }
  return params ?? NO_PARAMS;
}

const NO_PARAMS: readonly unknown[] = Object.freeze([]);

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
