/**
 * What an answer must be. Each request is built with at most one fault, so its expected answer is
 * one status, found by walking the stages a request goes through in order (routing, body parsing,
 * URL validation, the permission guard, `?schema=true`, then the handler: body validation, related
 * rows, the row itself, unique values). Every answer must also be the envelope (`envelope.ts`), and
 * successful ones are checked against the published output schema and against what was sent.
 */
import { Compile, type Validator } from 'typebox/compile';
import type { Envelope } from './envelope.js';
import type { Caller, Fuzzed, HttpRequest, HttpResponse } from './harness.js';
import type { Resource } from './resources.js';
import type { JsonSchema } from './values.js';

export interface Expectation {
  readonly status: number;
  /** Why this status, in words, for the report. */
  readonly why: string;
  /** What kind of refusal this is, when the request's label does not say (groups violations). */
  readonly tag?: string;
  /** Error answers: every detail's path must be one of these, or inside one (`title`, `filters[0].value`). */
  readonly paths?: readonly string[];
  /** Error answers: at least one detail must carry one of these reasons. */
  readonly reasons?: readonly string[];
  /** More checks on the answer; each string returned is a violation. */
  readonly verify?: (res: HttpResponse, body: Envelope) => Promise<string[]> | string[];
}

export interface Case {
  /** A short name of the kind of request (`create: title too_long`), to group violations. */
  readonly label: string;
  readonly request: HttpRequest;
  readonly expect: Expectation;
}

export type Action = 'create' | 'view' | 'update' | 'delete' | 'listview';

function hasPermission(caller: Caller, action: string): boolean {
  const perms = caller.context.permissions;
  return perms.has(action) || perms.has('*') || perms.has(`${action.slice(0, action.indexOf(':'))}:*`);
}

/** The permission guard's answer, or undefined when the caller passes it. */
export function gate(caller: Caller, resource: Resource, action: Action): Expectation | undefined {
  const permission = `${resource.name}:${action}`;
  if (caller.kind === 'bad')
    return { status: 401, why: `${caller.name}: a credential that fails verification is refused` };
  if (hasPermission(caller, permission)) return undefined;
  if (caller.kind === 'anonymous')
    return { status: 401, why: `no credential, and anonymous callers may not ${permission}` };
  return { status: 403, why: `${caller.name} is not granted ${permission}` };
}

export function pathMatches(path: string, expected: string): boolean {
  if (expected === '') return path === '';
  return path === expected || path.startsWith(`${expected}.`) || path.startsWith(`${expected}[`);
}

export const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export function withCaller(caller: Caller, headers: Record<string, string> = {}): Record<string, string> {
  return { ...caller.headers, ...headers };
}

// --- output rows ----------------------------------------------------------------------------------

const validators = new WeakMap<object, Validator>();

function rowValidator(doc: JsonSchema): Validator {
  let v = validators.get(doc);
  if (!v) {
    v = Compile({ type: 'object', properties: doc.properties ?? {}, required: doc.required ?? [] } as never);
    validators.set(doc, v);
  }
  return v;
}

/** Include paths as a tree: `['project.owner', 'labels']` → `{ project: { owner: {} }, labels: {} }`. */
export type IncludeTree = { [relation: string]: IncludeTree };

export function includeTree(paths: readonly string[]): IncludeTree {
  const tree: IncludeTree = {};
  for (const path of paths) {
    let node = tree;
    for (const hop of path.split('.')) node = node[hop] ??= {};
  }
  return tree;
}

/**
 * Problems of one output row against the caller's output schema at its position: exactly the
 * visible fields (restricted ones absent), values of their declared types, included relations as
 * objects, null or arrays, a to-one relation agreeing with its key.
 */
export function checkRow(doc: JsonSchema, row: unknown, includes: IncludeTree, where: string): string[] {
  if (typeof row !== 'object' || row === null || Array.isArray(row))
    return [`${where}: expected an object, got ${JSON.stringify(row)?.slice(0, 60)}`];
  const record = row as Record<string, unknown>;
  const props = doc.properties ?? {};
  const relations = (doc['x-relations'] ?? {}) as Record<string, JsonSchema>;
  const problems: string[] = [];
  const expected = new Set([...Object.keys(props), ...Object.keys(includes).filter((r) => r in relations)]);
  const missing = [...expected].filter((k) => !(k in record));
  const extra = Object.keys(record).filter((k) => !expected.has(k) && !(k in includes));
  if (missing.length) problems.push(`${where}: missing ${missing.join(', ')}`);
  if (extra.length) problems.push(`${where}: fields the caller's output schema does not have: ${extra.join(', ')}`);
  const scalars: Record<string, unknown> = {};
  for (const k of Object.keys(props)) if (k in record) scalars[k] = record[k];
  const validator = rowValidator(doc);
  if (!validator.Check(scalars)) {
    const first = [...validator.Errors(scalars)].slice(0, 2).map((e) => `${e.instancePath} ${e.message}`);
    problems.push(`${where}: does not match ${String(doc.title ?? 'the output schema')}: ${first.join('; ')}`);
  }
  for (const [name, sub] of Object.entries(includes)) {
    const relDoc = relations[name];
    if (!relDoc || !(name in record)) continue;
    const value = record[name];
    if (relDoc.type === 'array') {
      if (!Array.isArray(value)) problems.push(`${where}.${name}: expected an array`);
      else
        for (const [i, item] of value.slice(0, 20).entries())
          problems.push(...checkRow(relDoc.items ?? {}, item, sub, `${where}.${name}[${i}]`));
    } else {
      const key = relDoc['x-foreign-key'] as string | undefined;
      if (value !== null) problems.push(...checkRow(relDoc, value, sub, `${where}.${name}`));
      if (key && key in record) {
        const id = (value as { id?: unknown } | null)?.id ?? null;
        const fk = record[key];
        const same =
          typeof fk === 'string' && typeof id === 'string' ? fk.toLowerCase() === id.toLowerCase() : fk === id;
        if (!same)
          problems.push(`${where}: ${key} is ${JSON.stringify(fk)} but the included ${name} is ${JSON.stringify(id)}`);
      }
    }
  }
  return problems;
}

/** A list answer: an array of rows of the caller's output schema, at most `limit` long. */
export function checkRows(
  fz: Fuzzed,
  resource: Resource,
  caller: Caller,
  data: unknown,
  includes: IncludeTree,
  limit: number,
): string[] {
  if (!Array.isArray(data)) return ['data: expected an array'];
  const problems: string[] = [];
  if (data.length > limit) problems.push(`data: ${data.length} rows, more than the limit ${limit}`);
  const ids = new Set<unknown>();
  data.forEach((row, i) => {
    if (i < 25) problems.push(...checkRow(fz.doc(resource, 'out', caller), row, includes, `data[${i}]`));
    const id = (row as { id?: unknown }).id;
    if (id !== undefined && ids.has(id)) problems.push(`data: the row ${String(id)} appears twice`);
    ids.add(id);
  });
  return problems;
}
