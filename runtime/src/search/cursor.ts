import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomFillSync } from 'node:crypto';
import { invalid } from './issues.js';

/** What a cursor carries once decrypted. */
export interface CursorPayload {
  /** Model class name the cursor was issued for. */
  readonly model: string;
  /** Hash of the sort and filters it was issued for (see `cursorBinding`). */
  readonly binding: string;
  /** Raw sort-key values of the last row of the page, in sort-key order. */
  readonly values: readonly unknown[];
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const AAD = Buffer.from('core/search-cursor/v1');

/**
 * Opaque keyset cursors: `base64url(version ‖ iv ‖ tag ‖ AES-256-GCM(JSON payload))`. The key is
 * derived from the database's cursor secret with HKDF-SHA256, so cursors reveal no field values and
 * any change to one fails authentication. One codec per secret.
 */
export class CursorCodec {
  private static readonly bySecret = new Map<string, CursorCodec>();
  private readonly key: Buffer;

  private constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'core-cursor-salt', 'core/search-cursor/aes-256-gcm', 32));
  }

  static forSecret(secret: string): CursorCodec {
    let codec = CursorCodec.bySecret.get(secret);
    if (!codec) {
      codec = new CursorCodec(secret);
      CursorCodec.bySecret.set(secret, codec);
    }
    return codec;
  }

  encode(payload: CursorPayload): string {
    const iv = nextIv();
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(AAD);
    const plain = JSON.stringify({ m: payload.model, b: payload.binding, k: payload.values });
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.of(VERSION), iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** Decrypts and checks a cursor; anything but one of ours, unmodified, is a ValidationError at `path`. */
  decode(token: string, path: string): CursorPayload {
    const bad = () => invalid(path, 'the cursor is not valid (it was changed, or issued by another server); start again from the first page', 'invalid_cursor');
    const raw = Buffer.from(token, 'base64url');
    if (raw.length < 1 + IV_BYTES + TAG_BYTES + 2 || raw[0] !== VERSION || raw.toString('base64url') !== token) throw bad();
    const iv = raw.subarray(1, 1 + IV_BYTES);
    const tag = raw.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
    let parsed: unknown;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAAD(AAD);
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([decipher.update(raw.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
      parsed = JSON.parse(plain.toString('utf8'));
    } catch {
      throw bad();
    }
    const p = parsed as { m?: unknown; b?: unknown; k?: unknown };
    if (typeof p.m !== 'string' || typeof p.b !== 'string' || !Array.isArray(p.k)) throw bad();
    return { model: p.m, binding: p.b, values: p.k };
  }
}

/**
 * What a cursor is bound to: the model, the effective sort (tiebreaker included) and the filters with
 * their values. A cursor presented with anything else is refused instead of silently paging through
 * a different result set.
 */
export function cursorBinding(model: string, sortSignature: string, filters: unknown): string {
  return createHash('sha256')
    .update(model)
    .update('\n')
    .update(sortSignature)
    .update('\n')
    .update(canonicalJson(filters ?? []))
    .digest('base64url')
    .slice(0, 22);
}

/** JSON with object keys sorted, so `{ field, op }` and `{ op, field }` bind the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Fresh random GCM IVs, taken from a pool of CSPRNG bytes refilled every 256 cursors: each IV is still
 * 96 random bits used once, but one `randomFillSync` serves 256 cursors (a call per cursor cost ~10 µs).
 */
const ivPool = Buffer.alloc(IV_BYTES * 256);
let ivOffset = ivPool.length;

function nextIv(): Buffer {
  if (ivOffset + IV_BYTES > ivPool.length) {
    randomFillSync(ivPool);
    ivOffset = 0;
  }
  const iv = Buffer.from(ivPool.subarray(ivOffset, ivOffset + IV_BYTES));
  ivOffset += IV_BYTES;
  return iv;
}
