import type { FastifyReply } from 'fastify';
import { type CoreContext, getContext } from '../context/context.js';
import { scopingActive } from '../search/row-scope.js';

/**
 * Appends distinct header names to `Vary`, keeping existing values, comparing case-insensitively and
 * never adding a name twice; `Vary: *` already covers everything and stays as it is. It runs on every
 * response to a restricted caller, usually with no `Vary` yet: then the names are set as they are.
 */
export function appendVary(reply: FastifyReply, names: readonly string[]): void {
  const current = reply.getHeader('vary');
  if (current === undefined) {
    reply.header('vary', names.join(', '));
    return;
  }
  const values = splitVary(current);
  if (values.includes('*')) return;
  const seen = new Set(values.map((v) => v.toLowerCase()));
  const before = values.length;
  for (const name of names) {
    const key = name.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    values.push(name);
  }
  if (values.length > before) reply.header('vary', values.join(', '));
}

/** The names of a `Vary` header as Fastify holds it (a string, a list, or a number someone set). */
function splitVary(current: string | number | string[]): string[] {
  return (Array.isArray(current) ? current.join(',') : String(current))
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}

const VARY_ON_CREDENTIALS: readonly string[] = ['Authorization', 'Cookie'];

/**
 * `Vary: Authorization, Cookie` when the active caller has restricted fields or rows scoped to them
 * (row filters, or a row scope in code): a JSON answer then depends on who asks (masked fields,
 * narrowed schemas, other rows), so shared caches must key on the credentials. Call it for JSON responses only; Core's routes do (see `CoreAPIRoute`). Exported for
 * handlers of a Core route that send JSON text themselves (`reply.type('application/json').send(text)`),
 * which Core cannot see.
 */
export function varyOnCredentials(reply: FastifyReply): void {
  if (answerDependsOnCaller(getContext())) appendVary(reply, VARY_ON_CREDENTIALS);
}

function answerDependsOnCaller(ctx: CoreContext): boolean {
  return ctx.restrictedFields.size > 0 || scopingActive(ctx);
}

/** `varyOnCredentials` when the reply's content type, as set so far, is JSON (`…json…`, any case). */
export function varyOnCredentialsIfJson(reply: FastifyReply): void {
  if (answerDependsOnCaller(getContext()) && /json/i.test(String(reply.getHeader('content-type') ?? ''))) {
    appendVary(reply, VARY_ON_CREDENTIALS);
  }
}
