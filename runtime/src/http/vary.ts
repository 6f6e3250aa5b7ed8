import type { FastifyReply } from 'fastify';

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
