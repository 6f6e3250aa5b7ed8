import { Type, type Static } from 'typebox';

/** Comparison operators of a filter leaf; nothing else ever reaches SQL. */
export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'nin',
  'like',
  'ilike',
  'contains',
  'startswith',
  'endswith',
  'isnull',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export const GROUP_OPERATORS = ['and', 'or'] as const;
export type GroupOperator = (typeof GROUP_OPERATORS)[number];

export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** `{ field, op, value }`: `field` is a column, a `<relation>_id` key, a dot-path or a registered handler name. */
export interface FilterLeaf {
  field: string;
  op: FilterOperator;
  value?: unknown;
}

/** `{ op: 'and' | 'or', items }`: a group is one depth level. */
export interface FilterGroup {
  op: GroupOperator;
  items: FilterNode[];
}

export type FilterNode = FilterLeaf | FilterGroup;

/** `order` defaults to `asc`. */
export interface SortRule {
  field: string;
  order?: SortOrder;
}

/** The body of `POST /<resource>/search` (also `ModelReader.search`'s argument). */
export interface SearchRequest {
  filters?: FilterNode[];
  include?: string[];
  sort?: SortRule[];
  limit?: number;
  offset?: number;
  cursor?: string;
}

export const FilterLeafSchema = Type.Object(
  {
    field: Type.String({
      minLength: 1,
      description: 'Column, `<relation>_id`, relation dot-path or custom handler name',
    }),
    op: Type.Enum(FILTER_OPERATORS),
    // Unknown on purpose: a typed union would let Ajv's type coercion rewrite the value (5 → "5").
    value: Type.Optional(
      Type.Unknown({ description: 'A JSON scalar; an array of scalars for in/nin; a boolean for isnull' }),
    ),
  },
  { title: 'FilterLeaf' },
);

/**
 * One node, recursive. No `additionalProperties: false` inside the union: with Fastify's default Ajv
 * (`removeAdditional`) a failed first branch would strip the keys the second branch needs.
 */
export const FilterNodeSchema = Type.Cyclic(
  {
    FilterNode: Type.Union([
      FilterLeafSchema,
      Type.Object(
        { op: Type.Enum(GROUP_OPERATORS), items: Type.Array(Type.Ref('FilterNode')) },
        { title: 'FilterGroup' },
      ),
    ]),
  },
  'FilterNode',
);

export const SortRuleSchema = Type.Object(
  {
    field: Type.String({ minLength: 1, description: 'Column or to-one relation dot-path' }),
    order: Type.Optional(Type.Enum(SORT_ORDERS, { default: 'asc' })),
  },
  { title: 'SortRule' },
);

/** Usable as a Fastify body schema (default Ajv or TypeBox's compiler). */
export const SearchRequestSchema = Type.Object(
  {
    filters: Type.Optional(Type.Array(FilterNodeSchema, { description: 'Combined with and' })),
    include: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { description: 'Relation paths to load, e.g. comments.author' }),
    ),
    sort: Type.Optional(Type.Array(SortRuleSchema)),
    limit: Type.Optional(Type.Integer({ minimum: 1 })),
    offset: Type.Optional(Type.Integer({ minimum: 0 })),
    cursor: Type.Optional(Type.String({ minLength: 1, description: 'Opaque next_cursor of a previous page' })),
  },
  { title: 'SearchRequest', additionalProperties: false },
);

// The hand-written types above are the documented ones; keep them interchangeable with the schema's.
type SchemaRequest = Static<typeof SearchRequestSchema>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesTypes: Same<SchemaRequest, SearchRequest> = true;
void schemaMatchesTypes;
