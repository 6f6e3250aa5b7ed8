/**
 * Entity tags of records: what `GET /tasks/{id}` sends as `ETag` and what `If-Match` is compared with.
 *
 * A tag is a strong validator, `"` + 22 base64url characters + `"`: the first 132 bits of a SHA-256
 * over a key derived from the database's secret (`SECRET_KEY`) followed by the record's stored state
 * (see record-tags.ts). Keyed, so a tag says nothing about the values it covers, not even to a caller
 * who can guess them; a caller who may not see a field cannot learn its value from the tag, only that
 * something changed. The README of this folder explains the whole mechanism.
 */
import { hash, hkdfSync } from 'node:crypto';

const KEY_BYTES = 32;
/** 22 base64url characters: 132 bits of the digest. */
const TAG_CHARS = 22;

/**
 * Tags with one key per secret: SHA-256 of the key (base64url), a NUL, then the message, in one
 * one-shot `crypto.hash` call.
 *
 * Not HMAC, which hashes twice: each call into `crypto.hash` costs about as much as the hashing
 * itself, and GET by id computes a tag on every request (docs/performance.md, "The ETag" under "What
 * a request costs"). What HMAC's second hash adds is protection from length extension, where someone
 * who holds a digest computes the digest of a longer message under the same unknown key. A tag is a
 * truncated digest, which does not hold the hash's state that such an extension starts from, and
 * nothing trusts a tag a client sends: it is only compared with the record's current one. What a tag
 * must do it does with the key in front: equal for equal states, different for different ones, and
 * not computable without the key.
 */
export class ETagSigner {
  private static readonly bySecret = new Map<string, ETagSigner>();
  /** The key, base64url, and the NUL that ends it (no base64url character is NUL). */
  private readonly prefix: string;

  private constructor(secret: string) {
    const key = Buffer.from(hkdfSync('sha256', secret, 'core-etag-salt', 'core/etag/sha256-keyed', KEY_BYTES));
    this.prefix = `${key.toString('base64url')}\u0000`;
  }

  static forSecret(secret: string): ETagSigner {
    let signer = ETagSigner.bySecret.get(secret);
    if (!signer) ETagSigner.bySecret.set(secret, (signer = new ETagSigner(secret)));
    return signer;
  }

  /** The quoted tag of `message`. */
  tag(message: string): string {
    return `"${this.mac(message).slice(0, TAG_CHARS)}"`;
  }

  /** SHA-256 of the key, a NUL and `message` (UTF-8), base64url. */
  mac(message: string): string {
    return hash('sha256', this.prefix + message, 'base64url');
  }
}

/**
 * One stored value as text, the same for equal values and different for different ones. The parts of
 * a tag's message are joined with NUL, which only a string's form may contain (JSON escapes it
 * elsewhere), and that form gives the string's length before its text, so where it ends is known.
 */
export function canonicalValue(value: unknown): string {
  if (value === null || value === undefined) return 'N';
  switch (typeof value) {
    case 'string':
      // The text as it is, without JSON's escaping (a call into the runtime per column), except a
      // string with a lone surrogate: UTF-8, which the hash reads, has no such character and would
      // turn it into U+FFFD, so two different strings would give one tag. JSON escapes it.
      return isWellFormed(value) ? `S${value.length}:${value}` : JSON.stringify(value);
    case 'number':
    case 'bigint':
      return `#${value}`;
    case 'boolean':
      return value ? 'T' : 'F';
  }
  if (value instanceof Date) return `@${value.getTime()}`;
  if (ArrayBuffer.isView(value))
    return `x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
  // json columns (objects, arrays) as their JSON text; a bigint inside one as its digits
  return `J${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`;
}

// `String.prototype.isWellFormed` is in Node 20 (V8 11.3), not in the ES2023 library the types use.
const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * An `If-Match` header, parsed: `*` (any current record), the strong tags it lists, or malformed.
 * Weak tags (`W/"…"`) are dropped: `If-Match` compares strongly, so they can never match.
 */
export interface IfMatch {
  readonly any: boolean;
  readonly tags: readonly string[];
  /** Not `*` nor a list of entity tags: nothing can match it. */
  readonly malformed: boolean;
}

const MALFORMED: IfMatch = Object.freeze({ any: false, tags: [], malformed: true });

/**
 * Parses `If-Match = "*" / #entity-tag` (RFC 9110), where `entity-tag = [ W/ ] DQUOTE *etagc DQUOTE`;
 * empty list elements are allowed, an empty header is not. Repeated headers arrive joined by commas.
 */
export function parseIfMatch(header: string | readonly string[]): IfMatch {
  const text = (typeof header === 'string' ? header : header.join(',')).trim();
  if (text === '*') return { any: true, tags: [], malformed: false };
  const tags: string[] = [];
  let i = 0;
  let elements = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x2c || c === 0x20 || c === 0x09) {
      i++; // list separators and whitespace around them
      continue;
    }
    let weak = false;
    if (c === 0x57 && text.charCodeAt(i + 1) === 0x2f) {
      weak = true;
      i += 2;
    }
    if (text.charCodeAt(i) !== 0x22) return MALFORMED;
    const start = i;
    i++;
    // etagc = %x21 / %x23-7E / obs-text
    while (i < text.length && isEtagc(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 0x22) return MALFORMED;
    i++;
    if (!weak) tags.push(text.slice(start, i));
    elements++;
    while (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x09) i++;
    if (i < text.length && text.charCodeAt(i) !== 0x2c) return MALFORMED;
  }
  return elements === 0 ? MALFORMED : { any: false, tags, malformed: false };
}

function isEtagc(c: number): boolean {
  return c === 0x21 || (c >= 0x23 && c <= 0x7e) || (c >= 0x80 && c <= 0xff);
}

/** Whether a record whose current tag is `tag` satisfies the condition (strong comparison). */
export function ifMatchAccepts(condition: IfMatch, tag: string): boolean {
  return condition.any || condition.tags.includes(tag);
}

/** Tags of rows returned by writes that were asked for one (`UpdateOptions.etag`). */
const rowTags = new WeakMap<object, string>();

/** Records `tag` as the ETag of `row` (the object a repository write returns). */
export function setRowETag(row: object, tag: string): void {
  rowTags.set(row, tag);
}

/**
 * The ETag of a row a repository write returned, when the write was asked for it: a router reads it
 * for the response's `ETag` header. Undefined for any other object.
 */
export function etagOf(row: object): string | undefined {
  return rowTags.get(row);
}
