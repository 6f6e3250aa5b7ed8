import { ERROR_CODES, type ErrorCode } from '../errors.js';
import { toJsonSchema } from '../schema/json-schema.js';
import { pageSize, ref, type Json, type SchemaComponents } from './components.js';
import type { CoreRouteDoc, ResourceDescription, ResourceOperation } from '../http/route-doc.js';
import { customFacts, errorCodesOf, errorResponseName, resourceFacts } from './statuses.js';

/** A Core route as the document sees it: its guard, and what it does when a router declared it. */
export interface CoreRouteEntry {
  /** The permission guarding it, or null for an unguarded Core route. */
  readonly action: string | null;
  readonly doc: CoreRouteDoc | undefined;
  readonly summary: string | undefined;
}

/** What building an operation adds to the rest of the document. */
export interface OperationNeeds {
  readonly errors: Set<ErrorCode>;
  readonly headers: Set<string>;
  readonly parameters: Set<string>;
  readonly tags: Map<string, string>;
}

const VERBS: Record<ResourceOperation, string> = {
  create: 'create',
  get: 'get',
  replace: 'replace',
  update: 'update',
  delete: 'delete',
  list: 'list',
  search: 'search',
};

/** `operationId` of a resource route: `createTask` … `deleteTask`, then `listTasks` and `searchTasks`. */
export function operationIdOf(operation: ResourceOperation, resource: ResourceDescription): string {
  const subject = operation === 'list' || operation === 'search' ? pascalCase(resource.name) : resource.entity;
  return `${VERBS[operation]}${subject}`;
}

/**
 * The operation object of one of a resource router's routes. `security` lists `{}` as well when the
 * anonymous role holds the permission (no credential needed).
 */
export function resourceOperation(
  entry: CoreRouteEntry,
  components: SchemaComponents,
  needs: OperationNeeds,
  anonymousMay: (action: string) => boolean,
): Json {
  const { operation, resource } = entry.doc!;
  const facts = resourceFacts(operation, entry.action !== null);
  const out = components.output(resource.schemaOut);
  const operationObject: Json = {
    operationId: operationIdOf(operation, resource),
    ...(entry.summary === undefined ? {} : { summary: entry.summary }),
    tags: [...resource.tags],
    security: securityOf(entry.action, anonymousMay),
  };
  for (const tag of resource.tags)
    if (!needs.tags.has(tag))
      needs.tags.set(tag, `The ${resource.name} resource: create, read, replace, update, delete, list and search.`);

  const parameters = parametersOf(operation, resource, needs, components);
  if (parameters.length > 0) operationObject['parameters'] = parameters;

  const body = requestBodyOf(operation, resource, components);
  if (body !== undefined) operationObject['requestBody'] = body;

  const responses: Json = successResponseOf(operation, out, components, needs);
  for (const code of errorCodesOf(facts)) {
    needs.errors.add(code);
    responses[String(ERROR_CODES[code].status)] = ref('responses', errorResponseName(code));
  }
  operationObject['responses'] = responses;
  return operationObject;
}

/**
 * A Core route a router added by itself (`CoreAPIRoute` in an overridden `routes`): the operation the
 * swagger plugin built from its schema, plus its guard and the errors every Core route can answer.
 */
export function customOperation(
  entry: CoreRouteEntry,
  built: Json,
  needs: OperationNeeds,
  anonymousMay: (action: string) => boolean,
): Json {
  const responses: Json = { ...(built['responses'] as Json | undefined) };
  for (const code of errorCodesOf(customFacts(entry.action !== null))) {
    const status = String(ERROR_CODES[code].status);
    if (responses[status] !== undefined) continue;
    needs.errors.add(code);
    responses[status] = ref('responses', errorResponseName(code));
  }
  return { ...built, security: securityOf(entry.action, anonymousMay), responses };
}

function securityOf(action: string | null, anonymousMay: (action: string) => boolean): Json[] {
  if (action === null) return [];
  const schemes: Json[] = [{ bearerAuth: [] }, { cookieAuth: [] }];
  return anonymousMay(action) ? [...schemes, {}] : schemes;
}

/**
 * `include` of get and list: one relation path, or several (sent comma-separated, `style: form`
 * without explode), enumerated to the search engine's path depth. Absent when there is nothing the
 * caller may include.
 */
function includeParameter(resource: ResourceDescription, components: SchemaComponents): Json | undefined {
  const path = components.includePath(resource);
  if (path === undefined) return undefined;
  const { maxIncludes } = components.queries(resource).limits;
  return {
    name: 'include',
    in: 'query',
    required: false,
    description: `Relations to embed: one path, or up to ${maxIncludes} comma-separated; dotted paths reach further (\`project,comments.author\`).`,
    style: 'form',
    explode: false,
    schema: { anyOf: [path, { type: 'array', items: path, minItems: 1, maxItems: maxIncludes }] },
  };
}

function parametersOf(
  operation: ResourceOperation,
  resource: ResourceDescription,
  needs: OperationNeeds,
  components: SchemaComponents,
): Json[] {
  const parameters: Json[] = [];
  if (operation !== 'create' && operation !== 'list' && operation !== 'search') {
    const schema = toJsonSchema(resource.id) as Json;
    parameters.push({
      name: 'id',
      in: 'path',
      required: true,
      description: `The ${resource.entity}'s primary key.`,
      schema,
      example: exampleId(schema),
    });
  }
  const include = operation === 'get' || operation === 'list' ? includeParameter(resource, components) : undefined;
  if (operation === 'get' && include !== undefined) parameters.push(include);
  if (operation === 'list') {
    const { limits } = components.queries(resource);
    parameters.push(
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: `${pageSize(limits)}.`,
        schema: { type: 'integer', minimum: 1, maximum: limits.maxLimit },
      },
      {
        name: 'offset',
        in: 'query',
        required: false,
        description: 'Rows to skip (offset pagination).',
        schema: { type: 'integer', minimum: 0 },
      },
      {
        name: 'cursor',
        in: 'query',
        required: false,
        description: '`next_cursor` of a previous page (keyset pagination).',
        schema: { type: 'string', minLength: 1 },
      },
    );
    if (include !== undefined) parameters.push(include);
  }
  if (operation === 'replace' || operation === 'update' || operation === 'delete') {
    needs.parameters.add('IfMatch');
    parameters.push(ref('parameters', 'IfMatch'));
  }
  return parameters;
}

function requestBodyOf(
  operation: ResourceOperation,
  resource: ResourceDescription,
  components: SchemaComponents,
): Json | undefined {
  const json = (name: string): Json => ({ 'application/json': { schema: ref('schemas', name) } });
  switch (operation) {
    case 'create':
      return {
        required: true,
        content: json(components.input(resource.createSchema, `${resource.entity}Create`, 'create')),
      };
    case 'replace':
      return {
        required: true,
        description:
          'The new state: absent fields return to their defaults; fields the caller may not see keep their value.',
        content: json(components.input(resource.updateSchema, `${resource.entity}Update`, 'replace')),
      };
    case 'update':
      return {
        required: true,
        description: 'Only the fields sent change.',
        content: json(components.input(resource.updateSchema, `${resource.entity}Patch`, 'patch')),
      };
    case 'search':
      return { required: false, content: json(components.searchRequest(resource)) };
    default:
      return undefined;
  }
}

function successResponseOf(
  operation: ResourceOperation,
  out: string,
  components: SchemaComponents,
  needs: OperationNeeds,
): Json {
  const one = ref('schemas', out);
  const many: Json = { type: 'array', items: one };
  const page: Json = { anyOf: [ref('schemas', components.pageMeta()), { type: 'null' }] };
  const header = (name: string): Json => {
    needs.headers.add(name);
    return { [name]: ref('headers', name) };
  };
  switch (operation) {
    case 'create':
      return { '201': response('Created', envelope(one, { type: 'null' }), header('Location')) };
    case 'get':
      return { '200': response('The record', envelope(one, { type: 'null' }), header('ETag')) };
    case 'replace':
    case 'update':
      return { '200': response('The record as stored', envelope(one, { type: 'null' }), header('ETag')) };
    case 'delete':
      return { '200': response('Deleted', envelope({ type: 'null' }, { type: 'null' })) };
    case 'list':
      return { '200': response('One page of records', envelope(many, page), header('Link')) };
    case 'search':
      return { '200': response('One page of matching records', envelope(many, page)) };
  }
}

function response(description: string, schema: Json, headers?: Json): Json {
  return { description, ...(headers === undefined ? {} : { headers }), content: { 'application/json': { schema } } };
}

/** The success envelope around `data`. */
function envelope(data: Json, meta: Json): Json {
  return {
    type: 'object',
    required: ['success', 'message', 'data', 'meta'],
    properties: { success: { type: 'boolean', const: true }, message: { type: 'string' }, data, meta },
    additionalProperties: false,
  };
}

/** An example id, so tools that call the API from its document (contract tests) can fill the path. */
function exampleId(schema: Json): unknown {
  if (schema['format'] === 'uuid') return '3fa85f64-5717-4562-b3fc-2c963f66afa6';
  if (schema['type'] === 'integer') return 1;
  return 'id';
}

function pascalCase(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}
