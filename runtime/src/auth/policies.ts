import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import type { CoreContext } from '../context/context.js';

/**
 * `src/policies.json`: role → granted permissions and restricted fields (docs/security.md). Validated with
 * TypeBox when loaded so a typo fails at startup with the JSON path, not as a silent "no permission".
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

/** Who is asking for a context: the `sub` claim (null when anonymous) and the claimed roles. */
export interface Principal {
  sub: string | null;
  roles: readonly string[];
}

interface CompiledRole {
  permissions: ReadonlySet<string>;
  restrictedFields: ReadonlySet<string>;
}

/**
 * The loaded policies. `contextFor` turns a principal into a `CoreContext`:
 * - permissions are the union over the caller's known roles;
 * - restricted fields are the intersection over the caller's known roles;
 * - roles absent from the policies are dropped first, so an unknown role grants nothing and can never
 *   relax a restriction (it would otherwise empty the intersection);
 * - with no known role left the context has no permission and every role's restrictions (the union):
 *   the most restrictive view there is.
 */
export class PolicySet {
  private readonly byRole: ReadonlyMap<string, CompiledRole>;
  /** Union of every role's restrictions: what a caller without any known role is held to. */
  private readonly allRestrictions: ReadonlySet<string>;
  private anonymous: CoreContext | undefined;

  constructor(document: PolicyDocument) {
    const byRole = new Map<string, CompiledRole>();
    const all = new Set<string>();
    for (const [role, policy] of Object.entries(document.roles)) {
      byRole.set(role, {
        permissions: new Set(policy.permissions),
        restrictedFields: new Set(policy.restricted_fields),
      });
      for (const entry of policy.restricted_fields) all.add(entry);
    }
    this.byRole = byRole;
    this.allRestrictions = all;
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

    return Object.freeze({
      sub: principal.sub,
      roles: Object.freeze([...principal.roles]),
      permissions,
      restrictedFields: restricted,
    });
  }

  /** The context of a request without credential (role `anonymous`); computed once. */
  anonymousContext(): CoreContext {
    this.anonymous ??= this.contextFor({ sub: null, roles: [ANONYMOUS_ROLE] });
    return this.anonymous;
  }
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
    return new PolicySet(validatePolicies(readPoliciesFile(path), path));
  }
  return new PolicySet(validatePolicies(source, 'policies'));
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
  if (validator.Check(value)) return value;
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
    `${source}: ${shown}${more}. Expected { "roles": { "<role>": { "permissions": string[], "restricted_fields": string[] } } }.`,
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
