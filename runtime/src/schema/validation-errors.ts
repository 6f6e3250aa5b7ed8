import type { TLocalizedValidationError } from 'typebox/error';
import { pointerToPath, type ErrorDetail } from '../errors.js';

/**
 * TypeBox errors → the contract's `details`: one entry per problem, `path` a dotted path into the
 * body (`title`, `tags[0]`; see `ErrorDetail`), `reason` the failed keyword. Messages come from TypeBox and name the rule, never
 * the value, so nothing the caller sent is echoed back.
 *
 * Two rewrites keep the list readable:
 * - one `required` error listing several properties becomes one detail per missing property;
 * - a failed `anyOf` (e.g. `string | null`) reports the branch that nearly matched (`maxLength`)
 *   when there is one, otherwise a single "must be string or null" instead of an error per branch.
 */
export function toErrorDetails(errors: readonly TLocalizedValidationError[]): ErrorDetail[] {
  const unions = errors.filter(isUnion);
  const inside = (e: TLocalizedValidationError, union: TLocalizedValidationError): boolean =>
    e !== union && e.schemaPath.startsWith(`${union.schemaPath}/${union.keyword}/`);
  const nested = (e: TLocalizedValidationError): boolean => unions.some((u) => inside(e, u));

  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  const push = (path: string, message: string, reason: string): void => {
    const key = `${path}\n${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      details.push({ path: pointerToPath(path), message, reason });
    }
  };
  const emit = (error: TLocalizedValidationError): void => {
    if (error.keyword !== 'required') {
      push(error.instancePath, error.message, error.keyword);
      return;
    }
    const missing = (error.params as { requiredProperties?: unknown }).requiredProperties;
    for (const name of Array.isArray(missing) ? missing : []) {
      push(`${error.instancePath}/${escapePointer(String(name))}`, 'is required', 'required');
    }
  };

  for (const error of errors) {
    if (nested(error)) continue; // reported through its outermost union
    if (!isUnion(error)) {
      emit(error);
      continue;
    }
    const branches = errors.filter((e) => inside(e, error));
    // A branch "nearly matched" when it failed on something other than the value's type at this spot.
    const near = branches.filter(
      (b) => !isUnion(b) && (b.instancePath !== error.instancePath || (b.keyword !== 'type' && b.keyword !== 'const')),
    );
    if (near.length > 0) {
      near.forEach(emit);
      continue;
    }
    // One alternative per branch: its constant when it has one, else its type(s).
    const alternatives = new Map<string, string[]>();
    for (const b of branches) {
      if (b.instancePath !== error.instancePath) continue;
      const branch = b.schemaPath.slice(error.schemaPath.length).split('/').slice(0, 3).join('/');
      const list = alternatives.get(branch) ?? [];
      if (b.keyword === 'const')
        list.splice(0, list.length, JSON.stringify((b.params as { allowedValue?: unknown }).allowedValue));
      else if (b.keyword === 'type' && !list.some((x) => x.startsWith('"'))) {
        const t = (b.params as { type?: unknown }).type;
        list.push(...(Array.isArray(t) ? t.map(String) : [String(t)]));
      }
      alternatives.set(branch, list);
    }
    const all = [...alternatives.values()].flat();
    const options = [...new Set(all)];
    if (options.length === 0) push(error.instancePath, error.message, error.keyword);
    else
      push(error.instancePath, `must be ${options.join(' or ')}`, all.some((x) => x.startsWith('"')) ? 'enum' : 'type');
  }
  return details;
}

function isUnion(error: TLocalizedValidationError): boolean {
  return error.keyword === 'anyOf' || error.keyword === 'oneOf';
}

function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
