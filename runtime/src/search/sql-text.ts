/**
 * Small SQL text helpers shared by the compilers: LIKE/GLOB escaping, bucketed `in` lists, aliases
 * and a bounded cache. Nothing here touches the database.
 */

/** Escapes `\`, `%` and `_` so a value matches literally inside a LIKE pattern with `escape '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Escapes GLOB's `*`, `?` and `[` so a value matches literally inside a SQLite GLOB pattern. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[]/g, (c) => `[${c}]`);
}

/**
 * A LIKE pattern (`%`, `_`, `\` escaping the next character) as the equivalent GLOB pattern. SQLite's
 * LIKE ignores ASCII case; GLOB does not, which makes `like` case-sensitive on SQLite as on PostgreSQL.
 * The caller has already rejected a pattern ending in a lone `\` (PostgreSQL refuses those).
 */
export function likeToGlob(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') out += escapeGlob(pattern[++i] ?? '');
    else if (c === '%') out += '*';
    else if (c === '_') out += '?';
    else out += escapeGlob(c);
  }
  return out;
}

/** True when the pattern ends with an escape character that escapes nothing. */
export function hasDanglingEscape(pattern: string): boolean {
  let run = 0;
  for (let i = pattern.length - 1; i >= 0 && pattern[i] === '\\'; i--) run++;
  return run % 2 === 1;
}

/**
 * `in` lists are padded up to the next power of two (repeating the last value, which changes nothing)
 * so a statement's text, and with it the prepared-statement cache entry, depends on the list's size
 * class rather than its exact length: 100 ids and 120 ids share one statement.
 */
export function bucketSize(n: number): number {
  if (n <= 2) return n;
  return 2 ** Math.ceil(Math.log2(n));
}

const placeholderCache = new Map<number, string>();

/** `(?, ?, ?)` with `n` placeholders. */
export function placeholders(n: number): string {
  let text = placeholderCache.get(n);
  if (text === undefined) {
    text = `(${new Array<string>(n).fill('?').join(', ')})`;
    if (n <= 2048) placeholderCache.set(n, text);
  }
  return text;
}

/** `values` padded to `size` by repeating its last element. */
export function padValues(values: readonly unknown[], size: number): unknown[] {
  const out = values.slice();
  const last = values[values.length - 1];
  while (out.length < size) out.push(last);
  return out;
}

/** Hands out statement-unique table aliases (`t0`, `j1`, `e2`…). */
export class AliasAllocator {
  private n = 0;
  next(prefix: string): string {
    return `${prefix}${this.n++}`;
  }

  /** Aliases handed out so far: one per table of the statement. */
  get count(): number {
    return this.n;
  }
}

/** A map that forgets its oldest entry past `max` entries: compiled shapes must not grow without bound. */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    if (this.map.size >= this.max && !this.map.has(key)) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(key, value);
  }

  get size(): number {
    return this.map.size;
  }
}

/** Counts the `?` placeholders of a caller's fragment (Core's SQL never holds a literal `?`). */
export function countPlaceholders(sql: string): number {
  let n = 0;
  for (let i = 0; i < sql.length; i++) if (sql.charCodeAt(i) === 63) n++;
  return n;
}
