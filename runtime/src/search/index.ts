export { BaseQuery, type BaseQueryInit, type KeysetBinding } from './base-query.js';
export { CursorCodec, type CursorPayload } from './cursor.js';
export type { FieldHandler, FieldHandlerContext, SqlFragment } from './filter-compiler.js';
export type { IssueReason } from '../model/issues.js';
export { DEFAULT_SEARCH_LIMITS, resolveSearchLimits, type SearchLimits } from './limits.js';
export { ModelReader, type ListParams, type ModelReaderOptions, type ReadOptions } from './model-reader.js';
export { registerRowScope, type RowAction, type RowScopeHook } from './row-scope.js';
export { SearchEngine, type SearchEngineOptions } from './search-engine.js';
export {
  FILTER_OPERATORS,
  FilterLeafSchema,
  FilterNodeSchema,
  GROUP_OPERATORS,
  SORT_ORDERS,
  SearchRequestSchema,
  SortRuleSchema,
  type FilterGroup,
  type FilterLeaf,
  type FilterNode,
  type FilterOperator,
  type GroupOperator,
  type SearchRequest,
  type SortOrder,
  type SortRule,
} from './search-request.js';
