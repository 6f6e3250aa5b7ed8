import type { FastifyReply } from 'fastify';
import { getContext } from '../context/context.js';

/**
 * Appends header names to `Vary`, keeping existing values, comparing case-insensitively and never
 * adding a name twice; `Vary: *` already covers everything and stays as it is.
 */
export function appendVary(reply: FastifyReply, names: readonly string[]): void {
  const current = reply.getHeader('vary');
  const existing = (Array.isArray(current) ? current.join(',') : String(current ?? ''))
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (existing.includes('*')) return;
  const seen = new Set(existing.map((v) => v.toLowerCase()));
  const added = names.filter((name) => {
    const key = name.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (added.length) reply.header('vary', [...existing, ...added].join(', '));
}

const VARY_ON_CREDENTIALS: readonly string[] = ['Authorization', 'Cookie'];
const VARY_ON_CREDENTIALS_TEXT = VARY_ON_CREDENTIALS.join(', ');

/**
 * `appendVary(reply, VARY_ON_CREDENTIALS)`, with the usual case (no `Vary` yet) set in one call:
 * parsing and merging cost ~5 µs per restricted request in a by-id profile.
 */
function appendVaryOnCredentials(reply: FastifyReply): void {
  if (reply.getHeader('vary') === undefined) reply.header('vary', VARY_ON_CREDENTIALS_TEXT);
  else appendVary(reply, VARY_ON_CREDENTIALS);
}

/**
 * `Vary: Authorization, Cookie` when the active caller has restricted fields: a JSON answer then
 * depends on who asks (masked fields, narrowed schemas), so shared caches must key on the
 * credentials. Call it for JSON responses only; Core's routes do (see `CoreAPIRoute`). Exported for
 * handlers of a Core route that send JSON text themselves (`reply.type('application/json').send(text)`),
 * which Core cannot see.
 */
export function varyOnCredentials(reply: FastifyReply): void {
  if (getContext().restrictedFields.size > 0) appendVaryOnCredentials(reply);
}

/** `varyOnCredentials` when the reply's content type, as set so far, is JSON (`…json…`, any case). */
export function varyOnCredentialsIfJson(reply: FastifyReply): void {
  if (getContext().restrictedFields.size > 0 && /json/i.test(String(reply.getHeader('content-type') ?? ''))) {
    appendVaryOnCredentials(reply);
  }
}
