import { createCipheriv, createDecipheriv, hash, hkdfSync, randomFillSync, timingSafeEqual } from 'node:crypto';
import type { ValidationError } from '../errors.js';
import { invalid } from '../model/issues.js';
import type { FilterGroup, FilterNode } from './search-request.js';
import type { CompiledShape } from './shape-compiler.js';

/** What a cursor carries once opened. */
export interface CursorPayload {
  /** What the cursor was issued for: model, sort and filters (see `cursorBinding`). */
  readonly binding: string;
  /** Raw sort-key values of the last row of the page, in sort-key order. */
  readonly values: readonly unknown[];
}

/**
 * First byte of a cursor: its form. 3 and 4 are issued; 1 and 2 (which also carried the model name in
 * a JSON object) are still read, so cursors handed out before an upgrade keep paging.
 */
const SEALED_JSON = 1;
const SIGNED_JSON = 2;
const SIGNED = 3;
const SEALED = 4;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Version byte, IV and tag come before the ciphertext. */
const SEALED_HEADER = 1 + IV_BYTES + TAG_BYTES;
/** Version byte and MAC come before the body. */
const SIGNED_HEADER = 1 + TAG_BYTES;
const HMAC_BLOCK = 64;
const SHA256_BYTES = 32;
/** Characters of a binding: 96 bits of SHA-256, enough that two different requests never share one. */
const BINDING_CHARS = 16;

/**
 * Opaque keyset cursors, in two forms that `decode` tells apart by their first byte. The body of both
 * is `n ‖ binding (n bytes) ‖ JSON array of the sort values`:
 *
 * - **signed** (the usual one): `base64url(3 ‖ mac ‖ body)`, where `mac` is the first 16 bytes of
 *   HMAC-SHA256 over the version byte and the body. The body is readable by whoever holds the cursor,
 *   but any change to it fails the MAC. Its values are the sort-key values of the last row of the page
 *   the caller has just received, so they tell the holder nothing that page did not.
 * - **sealed**: `base64url(4 ‖ iv ‖ tag ‖ AES-256-GCM(body))`, for the one case where a value is hidden
 *   from the caller: a restricted primary key, which every sort gets as its tiebreaker.
 *
 * Signing is the default because it is cheaper where it counts: under load, opening a sealed cursor
 * took about 30 µs of a 290 µs keyset page, mostly OpenSSL's per-cipher set-up, while the MAC is two
 * one-shot `crypto.hash` calls, whose digest Node keeps fetched (runtime/src/search/README.md has the
 * numbers). The body is binary rather than one JSON object so the cursor stays short: it travels in
 * the URL of every next-page request. Keys are derived from the database's cursor secret with
 * HKDF-SHA256, one per form. One codec per secret.
 */
export class CursorCodec {
  private static readonly bySecret = new Map<string, CursorCodec>();
  private readonly key: Buffer;
  /**
   * HMAC's inputs (RFC 2104), reused by every call (`mac` runs synchronously): `inner` starts with
   * key ⊕ ipad, one block, followed by the message; `outer` is key ⊕ opad, one block, then the inner
   * digest.
   */
  private inner: Buffer;
  private readonly outer: Buffer;
  /** The expected tag of the cursor being verified, for `timingSafeEqual`. */
  private readonly expectedTag = Buffer.alloc(TAG_BYTES);
  /** The bytes of the cursor being opened (`decoded`). */
  private scratch = Buffer.alloc(512);

  private constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'core-cursor-salt', 'core/search-cursor/aes-256-gcm', 32));
    const macKey = Buffer.from(hkdfSync('sha256', secret, 'core-cursor-salt', 'core/search-cursor/hmac-sha256', 32));
    this.inner = Buffer.alloc(HMAC_BLOCK + 256, 0x36);
    this.outer = Buffer.alloc(HMAC_BLOCK + SHA256_BYTES, 0x5c);
    for (let i = 0; i < macKey.length; i++) {
      this.inner[i]! ^= macKey[i]!;
      this.outer[i]! ^= macKey[i]!;
    }
  }

  static forSecret(secret: string): CursorCodec {
    let codec = CursorCodec.bySecret.get(secret);
    if (!codec) {
      codec = new CursorCodec(secret);
      CursorCodec.bySecret.set(secret, codec);
    }
    return codec;
  }

  /** A cursor for `payload`: signed, or sealed when `seal` (a value in it is hidden from the caller). */
  encode(payload: CursorPayload, options: { seal?: boolean } = {}): string {
    const { binding } = payload;
    if (binding.length > 255 || Buffer.byteLength(binding) !== binding.length)
      throw new Error('a cursor binding is at most 255 ASCII characters');
    const values = JSON.stringify(payload.values);
    // A signed cursor is written in place after room for its header; a sealed one's body is encrypted.
    const header = options.seal ? 0 : SIGNED_HEADER;
    const out = Buffer.allocUnsafe(header + 1 + binding.length + Buffer.byteLength(values));
    out[header] = binding.length;
    out.write(binding, header + 1, 'latin1');
    out.write(values, header + 1 + binding.length, 'utf8');
    if (options.seal) return this.seal(out);
    out[0] = SIGNED;
    out.write(this.mac(SIGNED, out.subarray(SIGNED_HEADER)), 1, TAG_BYTES, 'latin1');
    return out.toString('base64url');
  }

  /** Opens and checks a cursor of any form; anything but one of ours, unmodified, is a ValidationError at `path`. */
  decode(token: string, path: string): CursorPayload {
    const raw = this.decoded(token);
    if (raw === null || raw.length < 3) throw badCursor(path);
    let payload: CursorPayload | null = null;
    try {
      switch (raw[0]) {
        case SIGNED:
          payload = bodyPayload(this.verified(raw));
          break;
        case SEALED:
          payload = bodyPayload(this.opened(raw));
          break;
        case SIGNED_JSON:
          payload = jsonPayload(this.verified(raw));
          break;
        case SEALED_JSON:
          payload = jsonPayload(this.opened(raw));
          break;
      }
    } catch {
      // a MAC, tag, length or JSON that does not check out: the same answer as an unknown form
    }
    if (payload === null) throw badCursor(path);
    return payload;
  }

  /**
   * The bytes of `token` in a buffer the codec keeps (valid until the next call), or null if `token`
   * is not the one base64url spelling of its bytes (see `decodeBase64url`).
   */
  private decoded(token: string): Buffer | null {
    // 4 characters carry 3 bytes.
    const room = Math.ceil((token.length * 3) / 4);
    if (room > this.scratch.length) this.scratch = Buffer.allocUnsafe(room);
    const length = decodeBase64url(token, this.scratch);
    return length < 0 ? null : this.scratch.subarray(0, length);
  }

  /** The body of a signed cursor whose MAC checks out; throws otherwise. */
  private verified(raw: Buffer): Buffer {
    if (raw.length < SIGNED_HEADER + 2) throw new Error('short');
    const body = raw.subarray(SIGNED_HEADER);
    this.expectedTag.write(this.mac(raw[0]!, body), 0, TAG_BYTES, 'latin1');
    if (!timingSafeEqual(raw.subarray(1, SIGNED_HEADER), this.expectedTag)) throw new Error('mac');
    return body;
  }

  /**
   * HMAC-SHA256 (RFC 2104) of the version byte and `body`, as a latin1 string (one character per byte):
   * H(K ⊕ opad ‖ H(K ⊕ ipad ‖ message)), with one-shot `crypto.hash` calls into the two reused inputs
   * (the test checks it against `createHmac`). Not `createHmac` itself: its per-call set-up cost about
   * 19 µs more per page request in the server (list 248 against 229 µs, keyset 265 against 246,
   * interleaved). And digests come back as strings: `hash(…, 'buffer')` allocates a new ArrayBuffer
   * per call, which took 0.8–1.1 µs a digest against 0.25 µs for a latin1 string (Node 20).
   */
  private mac(version: number, body: Buffer): string {
    const length = HMAC_BLOCK + 1 + body.length;
    if (length > this.inner.length) {
      const grown = Buffer.allocUnsafe(length * 2);
      this.inner.copy(grown, 0, 0, HMAC_BLOCK);
      this.inner = grown;
    }
    this.inner[HMAC_BLOCK] = version;
    body.copy(this.inner, HMAC_BLOCK + 1);
    this.outer.write(hash('sha256', this.inner.subarray(0, length), 'binary'), HMAC_BLOCK, SHA256_BYTES, 'latin1');
    return hash('sha256', this.outer, 'binary');
  }

  private seal(body: Buffer): string {
    const iv = nextIv();
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(aadOf(SEALED));
    const encrypted = cipher.update(body);
    cipher.final(); // GCM is a stream mode: no bytes are held back
    const out = Buffer.allocUnsafe(SEALED_HEADER + encrypted.length);
    out[0] = SEALED;
    iv.copy(out, 1);
    cipher.getAuthTag().copy(out, 1 + IV_BYTES);
    encrypted.copy(out, SEALED_HEADER);
    return out.toString('base64url');
  }

  /** The body of a sealed cursor that decrypts and authenticates; throws otherwise. */
  private opened(raw: Buffer): Buffer {
    if (raw.length < SEALED_HEADER + 2) throw new Error('short');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(aadOf(raw[0]!));
    decipher.setAuthTag(raw.subarray(1 + IV_BYTES, SEALED_HEADER));
    const plain = decipher.update(raw.subarray(SEALED_HEADER));
    decipher.final(); // checks the tag; in GCM it returns no further bytes
    return plain;
  }
}

/** The 6-bit value of each base64url character by its code, -1 for every other character. */
const SEXTETS = new Int8Array(128).fill(-1);
for (const [i, char] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].entries())
  SEXTETS[char.charCodeAt(0)] = i;

/**
 * Decodes `token` into `out` (room for 3 bytes per 4 characters) and returns the byte count, or -1 if
 * `token` is not the only base64url spelling of its bytes: a character outside the alphabet (padding
 * included), a length no byte count has, or unused low bits set in the last character. Node's decoder
 * skips such characters and bits instead; decoding with it and encoding again to compare cost a keyset
 * page about 13 µs more than this loop in a server under load, where the base64 code and the second
 * string are cold by every next page request (docs/performance.md, the notes on keyset ÷ first page).
 */
function decodeBase64url(token: string, out: Buffer): number {
  const length = token.length;
  if (length % 4 === 1) return -1;
  let bytes = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < length; i++) {
    const code = token.charCodeAt(i);
    const sextet = code < 128 ? SEXTETS[code]! : -1;
    if (sextet < 0) return -1;
    acc = ((acc << 6) | sextet) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[bytes++] = (acc >>> bits) & 0xff;
    }
  }
  // What is left (2 or 4 bits) pads the last character: it must be zero.
  return (acc & ((1 << bits) - 1)) === 0 ? bytes : -1;
}

/** The authenticated data of a sealed form: its version, so a cursor cannot be relabelled as another form. */
const aads = new Map<number, Buffer>();
function aadOf(version: number): Buffer {
  let aad = aads.get(version);
  if (!aad) aads.set(version, (aad = Buffer.from(`core/search-cursor/v${version}`)));
  return aad;
}

/** `n ‖ binding ‖ JSON array`, as forms 3 and 4 carry it. */
function bodyPayload(body: Buffer): CursorPayload | null {
  const end = 1 + body[0]!;
  if (body.length < end + 2) return null;
  const values: unknown = JSON.parse(body.toString('utf8', end));
  return Array.isArray(values) ? { binding: body.toString('latin1', 1, end), values } : null;
}

/**
 * `{ "m": model, "b": binding, "k": values }`, as forms 1 and 2 carried it. The model is in the binding
 * too; the binding was longer then, and its first characters are today's.
 */
function jsonPayload(body: Buffer): CursorPayload | null {
  const p = JSON.parse(body.toString('utf8')) as { m?: unknown; b?: unknown; k?: unknown } | null;
  if (typeof p?.m !== 'string' || typeof p.b !== 'string' || !Array.isArray(p.k)) return null;
  return { binding: p.b.slice(0, BINDING_CHARS), values: p.k };
}

function badCursor(path: string): ValidationError {
  return invalid(
    path,
    'the cursor is not valid (it was changed, or issued by another server); start again from the first page',
    'invalid_cursor',
  );
}

/** Bindings of unfiltered requests: they depend only on the shape (its model and sort). */
const unfilteredBindings = new WeakMap<CompiledShape, string>();

/**
 * What a cursor is bound to: the model, the effective sort (tiebreaker included) and the filters with
 * their values. A cursor presented with anything else is refused instead of silently paging through
 * a different result set. `filters` must have passed `analyzeRequest`.
 */
export function cursorBinding(shape: CompiledShape, filters: readonly FilterNode[]): string {
  if (filters.length === 0) {
    let binding = unfilteredBindings.get(shape);
    if (binding === undefined) unfilteredBindings.set(shape, (binding = bindingOf(shape, '')));
    return binding;
  }
  return bindingOf(shape, filtersText(filters));
}

function bindingOf(shape: CompiledShape, filters: string): string {
  return hash('sha256', `${shape.info.className}\n${shape.sort.signature}\n${filters}`, 'base64url').slice(
    0,
    BINDING_CHARS,
  );
}

/**
 * The filter tree as text: `and(…)` / `or(…)` for groups, `"field"op:value` for leaves, in request
 * order. Leaves are read by key, so `{ field, op }` and `{ op, field }` bind the same, and keys that
 * change nothing (anything but field, op, value) are left out. Fields are JSON strings and values
 * JSON-like, so no two trees give the same text.
 */
function filtersText(nodes: readonly FilterNode[]): string {
  let text = '';
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!;
    if (i > 0) text += ',';
    // The op decides, as in analyzeRequest: a leaf may carry a stray `items` key.
    if (isGroup(node)) text += `${node.op}(${filtersText(node.items)})`;
    else text += `${JSON.stringify(node.field)}${node.op}:${valueText(node.value)}`;
  }
  return text;
}

function isGroup(node: FilterNode): node is FilterGroup {
  return node.op === 'and' || node.op === 'or';
}

/**
 * A filter value as canonical JSON. Column values are scalars or lists of scalars; anything else can
 * only reach a custom handler, so objects get their keys sorted (as handlers read them by name).
 * An absent value is the empty string, apart from `null`.
 */
function valueText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
    case 'boolean':
      return String(value);
    case 'undefined':
      return '';
    case 'bigint':
      return `${value}n`;
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map(valueText).join(',')}]`;
      const json = (value as { toJSON?: () => unknown }).toJSON;
      if (typeof json === 'function') return valueText(json.call(value));
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${valueText(obj[k])}`).join(',')}}`;
    }
    default:
      return JSON.stringify(String(value));
  }
}

/**
 * Fresh random GCM IVs, taken from a pool of CSPRNG bytes refilled every 256 cursors: each IV is still
 * 96 random bits used once, but one `randomFillSync` serves 256 cursors (a call per cursor cost ~10 µs).
 * The IV is a view into the pool: use it before the next call (the cipher copies it when created).
 */
const ivPool = Buffer.alloc(IV_BYTES * 256);
let ivOffset = ivPool.length;

function nextIv(): Buffer {
  if (ivOffset + IV_BYTES > ivPool.length) {
    randomFillSync(ivPool);
    ivOffset = 0;
  }
  const iv = ivPool.subarray(ivOffset, ivOffset + IV_BYTES);
  ivOffset += IV_BYTES;
  return iv;
}
