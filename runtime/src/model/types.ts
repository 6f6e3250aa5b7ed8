import type { Collection, Reference } from '@mikro-orm/core';

type ScalarKeys<M> = {
  [K in keyof M]-?: K extends symbol
    ? never
    : NonNullable<M[K]> extends Collection<object> | Reference<object> | ((...args: never[]) => unknown)
      ? never
      : K;
}[keyof M];

/**
 * A record as Core's read path returns it: the model's own columns under their wire names, each to-one
 * relation's foreign key as `<relation>_id`, and included relations under the relation's name. Plain
 * data — no entity, no identity map — so it is cheap to produce and safe to serialize.
 */
export type Row<M> = Pick<M, ScalarKeys<M>> & Record<string, unknown>;

/** Pagination input shared by list and search. `offset` and `cursor` are mutually exclusive. */
export interface PageParams {
  limit?: number;
  offset?: number;
  cursor?: string;
}

/** One page of rows and what the envelope's `meta` and the `Link` header need. */
export interface Page<T> {
  items: T[];
  limit: number;
  /** The offset used; null in cursor mode. */
  offset: number | null;
  /** Opaque cursor for the page after this one; null when there is none. */
  nextCursor: string | null;
  hasMore: boolean;
}
