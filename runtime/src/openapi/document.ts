import type { ErrorCode } from '../errors.js';
import type { SchemaClass } from '../schema/context-schema.js';
import {
  errorResponses,
  HEADERS,
  PARAMETERS,
  SchemaComponents,
  SECURITY_SCHEMES,
  type DocumentView,
  type Json,
} from './components.js';
import { customOperation, resourceOperation, type CoreRouteEntry, type OperationNeeds } from './operations.js';

/** The extension key that marks, in the swagger plugin's output, the operations of Core routes. */
export const CORE_ROUTE_MARK = 'x-core-route';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * A document for `view`, from the swagger plugin's output (`base`, never changed): each operation
 * marked as a Core route is replaced by Core's description of it (or completed, for a router's own
 * extra routes), components are written for exactly what the operations use, and plain routes get
 * `security: []` (Core does not guard them).
 */
export function buildDocument(
  base: Json,
  entries: readonly CoreRouteEntry[],
  view: DocumentView,
  anonymousMay: (action: string) => boolean,
): Json {
  const document = structuredClone(base);
  const outputs = new Set<SchemaClass>();
  for (const entry of entries) if (entry.doc !== undefined) outputs.add(entry.doc.resource.schemaOut);
  const components = new SchemaComponents(view, [...outputs]);
  const needs: OperationNeeds = {
    errors: new Set<ErrorCode>(),
    headers: new Set(),
    parameters: new Set(),
    tags: new Map(),
  };

  const paths = (document['paths'] ?? {}) as Record<string, Json>;
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (operation === undefined) continue;
      const mark = operation[CORE_ROUTE_MARK];
      if (typeof mark !== 'number') {
        if (operation['security'] === undefined) operation['security'] = [];
        continue;
      }
      delete operation[CORE_ROUTE_MARK];
      const entry = entries[mark]!;
      if (entry.action !== null && view.may !== undefined && !view.may(entry.action)) {
        delete item[method]; // a caller's document lists only what the caller may call
        continue;
      }
      item[method] =
        entry.doc === undefined
          ? customOperation(entry, operation, needs, anonymousMay)
          : resourceOperation(entry, components, needs, anonymousMay);
    }
  }
  for (const [path, item] of Object.entries(paths)) {
    if (!METHODS.some((method) => item[method] !== undefined)) delete paths[path];
  }

  const existing = (document['components'] ?? {}) as Json;
  const pick = (all: Record<string, Json>, names: Set<string>): Record<string, Json> =>
    Object.fromEntries(Object.entries(all).filter(([name]) => names.has(name)));
  if (needs.errors.size > 0) components.errorEnvelope();
  document['components'] = {
    ...existing,
    schemas: { ...(existing['schemas'] as Json | undefined), ...components.schemas },
    responses: { ...(existing['responses'] as Json | undefined), ...errorResponses(needs.errors, 'ErrorEnvelope') },
    parameters: { ...(existing['parameters'] as Json | undefined), ...pick(PARAMETERS, needs.parameters) },
    headers: {
      ...(existing['headers'] as Json | undefined),
      ...pick(HEADERS, new Set([...needs.headers, ...(needs.errors.has('SERVICE_UNAVAILABLE') ? ['RetryAfter'] : [])])),
    },
    securitySchemes: { ...SECURITY_SCHEMES, ...(existing['securitySchemes'] as Json | undefined) },
  };
  for (const key of ['responses', 'parameters', 'headers'] as const) {
    const section = (document['components'] as Json)[key] as Json;
    if (Object.keys(section).length === 0) delete (document['components'] as Json)[key];
  }

  const tags = (document['tags'] as Json[] | undefined) ?? [];
  const named = new Set(tags.map((tag) => tag['name']));
  for (const [name, description] of needs.tags) if (!named.has(name)) tags.push({ name, description });
  if (tags.length > 0) document['tags'] = tags;
  return document;
}
