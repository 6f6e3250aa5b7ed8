import type { CoreContext } from '../context/context.js';
import type { SchemaInfo } from './schema-info.js';
import type { ParseMode } from './types.js';

/**
 * Fields a caller's row scope binds to a token claim (a top-level `{ field, op: 'eq', value: { $claim } }`):
 * a create takes their value from the token and a replace keeps the stored one, so a body need not
 * carry them even where the schema requires them. `key` identifies `names` in cache keys.
 */
export interface BoundFields {
  readonly names: ReadonlySet<string>;
  readonly key: string;
}

/**
 * The fields of the rows of `table` that `ctx`'s scope binds for `action` (`create` for a POST body,
 * `update` for a PUT body), or undefined when none. Equal sets should be the same object: what is
 * derived from one is cached by identity.
 */
export type BoundFieldsSource = (
  ctx: CoreContext,
  table: string,
  action: 'create' | 'update',
) => BoundFields | undefined;

// Row scopes are compiled against the models in the search layer, above this one, which installs the
// real source; until then (and for schemas used without it) nothing is bound.
let source: BoundFieldsSource = () => undefined;

/** @internal Installed by the search layer (`search/row-scope.ts`). */
export function setBoundFieldsSource(fn: BoundFieldsSource): void {
  source = fn;
}

/** Per schema, the part of a bound set that changes it: the required fields it names (null: none). */
const relevant = new WeakMap<SchemaInfo, WeakMap<BoundFields, BoundFields | null>>();

/**
 * The required fields of `info` that `ctx` need not send in a `mode` body because its row scope binds
 * them; undefined when none (then everything compiled for the schema is what any other caller gets).
 */
export function boundRequiredFields(info: SchemaInfo, ctx: CoreContext, mode: ParseMode): BoundFields | undefined {
  if (mode === 'patch') return undefined;
  const bound = source(ctx, info.namespace, mode === 'create' ? 'create' : 'update');
  if (bound === undefined) return undefined;
  let perSchema = relevant.get(info);
  if (!perSchema) relevant.set(info, (perSchema = new WeakMap()));
  let found = perSchema.get(bound);
  if (found === undefined) {
    const names = [...bound.names].filter((name) => info.required.has(name)).sort();
    found = names.length === 0 ? null : Object.freeze({ names: new Set(names), key: names.join(',') });
    perSchema.set(bound, found);
  }
  return found ?? undefined;
}

/** The cache key of an artifact compiled for `base` with `bound` fields made optional. */
export function withBoundKey(base: string, bound: BoundFields | undefined): string {
  return bound === undefined ? base : `${base}\u0000bound:${bound.key}`;
}
