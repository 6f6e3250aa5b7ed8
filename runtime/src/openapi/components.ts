import { ERROR_CODES, type ErrorCode } from '../errors.js';
import { ErrorEnvelopeSchema } from '../http/envelope.js';
import type { BoundFields } from '../schema/claim-bound.js';
import type { SchemaClass } from '../schema/context-schema.js';
import { toJsonSchema } from '../schema/json-schema.js';
import { planOutput, type OutputNode } from '../schema/output-plan.js';
import { restrictionScope, visibility } from '../schema/restriction-scope.js';
import { describeSchema, reachableSchemas, type SchemaInfo } from '../schema/schema-info.js';
import type { ResourceDescription } from '../http/route-doc.js';
import { FilterLeafSchema, GROUP_OPERATORS, SearchRequestSchema, SortRuleSchema } from '../search/search-request.js';
import type { SearchLimits } from '../search/limits.js';
import { OPERATOR_SET_NAMES, operatorsOf, resourceQueries, type ResourceQueries } from './queries.js';
import { errorResponseName } from './statuses.js';

export type Json = { [keyword: string]: unknown };

/**
 * Whom a document is for. The shared document (`restricted: null`) lists every field; a field that
 * one of the `roles` may not see is optional there, since some callers never receive it. A caller's
 * document (`restricted` = the caller's restriction entries) leaves out what that caller cannot see.
 */
export interface DocumentView {
  readonly restricted: ReadonlySet<string> | null;
  /** The restriction entries of each role of the policies. */
  readonly roles: readonly ReadonlySet<string>[];
  /** For a caller's document: whether the caller holds a permission; operations it does not are left out. */
  readonly may?: (action: string) => boolean;
  /**
   * For a caller's document: the required fields of a create or replace body that the caller's row scope
   * binds to a token claim (they come from the token, so the caller need not send them), as `?schema=true`.
   */
  readonly bound?: (info: SchemaInfo, mode: 'create' | 'replace') => BoundFields | undefined;
}

export const ref = (section: 'schemas' | 'responses' | 'parameters' | 'headers', name: string): Json => ({
  $ref: `#/components/${section}/${name}`,
});

/**
 * The `components.schemas` of one document, filled as operations ask for them. Output schemas follow
 * the output plan the serializer uses, so a component has exactly the fields a response can carry.
 */
export class SchemaComponents {
  readonly schemas: Record<string, Json> = {};
  /** Output nodes already written, by schema and position, to their component name. */
  private readonly outputNames = new Map<string, string>();
  /** Shared document: fields of a schema that some role does not see, by schema id. */
  private hiddenForSomeRole: Map<number, Set<string>> | undefined;
  private readonly queriesOf = new Map<ResourceDescription, ResourceQueries>();

  private readonly outputRoots: readonly SchemaInfo[];
  /** Ids of every schema an output root can reach (whose hidden fields come from the output plans). */
  private readonly outputInfos: ReadonlySet<number>;

  /** `outputs`: every output schema the document's routes answer with. */
  constructor(
    private readonly view: DocumentView,
    outputs: readonly SchemaClass[],
  ) {
    this.outputRoots = outputs.map((schema) => describeSchema(schema));
    this.outputInfos = new Set(this.outputRoots.flatMap((root) => reachableSchemas(root).map((info) => info.id)));
  }

  /** The output component of `schema` (and those of every schema it can include); returns its name. */
  output(schema: SchemaClass): string {
    const info = describeSchema(schema);
    const plan = planOutput(info, restrictionScope(info, this.view.restricted ?? new Set()));
    const names = new Map<OutputNode, string>();
    for (const node of plan.nodes) names.set(node, this.outputName(node));
    for (const node of plan.nodes) {
      const name = names.get(node)!;
      if (this.schemas[name] === undefined) this.schemas[name] = this.outputSchema(node, names);
    }
    return names.get(plan.root)!;
  }

  /** The body component of a create (`mode: create`), replace or patch, under `name`. */
  input(schema: SchemaClass, name: string, mode: 'create' | 'replace' | 'patch'): string {
    const info = describeSchema(schema);
    const visible =
      this.view.restricted === null
        ? info.fieldNames
        : visibility(info, [], restrictionScope(info, this.view.restricted)).fields;
    const hidden = this.hiddenFields(info);
    const properties: Record<string, Json> = {};
    for (const field of visible) {
      const fragment = { ...fragmentOf(info, field) };
      // A patch applies no defaults: only the fields sent change.
      if (mode === 'patch') delete fragment['default'];
      properties[field] = fragment;
    }
    const bound = mode === 'patch' ? undefined : this.view.bound?.(info, mode)?.names;
    const required =
      mode === 'patch' ? [] : visible.filter((f) => info.required.has(f) && !hidden.has(f) && !bound?.has(f));
    this.schemas[name] = { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
    return name;
  }

  /** What the reads of `resource` accept in this view (its fields, paths and limits); computed once per document. */
  queries(resource: ResourceDescription): ResourceQueries {
    let found = this.queriesOf.get(resource);
    if (found === undefined) {
      found = resourceQueries(resource, this.view.restricted);
      this.queriesOf.set(resource, found);
    }
    return found;
  }

  /**
   * The search body of one resource (`TaskSearchRequest`), with its own filter and sort components
   * (`TaskSearchFilter`, `TaskFilterCondition`, `TaskFilterGroup`, `TaskSortRule`): the fields,
   * operators, relation paths and limits that resource accepts.
   */
  searchRequest(resource: ResourceDescription): string {
    const name = `${resource.entity}SearchRequest`;
    if (this.schemas[name] !== undefined) return name;
    const queries = this.queries(resource);
    const { limits } = queries;
    const base = toOpenApi(SearchRequestSchema);
    const properties = { ...(base['properties'] as Record<string, Json>) };
    properties['filters'] = {
      ...properties['filters'],
      maxItems: limits.maxFilterNodes,
      items: ref('schemas', this.searchFilter(resource.entity, queries)),
    };
    properties['include'] = this.includeList(resource);
    properties['sort'] = {
      ...properties['sort'],
      maxItems: limits.maxSortKeys,
      items: ref('schemas', this.sortRule(resource.entity, queries)),
    };
    properties['limit'] = { ...properties['limit'], maximum: limits.maxLimit, description: pageSize(limits) };
    this.schemas[name] = { ...base, properties };
    return name;
  }

  pageMeta(): string {
    this.schemas['PageMeta'] ??= {
      type: 'object',
      description: '`meta` of a list or search that named `limit`, `offset` or `cursor`.',
      required: ['limit', 'offset', 'next_cursor', 'has_more'],
      properties: {
        limit: { type: 'integer', minimum: 1 },
        offset: { type: ['integer', 'null'], minimum: 0, description: 'null in cursor mode' },
        next_cursor: { type: ['string', 'null'], description: 'The cursor of the next page; null on the last one' },
        has_more: { type: 'boolean' },
      },
      additionalProperties: false,
    };
    return 'PageMeta';
  }

  errorEnvelope(): string {
    this.schemas['ErrorEnvelope'] ??= {
      ...toOpenApi(ErrorEnvelopeSchema),
      description: 'What every error response is.',
    };
    return 'ErrorEnvelope';
  }

  /**
   * One relation path `include` may name (`TaskIncludePath`: `project`, `comments.author`…), shared by
   * the search body and the get and list parameters; a plain string when the paths could not be
   * enumerated, undefined when there is nothing to include.
   */
  includePath(resource: ResourceDescription): Json | undefined {
    const { includePaths } = this.queries(resource);
    if (includePaths === null) return { type: 'string', minLength: 1 };
    if (includePaths.length === 0) return undefined;
    const name = `${resource.entity}IncludePath`;
    this.schemas[name] ??= {
      type: 'string',
      enum: [...includePaths],
      description: `A relation path of ${resource.entity}, at most ${this.queries(resource).limits.maxPathDepth} relations deep`,
    };
    return ref('schemas', name);
  }

  /** The search body's `include`: the resource's relation paths, as many as the engine takes. */
  private includeList(resource: ResourceDescription): Json {
    const description = 'Relation paths to load, e.g. comments.author';
    const path = this.includePath(resource);
    if (path === undefined) return { type: 'array', maxItems: 0, description: 'Nothing to include' };
    return { type: 'array', items: path, maxItems: this.queries(resource).limits.maxIncludes, description };
  }

  /** `<Entity>SearchFilter`: a condition or a group, each naming only what the resource accepts. */
  private searchFilter(entity: string, queries: ResourceQueries): string {
    const name = `${entity}SearchFilter`;
    const condition = `${entity}FilterCondition`;
    const group = `${entity}FilterGroup`;
    this.schemas[name] = {
      description: 'A condition, or a group of them (a group is one level of depth).',
      anyOf: [ref('schemas', condition), ref('schemas', group)],
    };
    this.schemas[condition] = filterCondition(queries);
    this.schemas[group] = {
      type: 'object',
      required: ['op', 'items'],
      properties: {
        op: { type: 'string', enum: [...GROUP_OPERATORS] },
        items: { type: 'array', items: ref('schemas', name) },
      },
    };
    return name;
  }

  /** `<Entity>SortRule`: a column, or a path through to-one relations, that has an order. */
  private sortRule(entity: string, queries: ResourceQueries): string {
    const name = `${entity}SortRule`;
    const base = toOpenApi(SortRuleSchema);
    const properties = { ...(base['properties'] as Record<string, Json>) };
    if (queries.sortFields !== null)
      properties['field'] = {
        type: 'string',
        enum: [...queries.sortFields],
        description: 'A column, or a path through to-one relations, of a kind that has an order',
      };
    this.schemas[name] = { ...base, properties };
    return name;
  }

  private outputName(node: OutputNode): string {
    const key = `${node.info.id}|${node.id}`;
    let name = this.outputNames.get(key);
    if (name !== undefined) return name;
    // A node below a path restriction (`ProjectOut@tasks.project`) differs from the schema's own
    // component; it gets a name of its own that says where it is.
    const wanted = node.id.replace(/[^A-Za-z0-9_]+/g, '_');
    name = wanted;
    for (let i = 2; [...this.outputNames.values()].includes(name); i++) name = `${wanted}_${i}`;
    this.outputNames.set(key, name);
    return name;
  }

  private outputSchema(node: OutputNode, names: ReadonlyMap<OutputNode, string>): Json {
    const { info } = node;
    const hidden = this.hiddenFields(info);
    const properties: Record<string, Json> = {};
    const required: string[] = [];
    for (const field of node.fields) {
      properties[field.name] = fragmentOf(info, field.name);
      if (info.required.has(field.name) && !hidden.has(field.name)) required.push(field.name);
    }
    for (const relation of node.relations) {
      const target = ref('schemas', names.get(relation.node)!);
      const description = `Present when the request includes \`${relation.name}\`.`;
      properties[relation.name] = relation.many
        ? { type: 'array', items: target, description }
        : { anyOf: [target, { type: 'null' }], description };
    }
    return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
  }

  /**
   * Shared document: the fields of `info` that some role does not see. For an output schema, at any
   * position a response can hold it (from every output root of the document); for a body, at its top.
   */
  private hiddenFields(info: SchemaInfo): ReadonlySet<string> {
    if (this.view.restricted !== null) return new Set();
    if (this.hiddenForSomeRole === undefined) {
      const hidden = new Map<number, Set<string>>();
      for (const restricted of this.view.roles) {
        for (const root of this.outputRoots) {
          for (const node of planOutput(root, restrictionScope(root, restricted)).nodes) {
            addHidden(hidden, node.info, new Set(node.fields.map((f) => f.name)));
          }
        }
      }
      this.hiddenForSomeRole = hidden;
    }
    let hidden = this.hiddenForSomeRole.get(info.id);
    if (hidden === undefined && !this.outputInfos.has(info.id)) {
      hidden = new Set();
      for (const restricted of this.view.roles)
        addHidden(
          new Map([[info.id, hidden]]),
          info,
          new Set(visibility(info, [], restrictionScope(info, restricted)).fields),
        );
      this.hiddenForSomeRole.set(info.id, hidden);
    }
    return hidden ?? new Set();
  }
}

function addHidden(hidden: Map<number, Set<string>>, info: SchemaInfo, seen: ReadonlySet<string>): void {
  let set = hidden.get(info.id);
  if (set === undefined) hidden.set(info.id, (set = new Set()));
  for (const field of info.fieldNames) if (!seen.has(field)) set.add(field);
}

/** `Page size (default 50; at most 500)`, with the resource's numbers. */
export function pageSize(limits: Readonly<SearchLimits>): string {
  return `Page size (default ${limits.defaultLimit}; at most ${limits.maxLimit})`;
}

const VALUE_DESCRIPTION = 'A JSON scalar; an array of scalars for in/nin; a boolean for isnull';

/**
 * A filter condition: one branch per operator set, naming the fields of that set and the operators
 * they take (`priority` with `startswith`, `points` with `gt`…). Fields that can only be null-tested
 * (json and other opaque columns) take `isnull`, or `eq`/`ne` with a null value.
 */
function filterCondition(queries: ResourceQueries): Json {
  const generic = toOpenApi(FilterLeafSchema);
  if (queries.filterFields === null) return generic;
  const branch = (fields: readonly string[], ops: readonly string[], value: Json): Json => ({
    type: 'object',
    required: value['type'] === 'null' ? ['field', 'op', 'value'] : ['field', 'op'],
    properties: {
      field: { type: 'string', enum: [...fields] },
      op: { type: 'string', enum: [...ops] },
      value,
    },
  });
  const branches: Json[] = [];
  for (const set of OPERATOR_SET_NAMES) {
    const fields = queries.filterFields.get(set);
    if (fields === undefined || fields.length === 0) continue;
    branches.push(branch(fields, operatorsOf(set), { description: VALUE_DESCRIPTION }));
    if (set === 'opaque') branches.push(branch(fields, ['eq', 'ne'], { type: 'null' }));
  }
  if (branches.length === 0) return generic;
  return {
    description:
      "`{ field, op, value }`: a column, `<relation>_id` or relation dot-path of the resource, with an operator its column's kind takes.",
    anyOf: branches,
  };
}

/** `components.responses`: one per error code, each an `ErrorEnvelope`; the 503 tells `Retry-After`. */
export function errorResponses(codes: Iterable<ErrorCode>, envelope: string): Record<string, Json> {
  const responses: Record<string, Json> = {};
  for (const code of codes) {
    const response: Json = {
      description: ERROR_CODES[code].message,
      content: { 'application/json': { schema: ref('schemas', envelope) } },
    };
    if (code === 'SERVICE_UNAVAILABLE') response['headers'] = { 'Retry-After': ref('headers', 'RetryAfter') };
    responses[errorResponseName(code)] = response;
  }
  return responses;
}

export const HEADERS: Record<string, Json> = {
  ETag: { description: "The record's version, for `If-Match` on a later write.", schema: { type: 'string' } },
  Location: { description: 'The URL of the created record.', required: true, schema: { type: 'string' } },
  Link: {
    description: 'The next page (`rel="next"`), when more rows exist and the request named no page parameter.',
    schema: { type: 'string' },
  },
  RetryAfter: {
    description: 'Seconds to wait before trying again, when known.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
};

export const PARAMETERS: Record<string, Json> = {
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description: 'Write only if the record still has this `ETag` (else 412, and nothing is written).',
    schema: { type: 'string' },
  },
};

export const SECURITY_SCHEMES: Record<string, Json> = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A JWT with the claims `sub` and `roles`.',
  },
  cookieAuth: {
    type: 'apiKey',
    in: 'cookie',
    name: 'access_token',
    description: 'The same JWT in the `access_token` cookie.',
  },
};

function fragmentOf(info: SchemaInfo, field: string): Json {
  return withEnumTypes(toJsonSchema(info.properties[field]!) as Json);
}

/** A TypeBox schema as an OpenAPI 3.1 schema: plain JSON Schema, TypeBox's title left out. */
function toOpenApi(schema: Parameters<typeof toJsonSchema>[0]): Json {
  const { title: _title, ...rest } = withEnumTypes(toJsonSchema(schema) as Json);
  return rest;
}

/** Adds `type: string` to enums of strings that lack it (typed clients then get a union of literals). */
function withEnumTypes(node: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (Array.isArray(value))
      out[key] = value.map((v: unknown) => (isJson(v) && key !== 'enum' ? withEnumTypes(v) : v));
    else if (isJson(value) && key !== 'const' && key !== 'default') out[key] = withEnumTypes(value);
    else out[key] = value;
  }
  const values = out['enum'];
  if (
    out['type'] === undefined &&
    Array.isArray(values) &&
    values.length > 0 &&
    values.every((v) => typeof v === 'string')
  )
    out['type'] = 'string';
  return out;
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
