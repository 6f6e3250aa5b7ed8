/**
 * @core/runtime: what a generated Core app and its owner import. Every export is listed by name, so
 * the surface is a decision: internals (the database manager, the broker wiring, the error
 * handler's helpers…) stay inside the package. test/runtime/public-api.test.ts keeps a snapshot of
 * this list and of the `@core/runtime/cli` subpath.
 */

// errors
export {
  AppException,
  BadRequestError,
  ConflictError,
  ERROR_CODES,
  type ErrorCode,
  type ErrorDetail,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  pointerToPath,
  PreconditionFailedError,
  ServiceUnavailableError,
  UnauthenticatedError,
  ValidationError,
} from './errors.js';

// logging
export { CoreLogController } from './logging/log-controller.js';
export { type Logger, silentLogger } from './logging/logger.js';
export { RequestLogMiddleware } from './logging/request-log.js';
export { type CoreLoggerOptions, type LogLevel, setupLogging, type SetupLoggingOptions } from './logging/setup.js';

// settings
export type { EventsSettings } from './settings/events-settings.js';
export type { DatabaseSettings, ShutdownSettings } from './settings/lifecycle-settings.js';
export {
  type AuthSettings,
  loadSettings,
  type LoadSettingsOptions,
  type Settings,
  SettingsError,
} from './settings/settings.js';

// events
export {
  Dispatcher,
  type EventHandler,
  type EventTransport,
  type NamedSubscription,
  type SubscribeOptions,
} from './events/dispatcher.js';
export {
  domainEvent,
  type DomainEvent,
  type EntityChange,
  type EntityEvent,
  type EntityEventPayload,
} from './events/events.js';

// kernel
export {
  DependencyCycleError,
  DuplicatePluginError,
  InvalidPluginError,
  KernelError,
  MissingDependencyError,
  PluginSetupError,
  PluginStartupError,
} from './kernel/kernel-errors.js';
export { Kernel, type KernelOptions } from './kernel/kernel.js';
export { Plugin } from './kernel/plugin.js';

// container
export {
  CaptiveDependencyError,
  ContainerError,
  CycleError,
  MissingRegistrationError,
  RegistrationError,
  ScopeDisposedError,
  ScopeRequiredError,
} from './container/container-errors.js';
export { Container, container, type ScopeOptions, type ShortFormProvider } from './container/container.js';
export { Inject } from './container/inject.js';
export { Lifetime } from './container/lifetime.js';
export type {
  ClassProvider,
  FactoryProvider,
  LifetimeOption,
  Provider,
  Resolver,
  ValueProvider,
} from './container/registration.js';
export { currentScope, type Scope } from './container/scope.js';
export { ScopedDependencyMiddleware, type ScopedDependencyOptions } from './container/scoped-dependency-middleware.js';
export { type Class, type Constructable, createToken, type InjectionToken, type Token } from './container/token.js';

// context
export { type CoreContext, getContext, hasPermission, runWithContext, SYSTEM_CONTEXT } from './context/context.js';
export type {
  ClaimValue,
  RowFilterGroup,
  RowFilterLeaf,
  RowFilterNode,
  RowFilterSource,
} from './context/row-filters.js';

// auth
export { ACCESS_TOKEN_COOKIE } from './auth/credentials.js';
export { signToken, type SignTokenOptions } from './auth/jwt.js';
export {
  assertPermission,
  CONTEXT_RESOLVER,
  type CoreAuthState,
  coreContextPlugin,
  type CoreContextPluginOptions,
} from './auth/plugin.js';
export { ANONYMOUS_ROLE, loadPolicies, type PolicyDocument, PolicyError, type RolePolicy } from './auth/policies.js';
export { ContextResolver, JwtContextResolver, type JwtContextResolverOptions } from './auth/resolver.js';

// db
export { Database, dbManager, type Dialect, type QueryEvent, type QueryListener } from './db/database.js';

// model
export { Base, defineModel, type ModelActions, type ModelClass } from './model/base.js';
export type { Page, PageParams, Row } from './model/types.js';

// migrations
export type { DataRisk } from './migrations/guard.js';
export {
  applyMigrations,
  type CreatedMigration,
  createMigration,
  DataLossError,
  MigrationError,
  type MigrationOptions,
  migrationsFolder,
  pendingMigrations,
} from './migrations/migrations.js';

// schema
export { ContextSchema, type SchemaClass } from './schema/context-schema.js';
export type {
  IntrospectedSchema,
  JsonSchemaFragment,
  MaskedOutput,
  ParsedBody,
  ParseMode,
  RelationSpec,
  SchemaDefinition,
  SchemaInput,
  SchemaOutput,
  SchemaPatch,
  Serializer,
} from './schema/types.js';

// search
export { BaseQuery } from './search/base-query.js';
export type { FieldHandler, FieldHandlerContext, SqlFragment } from './search/filter-compiler.js';
export { DEFAULT_SEARCH_LIMITS, type SearchLimits } from './search/limits.js';
export { type ListParams, ModelReader, type ModelReaderOptions, type ReadOptions } from './search/model-reader.js';
export { registerRowScope, type RowAction, type RowScopeHook } from './search/row-scope.js';
export { SearchEngine, type SearchEngineOptions } from './search/search-engine.js';
export {
  FILTER_OPERATORS,
  type FilterGroup,
  type FilterLeaf,
  FilterLeafSchema,
  type FilterNode,
  FilterNodeSchema,
  type FilterOperator,
  GROUP_OPERATORS,
  type GroupOperator,
  type SearchRequest,
  SearchRequestSchema,
  SORT_ORDERS,
  type SortOrder,
  type SortRule,
  SortRuleSchema,
} from './search/search-request.js';

// uow
export { UnitOfWork, type UnitOfWorkOptions } from './uow/unit-of-work.js';

// outbox
export { eventBrokerOf, type EventBrokerOptions, type EventBrokerStats } from './outbox/event-broker.js';
export type { HandlerStats } from './outbox/handler-consumer.js';
export { EventRefusedError, MAX_EVENT_BYTES } from './outbox/message.js';
export { brokerNames, type BrokerNames } from './outbox/names.js';
export { registerDbEventDispatcher, type RegisterDbEventDispatcherOptions } from './outbox/register.js';
export type { RelayStats } from './outbox/relay.js';

// data
export type { Id } from './data/repository-input.js';
export { BaseRepository, type DeleteOptions, type RepositoryOptions, type UpdateOptions } from './data/repository.js';
export { BaseService, type ServiceOptions } from './data/service.js';

// http
export { BaseRouter, type ResourceRoutes, type RouterService } from './http/base-router.js';
export {
  CoreAPIRoute,
  type CoreRouteConfig,
  type CoreRouteHandler,
  type CoreRouteOptions,
  type SchemaSource,
} from './http/core-api-route.js';
export { CoreJSONResponse, type CoreJSONResponseOptions } from './http/core-json-response.js';
export { type CoreRequest, useCoreRequest } from './http/core-request.js';
export { type ErrorEnvelope, ErrorEnvelopeSchema, type PageMeta, type SuccessEnvelope } from './http/envelope.js';
export { appExceptionHandler, type ErrorResponse, toErrorResponse, useCoreErrors } from './http/error-handler.js';
export { listenWithLifecycle, type ListenWithLifecycleOptions, shutDownGracefully } from './http/lifecycle.js';
export { coreHealthRoutes, type HealthRoutesOptions, type ReadinessReport } from './http/readiness.js';
export type { CoreRouteDoc } from './http/route-doc.js';
export { varyOnCredentials } from './http/vary.js';

// openapi
export { swaggerUiOnDemand } from './openapi/docs-ui.js';
export { operationIdOf } from './openapi/operations.js';
export { coreOpenApi, type CoreOpenApiOptions } from './openapi/plugin.js';
export { injectFetch, type InjectFetch } from './openapi/inject-fetch.js';
