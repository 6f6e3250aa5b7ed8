import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import type { CoreContext } from '../context/context.js';
import { isClaimValue, NO_ROWS, type RowFilterNode, type RowFilterSource } from '../context/row-filters.js';

/**
 * `src/policies.json`: role → granted permissions, restricted fields and row filters (docs/security.md).
 * Validated with TypeBox when loaded so a typo fails at startup with the JSON path, not as a silent
 * "no permission". Row filters name tables and fields, which only the models know: their structure is
 * checked here, their names when the policies first meet the models (`checkRowFilterModels`).
 */

/** The role that applies when a request carries no credential. */
export const ANONYMOUS_ROLE = 'anonymous';

// A permission or restriction entry padded with whitespace would never match anything (matching is
// exact), so such entries are rejected at load time instead of silently granting or restricting nothing.
const PermissionEntry = Type.String({ pattern: '^\\S+$' });
// Restriction entries are `<namespace>.<field>[.<field>…]`; an entry without a dot can never match.
const RestrictionEntry = Type.String({ pattern: '^[^\\s.]+(\\.[^\\s.]+)+$' });

export const RolePolicySchema = Type.Object(
  {
    permissions: Type.Array(PermissionEntry),
    restricted_fields: Type.Array(RestrictionEntry),
    // Table → filter nodes in the search syntax; each node is checked by `checkFilterNode`, which
    // names the path of a mistake more precisely than a recursive union's errors would.
    row_filters: Type.Optional(Type.Record(Type.String(), Type.Array(Type.Unknown()))),
  },
  { additionalProperties: false },
);

export const PolicyDocumentSchema = Type.Object(
  {
    // Tolerated so editors can offer completion; the contract's shape is otherwise exact.
    $schema: Type.Optional(Type.String()),
    roles: Type.Record(Type.String(), RolePolicySchema),
  },
  { additionalProperties: false },
);

export type RolePolicy = Static<typeof RolePolicySchema>;
export type PolicyDocument = Static<typeof PolicyDocumentSchema>;

const validator = Compile(PolicyDocumentSchema);

/** A policies file or object that does not have the contract's shape. */
export class PolicyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PolicyError';
  }
}

/**
 * Who is asking for a context: the `sub` claim (null when anonymous), the claimed roles and the
 * verified token's claims (what row filters' `$claim` values read).
 */
export interface Principal {
  sub: string | null;
  roles: readonly string[];
  claims?: Readonly<Record<string, unknown>>;
}

interface CompiledRole {
  readonly name: string;
  permissions: ReadonlySet<string>;
  restrictedFields: ReadonlySet<string>;
  /** Table → the role's filter (its nodes are ANDed). */
  rowFilters: ReadonlyMap<string, readonly RowFilterNode[]>;
}

/** One role's filter of one table, with the JSON path it was written at. */
export interface RowFilterEntry {
  readonly role: string;
  readonly table: string;
  readonly nodes: readonly RowFilterNode[];
  /** `$.roles.member.row_filters.tasks` */
  readonly path: string;
}

/**
 * Checks the policies' row filters against the models (unknown table, field, relation, operator, a
 * value the column cannot hold) and throws `PolicyError` naming the JSON path. Installed by the
 * search layer, which knows the models; `checkRowFilterModels` runs it.
 */
export type RowFilterModelCheck = (policies: PolicySet) => void;
let modelCheck: RowFilterModelCheck | undefined;

/** Installs the check `checkRowFilterModels` runs (the search layer does, once it is loaded). */
export function setRowFilterModelCheck(check: RowFilterModelCheck): void {
  modelCheck = check;
}

/**
 * Checks the row filters against the models now, if the check is installed and the policies have row
 * filters; the context resolver calls it when it is built, so a mistake stops the app at start.
 */
export function checkRowFilterModels(policies: PolicySet): void {
  if (modelCheck !== undefined && policies.rowFilterEntries.length > 0) modelCheck(policies);
}

/** Distinct role sets whose combined row filters are kept; more are combined afresh (and still correct). */
const MAX_ROLE_SETS = 256;

/**
 * The loaded policies. `contextFor` turns a principal into a `CoreContext`:
 * - permissions are the union over the caller's known roles;
 * - restricted fields are the intersection over the caller's known roles;
 * - row filters: see `RoleSetFilters` (a row is visible for an action when a role granting it sees it);
 * - roles absent from the policies are dropped first, so an unknown role grants nothing and can never
 *   relax a restriction (it would otherwise empty the intersection);
 * - with no known role left the context has no permission, every role's restrictions (the union) and
 *   no row of a table any role filters: the most restrictive view there is.
 */
export class PolicySet {
  /** Where the policies come from (a file path, or `policies`), for error messages. */
  readonly source: string;
  /** Every role's row filters, in file order. */
  readonly rowFilterEntries: readonly RowFilterEntry[];
  /** Tables some role filters. */
  readonly filteredTables: ReadonlySet<string>;
  private readonly byRole: ReadonlyMap<string, CompiledRole>;
  /** Union of every role's restrictions: what a caller without any known role is held to. */
  private readonly allRestrictions: ReadonlySet<string>;
  private readonly roleSets = new Map<string, RoleSetFilters | undefined>();
  private anonymous: CoreContext | undefined;

  constructor(document: PolicyDocument, source = 'policies') {
    this.source = source;
    const byRole = new Map<string, CompiledRole>();
    const all = new Set<string>();
    const entries: RowFilterEntry[] = [];
    const tables = new Set<string>();
    for (const [role, policy] of Object.entries(document.roles)) {
      const rowFilters = new Map<string, readonly RowFilterNode[]>();
      for (const [table, nodes] of Object.entries(policy.row_filters ?? {})) {
        const path = toJsonPath(`/roles/${pointerKey(role)}/row_filters/${pointerKey(table)}`);
        const frozen = deepFreeze(structuredClone(nodes)) as readonly RowFilterNode[];
        rowFilters.set(table, frozen);
        entries.push({ role, table, nodes: frozen, path });
        tables.add(table);
      }
      byRole.set(role, {
        name: role,
        permissions: new Set(policy.permissions),
        restrictedFields: new Set(policy.restricted_fields),
        rowFilters,
      });
      for (const entry of policy.restricted_fields) all.add(entry);
    }
    this.byRole = byRole;
    this.allRestrictions = all;
    this.rowFilterEntries = entries;
    this.filteredTables = tables;
  }

  /** Role names defined by the policies, in file order. */
  get roleNames(): string[] {
    return [...this.byRole.keys()];
  }

  hasRole(role: string): boolean {
    return this.byRole.has(role);
  }

  contextFor(principal: Principal): CoreContext {
    const known: CompiledRole[] = [];
    for (const role of principal.roles) {
      const compiled = this.byRole.get(role);
      if (compiled !== undefined) known.push(compiled);
    }

    const permissions = new Set<string>();
    let restricted: Set<string>;
    if (known.length === 0) {
      restricted = new Set(this.allRestrictions);
    } else {
      restricted = new Set(known[0]!.restrictedFields);
      for (const role of known) {
        for (const permission of role.permissions) permissions.add(permission);
        if (role !== known[0]) {
          for (const entry of restricted) if (!role.restrictedFields.has(entry)) restricted.delete(entry);
        }
      }
    }

    const rowFilters = this.rowFiltersOf(known);
    return Object.freeze({
      sub: principal.sub,
      roles: Object.freeze([...principal.roles]),
      permissions,
      restrictedFields: restricted,
      ...(principal.claims === undefined ? {} : { claims: principal.claims }),
      ...(rowFilters === undefined ? {} : { rowFilters }),
    });
  }

  /**
   * The row filters of a set of known roles, shared by every context with the same roles; undefined
   * when none of them filters any table (and some do), so such a caller pays nothing.
   */
  private rowFiltersOf(known: readonly CompiledRole[]): RowFilterSource | undefined {
    if (this.filteredTables.size === 0) return undefined;
    const names = known.map((role) => role.name).sort();
    const key = names.join('\u0000');
    if (this.roleSets.has(key)) return this.roleSets.get(key);
    const sorted = names.map((name) => this.byRole.get(name)!);
    const filters =
      sorted.length > 0 && sorted.every((role) => role.rowFilters.size === 0)
        ? undefined
        : new RoleSetFilters(this, sorted);
    if (this.roleSets.size < MAX_ROLE_SETS) this.roleSets.set(key, filters);
    return filters;
  }

  /** The context of a request without credential (role `anonymous`); computed once. */
  anonymousContext(): CoreContext {
    this.anonymous ??= this.contextFor({ sub: null, roles: [ANONYMOUS_ROLE] });
    return this.anonymous;
  }
}

/**
 * The row filters of the known roles of a caller, per table and action, combined once and kept:
 *
 * - a table none of the roles filters: every row (null);
 * - otherwise the rows some role granting `<table>:<action>` sees: the OR of those roles' filters,
 *   every row if one of them has no filter for the table. Where no role grants the action (a relation
 *   included from another table, which needs no permission of its own), every role counts;
 * - without any known role: no row of a table some role filters.
 *
 * Leaves that every combined filter has at its top level stay at the top level of the result, so a
 * field bound to a claim in each of them is still bound (see `BaseRepository.create`).
 */
class RoleSetFilters implements RowFilterSource {
  private readonly cache = new Map<string, readonly RowFilterNode[] | null>();

  constructor(
    readonly origin: PolicySet,
    private readonly roles: readonly CompiledRole[],
  ) {}

  filterFor(table: string, action: string): readonly RowFilterNode[] | null {
    const key = `${table}\u0000${action}`;
    let filter = this.cache.get(key);
    if (filter === undefined) {
      filter = this.combine(table, action);
      this.cache.set(key, filter);
    }
    return filter;
  }

  private combine(table: string, action: string): readonly RowFilterNode[] | null {
    if (this.roles.length === 0) return this.origin.filteredTables.has(table) ? NO_ROWS : null;
    if (!this.roles.some((role) => role.rowFilters.has(table))) return null;
    const permission = `${table}:${action}`;
    const granting = this.roles.filter((role) => grants(role.permissions, permission));
    const pool = granting.length > 0 ? granting : this.roles;
    const lists: (readonly RowFilterNode[])[] = [];
    for (const role of pool) {
      const filter = role.rowFilters.get(table);
      if (filter === undefined) return null;
      lists.push(filter);
    }
    return Object.freeze(combineFilters(lists));
  }
}

/** The OR of filters (each an AND of its nodes), with the top-level nodes all of them share hoisted. */
function combineFilters(lists: readonly (readonly RowFilterNode[])[]): readonly RowFilterNode[] | null {
  if (lists.length === 1) return lists[0]!;
  const texts = lists.map((list) => list.map((node) => JSON.stringify(node)));
  const common: RowFilterNode[] = [];
  const rests = lists.map((list) => [...list]);
  const restTexts = texts.map((list) => [...list]);
  for (const [i, node] of lists[0]!.entries()) {
    const text = texts[0]![i]!;
    if (!restTexts.every((list) => list.includes(text))) continue;
    common.push(node);
    restTexts.forEach((list, k) => {
      const at = list.indexOf(text);
      list.splice(at, 1);
      rests[k]!.splice(at, 1);
    });
  }
  // A filter left with nothing but the common part lets through every row the common part does.
  if (rests.some((rest) => rest.length === 0)) return common.length === 0 ? null : common;
  const branches = rests.map((rest): RowFilterNode => (rest.length === 1 ? rest[0]! : { op: 'and', items: rest }));
  return [...common, { op: 'or', items: branches }];
}

/** Exact permission match, plus `*` and `<table>:*` wildcards (as `hasPermission`, for one role). */
function grants(permissions: ReadonlySet<string>, action: string): boolean {
  if (permissions.has(action) || permissions.has('*')) return true;
  const colon = action.indexOf(':');
  return colon > 0 && permissions.has(`${action.slice(0, colon)}:*`);
}

/**
 * Loads and validates policies from a JSON file (path string or file URL) or an already parsed object.
 * Throws `PolicyError` naming the source and the JSON path of the first problems, e.g.
 * `src/policies.json: $.roles.viewer.permissions[0] must be string`.
 */
export function loadPolicies(source: string | URL | PolicyDocument | PolicySet): PolicySet {
  if (source instanceof PolicySet) return source;
  if (typeof source === 'string' || source instanceof URL) {
    const path = typeof source === 'string' ? source : fileURLToPath(source);
    return new PolicySet(validatePolicies(readPoliciesFile(path), path), path);
  }
  return new PolicySet(validatePolicies(source, 'policies'), 'policies');
}

function readPoliciesFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new PolicyError(
      `Cannot read the policies file ${path} (${code}); create it with a "roles" object (see src/policies.json of a new project).`,
      { cause: error },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new PolicyError(`The policies file ${path} is not valid JSON: ${(error as Error).message}.`, {
      cause: error,
    });
  }
}

function validatePolicies(value: unknown, source: string): PolicyDocument {
  if (validator.Check(value)) {
    checkRowFilterShapes(value, source);
    return value;
  }
  // TypeBox reports a failed `additionalProperties: false` twice (as a `false` sub-schema too); keep
  // one line per instance path and keyword, and only the first few so the message stays readable.
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const error of validator.Errors(value)) {
    if (error.keyword === 'boolean') continue;
    const line = `${toJsonPath(error.instancePath)} ${describe(error.instancePath, error.keyword, error.message, error.params)}`;
    if (seen.has(line)) continue;
    seen.add(line);
    problems.push(line);
  }
  const shown = problems.slice(0, 5).join('; ');
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
  throw new PolicyError(
    `${source}: ${shown}${more}. Expected { "roles": { "<role>": { "permissions": string[], "restricted_fields": string[], "row_filters"?: { "<table>": filter[] } } } }.`,
  );
}

function describe(pointer: string, keyword: string, message: string, params: unknown): string {
  if (keyword === 'pattern') {
    return pointer.includes('/restricted_fields/')
      ? 'must look like "<table>.<field>" (e.g. "tasks.assignee_email"), without whitespace'
      : 'must be a permission without whitespace (e.g. "tasks:view", "tasks:*" or "*")';
  }
  if (keyword === 'additionalProperties' && isRecord(params) && Array.isArray(params['additionalProperties'])) {
    return `has unexpected key(s) ${params['additionalProperties'].map((k) => JSON.stringify(k)).join(', ')}`;
  }
  return message;
}

/** Operators a `$claim` value may be used with: a scalar claim with eq and ne, an array claim with in and nin. */
const CLAIM_OPERATORS: ReadonlySet<string> = new Set(['eq', 'ne', 'in', 'nin']);
/** Deeper groups than this are a mistake, not a policy. */
const MAX_FILTER_DEPTH = 16;

/**
 * The structure of every row filter: nodes are groups `{ op: 'and' | 'or', items }` or leaves
 * `{ field, op, value }`; a `$claim` value is `{ "$claim": "<dotted path>" }` and goes with eq, ne, in
 * or nin. Fields and operators are checked against the models later (`checkRowFilterModels`).
 */
function checkRowFilterShapes(document: PolicyDocument, source: string): void {
  const problems: string[] = [];
  for (const [role, policy] of Object.entries(document.roles)) {
    for (const [table, nodes] of Object.entries(policy.row_filters ?? {})) {
      const base = toJsonPath(`/roles/${pointerKey(role)}/row_filters/${pointerKey(table)}`);
      nodes.forEach((node, i) => {
        checkFilterNode(node, `${base}[${i}]`, 0, problems);
      });
    }
  }
  if (problems.length === 0) return;
  const shown = problems.slice(0, 5).join('; ');
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
  throw new PolicyError(
    `${source}: ${shown}${more}. A row filter is a list of { "field", "op", "value" } and { "op": "and" | "or", "items" } nodes, as in a search.`,
  );
}

function checkFilterNode(node: unknown, path: string, depth: number, problems: string[]): void {
  if (!isRecord(node) || Array.isArray(node)) {
    problems.push(`${path} must be an object: { "field", "op", "value" } or { "op": "and" | "or", "items" }`);
    return;
  }
  const op = node['op'];
  if (op === 'and' || op === 'or') {
    const extra = Object.keys(node).filter((key) => key !== 'op' && key !== 'items');
    if (extra.length > 0)
      problems.push(`${path} has unexpected key(s) ${extra.map((k) => JSON.stringify(k)).join(', ')}`);
    const items = node['items'];
    if (!Array.isArray(items)) {
      problems.push(`${path}.items must be an array of filter nodes`);
      return;
    }
    if (depth >= MAX_FILTER_DEPTH) {
      problems.push(`${path} nests groups more than ${MAX_FILTER_DEPTH} levels deep`);
      return;
    }
    items.forEach((item, i) => {
      checkFilterNode(item, `${path}.items[${i}]`, depth + 1, problems);
    });
    return;
  }
  if ('items' in node && !('field' in node)) {
    problems.push(`${path}.op ${JSON.stringify(op)} is not a group operator: a group's op is "and" or "or"`);
    return;
  }
  const extra = Object.keys(node).filter((key) => key !== 'field' && key !== 'op' && key !== 'value');
  if (extra.length > 0)
    problems.push(`${path} has unexpected key(s) ${extra.map((k) => JSON.stringify(k)).join(', ')}`);
  const field = node['field'];
  if (typeof field !== 'string' || field === '') problems.push(`${path}.field must be a field name or relation path`);
  if (typeof op !== 'string' || op === '') {
    problems.push(`${path}.op must be an operator (eq, ne, in, …) or "and" / "or" with items`);
    return;
  }
  const value = node['value'];
  if (isClaimValue(value)) {
    if (!/^[^.\s]+(\.[^.\s]+)*$/.test(value.$claim))
      problems.push(`${path}.value.$claim must be a claim name or dotted path (e.g. "sub", "org.id")`);
    if (!CLAIM_OPERATORS.has(op))
      problems.push(`${path}.op ${JSON.stringify(op)} cannot take a $claim value: use eq, ne, in or nin`);
    return;
  }
  if (isRecord(value) && !Array.isArray(value)) {
    problems.push(`${path}.value must be a JSON scalar, an array, or { "$claim": "<claim path>" }`);
  }
}

/** A key as one JSON-pointer segment. */
function pointerKey(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

/** `/roles/viewer/permissions/0` → `$.roles.viewer.permissions[0]` (JSON pointer → JSONPath). */
function toJsonPath(pointer: string): string {
  if (pointer === '') return '$';
  let out = '$';
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(key)) out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
