/**
 * Values for one property, read from its published JSON Schema (what `?schema=true` answers): the
 * keywords Core's schemas use — `type` (a name or a nullable pair), `enum`, `format` (uuid, date,
 * date-time, email, uri), `pattern`, `minLength`/`maxLength`, `minimum`/`maximum`, `items` — and `{}`
 * for a json field.
 *
 * Generators aim at the edges a database or a driver may disagree on (code points, control
 * characters, boundaries, calendar days, offsets) and do not decide what is valid: the oracle
 * classifies every value against the schema itself, so a "valid" draw that the schema refuses is
 * simply expected to be refused.
 */
import fc from 'fast-check';

export interface JsonSchema {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  [key: string]: unknown;
}

/** The JSON types a schema allows (`{}` allows every one). */
export function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.enum) return [...new Set(schema.enum.map((v) => (v === null ? 'null' : typeof v)))];
  return ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'];
}

export const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 } as const;

/** Single characters that stress encoders, collations and drivers; every one must round-trip. */
const AWKWARD = [
  '%',
  '_',
  '\\',
  "'",
  '"',
  '`',
  '*',
  '?',
  '[',
  ']',
  '\t',
  '\n',
  '\r',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u009f',
  '\u00a0',
  '\u00e9',
  'e\u0301',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\ufffd',
  '\ufffe',
  '\uffff',
  '\u{1f389}',
  '\u{10ffff}',
  '\u{1d11e}',
  '\u05d0',
  '\u0627',
  '\u4e2d',
  '\u{e0001}',
  ' ',
];

const controlChar = fc
  .oneof(fc.integer({ min: 1, max: 31 }), fc.integer({ min: 0x7f, max: 0x9f }))
  .map((c) => String.fromCharCode(c));

/** Any text up to `max` code points (the unit `maxLength` counts in). */
export function textArb(min = 0, max = 40): fc.Arbitrary<string> {
  const cap = Math.min(max, min + 40);
  const unit = fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: controlChar },
    { weight: 2, arbitrary: fc.constantFrom(...AWKWARD) },
  );
  const body = fc
    .array(unit, { minLength: min, maxLength: cap })
    .map((parts) => [...parts.join('')].slice(0, max).join(''));
  // Now and then exactly at the limit, where off-by-one and byte-versus-character bugs live.
  const atLimit =
    Number.isFinite(max) && max <= 4096
      ? fc.constantFrom('x', '\u00e9', '\u{1f389}').map((c) => c.repeat(max))
      : fc.constant('x'.repeat(min));
  return fc
    .oneof({ weight: 9, arbitrary: body }, { weight: 1, arbitrary: atLimit })
    .filter((s) => [...s].length >= min);
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

const year = fc.oneof(
  fc.constantFrom(0, 1, 1582, 1899, 1900, 1969, 1970, 1999, 2000, 2024, 2038, 2100, 9999),
  fc.integer({ min: 1, max: 9999 }),
);

/** `YYYY-MM-DD`, mostly real days; the schema decides which are. */
export const dateArb = fc
  .tuple(
    year,
    fc.integer({ min: 1, max: 12 }),
    fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 28 }) },
      { weight: 1, arbitrary: fc.integer({ min: 29, max: 31 }) },
    ),
  )
  .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);

const offset = fc.oneof(
  { weight: 4, arbitrary: fc.constant('Z') },
  { weight: 1, arbitrary: fc.constant('z') },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 14 }), fc.constantFrom(0, 30, 45, 59))
      .map(([s, h, m]) => `${s}${pad(h, 2)}:${pad(m, 2)}`),
  },
);

/** RFC 3339 date-times: every separator case, fractions of 0–9 digits, offsets up to ±14:59. */
export const dateTimeArb = fc
  .tuple(
    dateArb,
    fc.constantFrom('T', 'T', 'T', 't'),
    fc.integer({ min: 0, max: 23 }),
    fc.integer({ min: 0, max: 59 }),
    fc.integer({ min: 0, max: 59 }),
    fc.oneof(
      { weight: 2, arbitrary: fc.constant('') },
      {
        weight: 3,
        arbitrary: fc
          .integer({ min: 1, max: 9 })
          .chain((n) => fc.stringMatching(new RegExp(`^[0-9]{${n}}$`)).map((d) => `.${d}`)),
      },
    ),
    offset,
  )
  .map(([d, t, h, mi, s, frac, off]) => `${d}${t}${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac}${off}`);

const uuidArb = fc.oneof(
  { weight: 5, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.uuid().map((u) => u.toUpperCase()) },
);

function stringArb(schema: JsonSchema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 300;
  switch (schema.format) {
    case 'uuid':
      return uuidArb;
    case 'date':
      return dateArb;
    case 'date-time':
      return dateTimeArb;
    case 'email':
      return fc.oneof(fc.emailAddress(), fc.constantFrom('a@b.co', "o'neil+tag@example.com", '"quoted"@example.org'));
    case 'uri':
      return fc.oneof(
        fc.webUrl({ withQueryParameters: true, withFragments: true }),
        fc.constantFrom('mailto:a@b.co', 'urn:isbn:0451450523', 'https://example.com/%C3%BC'),
      );
    default:
      break;
  }
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
  // Unbounded text is exercised long now and then (well under the 1 MiB body limit).
  if (schema.maxLength === undefined)
    return fc.oneof(
      { weight: 9, arbitrary: textArb(min, 60) },
      { weight: 1, arbitrary: fc.integer({ min: 1000, max: 70_000 }).map((n) => 'λ'.repeat(n)) },
    );
  return textArb(min, max);
}

function integerArb(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? Number.MIN_SAFE_INTEGER;
  const max = schema.maximum ?? Number.MAX_SAFE_INTEGER;
  const edges = [min, max, 0, -1, 1, INT32.min, INT32.max].filter(
    (n) => n >= min && n <= max && Number.isSafeInteger(n),
  );
  const small = fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1000) });
  return fc.oneof(
    { weight: 4, arbitrary: small },
    { weight: 1, arbitrary: fc.constantFrom(...edges) },
    { weight: 1, arbitrary: fc.integer({ min: Math.max(min, INT32.min), max: Math.min(max, INT32.max) }) },
  );
}

function numberArb(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? -Number.MAX_VALUE;
  const max = schema.maximum ?? Number.MAX_VALUE;
  const edges = [0, -0, 0.1, 1 / 3, 5e-324, 2 ** 53 + 2, 1e308, -1e-300, min, max].filter((n) => n >= min && n <= max);
  return fc.oneof(
    { weight: 4, arbitrary: fc.double({ min, max, noNaN: true, noDefaultInfinity: true }) },
    { weight: 1, arbitrary: fc.constantFrom(...edges) },
  );
}

/** JSON values for a `json` field: nesting, every scalar, awkward keys and strings. */
export const jsonArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(textArb(0, 8), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.array(textArb(0, 8), { maxLength: 3 }) },
);

/** A value the schema is meant to accept (the oracle checks that it does). */
export function validValue(schema: JsonSchema): fc.Arbitrary<unknown> {
  const types = typesOf(schema);
  const nullable = types.includes('null');
  let base: fc.Arbitrary<unknown>;
  if (schema.enum) base = fc.constantFrom(...schema.enum.filter((v) => v !== null));
  else if (types.length > 3) base = jsonArb;
  else if (types.includes('string')) base = stringArb(schema);
  else if (types.includes('integer')) base = integerArb(schema);
  else if (types.includes('number')) base = numberArb(schema);
  else if (types.includes('boolean')) base = fc.boolean();
  else if (types.includes('array')) base = fc.array(validValue(schema.items ?? {}), { maxLength: 3 });
  else base = fc.constant(null);
  return nullable ? fc.oneof({ weight: 4, arbitrary: base }, { weight: 1, arbitrary: fc.constant(null) }) : base;
}

/** A string that must be refused wherever text is stored: U+0000 or a lone surrogate inside. */
export const unstorableStringArb = fc
  .tuple(textArb(0, 6), fc.constantFrom('\u0000', '\ud800', '\udfff', '\udc00x', 'x\ud83d'), textArb(0, 6))
  .map(([a, bad, b]) => `${a}${bad}${b}`);

export type Mutation =
  | 'wrong_type'
  | 'too_long'
  | 'too_short'
  | 'out_of_range'
  | 'bad_format'
  | 'bad_pattern'
  | 'not_in_enum'
  | 'null'
  | 'unstorable_string'
  | 'int32_overflow'
  | 'long_digits';

const WRONG_TYPES: Record<string, fc.Arbitrary<unknown>> = {
  string: fc.oneof(fc.integer(), fc.boolean(), fc.constant({}), fc.constant([])),
  integer: fc.oneof(
    fc.constant('12'),
    fc.double({ min: -10, max: 10, noInteger: true }),
    fc.boolean(),
    fc.constant([1]),
  ),
  number: fc.oneof(fc.constant('1.5'), fc.boolean(), fc.constant({ n: 1 })),
  boolean: fc.oneof(fc.constantFrom('true', 0, 1, 'false', 'yes')),
  array: fc.oneof(fc.constant('x'), fc.integer(), fc.constant({ 0: 'x' })),
};

const BAD_FORMATS: Record<string, readonly string[]> = {
  uuid: [
    'not-a-uuid',
    '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2g',
    '3f1e4a527c1b4d2e9a8f0b6c5d4e3f21',
    '{3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21}',
    'urn:uuid:3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21',
    '',
  ],
  date: [
    '2024-13-01',
    '2023-02-29',
    '2024-04-31',
    '24-01-01',
    '2024-1-1',
    '2024-01-01T00:00:00Z',
    '20240101',
    'yesterday',
    '0000-00-00',
  ],
  'date-time': [
    '2024-01-01',
    '2024-01-01T25:00:00Z',
    '2024-01-01T00:00:00',
    '2024-01-01 00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2024-01-01T00:00:60Z',
    'now',
    '1700000000',
  ],
  email: ['plainaddress', '@example.com', 'a@', 'a b@example.com', 'a@@b.co'],
  uri: ['no scheme', '//example.com', 'http://exa mple.com', ':'],
};

/** Mutations that make a value of this schema invalid (or, for `unstorable_string`, unstorable). */
export function mutationsFor(schema: JsonSchema, column: { int32?: boolean } = {}): Mutation[] {
  const types = typesOf(schema);
  const out: Mutation[] = [];
  if (types.length <= 3) out.push('wrong_type');
  if (!types.includes('null') && types.length <= 3) out.push('null');
  if (schema.enum) out.push('not_in_enum');
  if (types.includes('string') && !schema.enum) {
    out.push('unstorable_string');
    if (schema.maxLength !== undefined) out.push('too_long');
    if ((schema.minLength ?? 0) > 0) out.push('too_short');
    if (schema.format && BAD_FORMATS[schema.format]) out.push('bad_format');
    if (schema.pattern) out.push('bad_pattern', 'long_digits');
  }
  if (types.includes('integer') || types.includes('number')) {
    if (schema.minimum !== undefined || schema.maximum !== undefined) out.push('out_of_range');
    if (types.includes('integer') && column.int32) out.push('int32_overflow');
  }
  if (types.length > 3) out.push('unstorable_string');
  return out;
}

export function mutatedValue(schema: JsonSchema, mutation: Mutation): fc.Arbitrary<unknown> {
  const types = typesOf(schema);
  const main = types.find((t) => t !== 'null') ?? 'string';
  switch (mutation) {
    case 'wrong_type':
      return WRONG_TYPES[main] ?? fc.constant({ wrong: true });
    case 'null':
      return fc.constant(null);
    case 'not_in_enum':
      return fc.oneof(fc.constantFrom('', 'DRAFT', 'unknown', ' draft'), textArb(1, 8));
    case 'too_long':
      return fc.integer({ min: 1, max: 40 }).map((extra) => 'a'.repeat((schema.maxLength ?? 0) + extra));
    case 'too_short':
      return fc.integer({ min: 0, max: Math.max(0, (schema.minLength ?? 1) - 1) }).map((n) => 'b'.repeat(n));
    case 'bad_format':
      return fc.constantFrom(...(BAD_FORMATS[schema.format ?? ''] ?? ['?']));
    case 'bad_pattern':
      return fc.constantFrom('1e5', '+1', '.5', '1.', ' 1', '1 ', '0x10', 'NaN', 'Infinity', '1,5', '١٢', '');
    case 'long_digits':
      // Too many digits before or after the point for the column's precision and scale.
      return fc
        .tuple(fc.integer({ min: 11, max: 45 }), fc.integer({ min: 0, max: 12 }))
        .map(([i, f]) => `${'9'.repeat(i)}${f ? `.${'1'.repeat(f)}` : ''}`)
        .chain((long) => fc.constantFrom(long, `1.${'5'.repeat(7)}`, `-${long}`));
    case 'out_of_range': {
      const options: number[] = [];
      if (schema.minimum !== undefined) options.push(schema.minimum - 1, schema.minimum - 0.5, -1e12);
      if (schema.maximum !== undefined) options.push(schema.maximum + 1, schema.maximum + 0.5, 1e12);
      return fc.constantFrom(...options);
    }
    case 'int32_overflow':
      return fc.oneof(
        fc.constantFrom(INT32.max + 1, INT32.min - 1, 2 ** 53 - 1, -(2 ** 53) + 1, 1e20),
        fc.integer({ min: INT32.max + 1, max: Number.MAX_SAFE_INTEGER }),
      );
    case 'unstorable_string':
      // In a json field the bad string may hide anywhere in the document.
      return types.length > 3
        ? fc.oneof(
            unstorableStringArb,
            unstorableStringArb.map((s) => ({ note: s })),
            unstorableStringArb.map((s) => ({ [s]: 1 })),
          )
        : unstorableStringArb;
  }
}
