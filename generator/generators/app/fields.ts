/**
 * One manifest field → its model property (TypeScript type + MikroORM builder) and its TypeBox
 * schemas (input: create/update bodies; output: what endpoints answer). The mapping table is in
 * generator/README.md; every mapping choice is decided here, once.
 */
import { decimalPattern, decimalSize, type DecimalSize } from '../../manifest/decimal.js';
import type { FieldSpec, FieldType } from '../../manifest/schema.js';
import { array, call, chain, literal, options, str, type Expr, type Literal } from '../../engine/code.js';

/** `bigint` values travel as strings; 18 digits always fit a signed 64-bit column. */
const BIGINT_PATTERN = '^-?\\d{1,18}$';
/** What the API docs say of a version field the manifest does not describe. */
export const VERSION_DESCRIPTION =
  'Version of the record: 1 when created, one more after every update; its ETag derives from it';
/** `string` without `max_length`. */
export const DEFAULT_STRING_LENGTH = 255;

export interface FieldInfo {
  readonly name: string;
  readonly spec: FieldSpec;
  readonly type: FieldType;
  readonly nullable: boolean;
  readonly primary: boolean;
  /** Set by the system, never by a body: a generated primary key, an `auto` timestamp or the version. */
  readonly generated: boolean;
  /** The record's version column (`"version": true`): 1 on create, incremented by every update. */
  readonly version: boolean;
  /** Accepted by `POST` (create schema). */
  readonly inCreate: boolean;
  /** Accepted by `PUT`/`PATCH` (update schema). */
  readonly inUpdate: boolean;
  /** Returned (output schema); `output: false` fields are hidden from every read. */
  readonly inOutput: boolean;
  /** The manifest's default in the field's wire type (a bigint default `0` is `'0'`); undefined without one. */
  readonly default: { readonly value: Literal } | undefined;
  /** A decimal's `numeric(precision, scale)`, defaults applied; undefined for other types. */
  readonly decimal: DecimalSize | undefined;
}

export function fieldInfo(name: string, spec: FieldSpec): FieldInfo {
  const primary = spec.primary === true;
  // uuid keys get a v4 on insert, integer keys are auto-increment: neither is ever sent.
  const generatedKey = primary && (spec.type === 'uuid' || spec.type === 'integer' || spec.type === 'bigint');
  const version = spec.version === true;
  const generated = generatedKey || spec.auto !== undefined || version;
  const writable = spec.readonly !== true && !generated;
  return {
    name,
    spec,
    type: spec.type,
    nullable: spec.nullable === true,
    primary,
    generated,
    version,
    inCreate: writable && spec.create !== false,
    inUpdate: writable && !primary && spec.update !== false,
    inOutput: spec.output !== false,
    default:
      spec.default === undefined
        ? undefined
        : {
            value:
              spec.type === 'bigint' && typeof spec.default === 'number'
                ? String(spec.default)
                : (spec.default as Literal),
          },
    decimal: spec.type === 'decimal' ? decimalSize(spec) : undefined,
  };
}

/** The TypeScript type of the model property: `string`, `number | null`, `'low' | 'high'`, `Date`… */
export function modelType(f: FieldInfo): string {
  if (f.type === 'json') return 'unknown'; // includes null
  const base = scalarType(f);
  return f.nullable ? `${base} | null` : base;
}

function scalarType(f: FieldInfo): string {
  switch (f.type) {
    case 'integer':
    case 'float':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'datetime':
      return 'Date';
    case 'enum':
      return (f.spec.values ?? []).map(str).join(' | ');
    default:
      // uuid, string, text, date (YYYY-MM-DD), and bigint / decimal, kept as strings so no digit is lost
      return 'string';
  }
}

/** The MikroORM property builder: `p.string().length(255).index()`. Needs `p` (and `randomUUID` for uuid keys). */
export function modelBuilder(f: FieldInfo): Expr {
  const links: (readonly [string, ...Expr[]])[] = [];
  const s = f.spec;
  if (f.type === 'string') links.push(['length', String(s.max_length ?? DEFAULT_STRING_LENGTH)]);
  if (f.decimal) links.push(['precision', String(f.decimal.precision)], ['scale', String(f.decimal.scale)]);
  if (f.primary) links.push(['primary']);
  if (f.primary && f.type === 'uuid') links.push(['onCreate', '() => randomUUID()']);
  if (f.primary && (f.type === 'integer' || f.type === 'bigint')) links.push(['autoincrement']);
  if (f.nullable) links.push(['nullable']);
  if (hasColumnDefault(f)) links.push(['default', literal(f.default!.value)]);
  if (s.index) links.push(['index']);
  if (s.unique) links.push(['unique']);
  if (s.output === false) links.push(['hidden']);
  if (s.auto !== undefined) links.push(['onCreate', '() => new Date()']);
  if (s.auto === 'now_on_update') links.push(['onUpdate', '() => new Date()']);
  // Rows start at version 1; the repository increments it (defineModel's `version` option).
  if (f.version) links.push(['default', '1']);
  return chain(builderHead(f), ...links);
}

/** A scalar default also becomes the column default (fields left out of the create body still get it). */
function hasColumnDefault(f: FieldInfo): boolean {
  const value = f.default?.value;
  return value !== undefined && value !== null && typeof value !== 'object' && f.type !== 'json';
}

function builderHead(f: FieldInfo): Expr {
  switch (f.type) {
    case 'bigint':
      return call('p.bigint', "'string'");
    case 'float':
      return call('p.double');
    case 'decimal':
      return call('p.decimal', "'string'");
    case 'json':
      return call('p.json<unknown>');
    case 'enum':
      return call('p.enum', array((f.spec.values ?? []).map(str)));
    default:
      return call(`p.${f.type}`);
  }
}

/** Does the input schema declare a default (so the key may be left out)? Nullable fields default to null. */
export function inputDefault(f: FieldInfo): { value: Literal } | undefined {
  if (f.default) return f.default;
  if (f.nullable) return { value: null };
  return undefined;
}

/**
 * The field in a create/update schema: required when it has no default and is not nullable, else
 * `Type.Optional(…)` carrying the default (absent keys get it on create and on a PUT replace).
 */
export function inputSchema(f: FieldInfo): Expr {
  const dflt = inputDefault(f);
  const outer: [string, Literal | undefined][] = [
    ['description', f.spec.description],
    ['default', dflt?.value],
  ];
  const expr = f.nullable && f.type !== 'json' ? nullable(f, 'input', outer) : typed(f, 'input', outer);
  return dflt ? call('Type.Optional', expr) : expr;
}

/** The field in the output schema: always present; null allowed when nullable. */
export function outputSchema(f: FieldInfo): Expr {
  const outer: [string, Literal | undefined][] = [
    ['description', f.spec.description ?? (f.version ? VERSION_DESCRIPTION : undefined)],
  ];
  return f.nullable && f.type !== 'json' ? nullable(f, 'output', outer) : typed(f, 'output', outer);
}

type Mode = 'input' | 'output';

/** `Type.Union([X, Type.Null()], { … })`; an enum's literals join the union directly. */
function nullable(f: FieldInfo, mode: Mode, outer: [string, Literal | undefined][]): Expr {
  const members = f.type === 'enum' ? enumLiterals(f) : [typed(f, mode, [])];
  return unionOf([...members, 'Type.Null()'], options(outer));
}

function unionOf(members: Expr[], opts: Expr | undefined): Expr {
  return opts ? call('Type.Union', array(members), opts) : call('Type.Union', array(members));
}

function enumLiterals(f: FieldInfo): Expr[] {
  return (f.spec.values ?? []).map((v) => call('Type.Literal', str(v)));
}

/** The non-null TypeBox type, with its constraints (input only) and `extra` options. */
function typed(f: FieldInfo, mode: Mode, extra: [string, Literal | undefined][]): Expr {
  const s = f.spec;
  const input = mode === 'input';
  const only = <T>(value: T | undefined): T | undefined => (input ? value : undefined);
  const make = (type: string, entries: [string, Literal | undefined][]): Expr => {
    const opts = options([...entries, ...extra]);
    return opts ? call(`Type.${type}`, opts) : call(`Type.${type}`);
  };
  switch (f.type) {
    case 'uuid':
      return make('String', [['format', 'uuid']]);
    case 'string':
      return make('String', [
        ['format', only(s.format)],
        ['minLength', only(s.min_length)],
        ['maxLength', s.max_length ?? DEFAULT_STRING_LENGTH],
      ]);
    case 'text':
      return make('String', [
        ['minLength', only(s.min_length)],
        ['maxLength', s.max_length],
      ]);
    case 'integer':
      return make('Integer', [
        ['minimum', only(s.minimum)],
        ['maximum', only(s.maximum)],
      ]);
    case 'float':
      return make('Number', [
        ['minimum', only(s.minimum)],
        ['maximum', only(s.maximum)],
      ]);
    case 'bigint':
      return make('String', [['pattern', only(BIGINT_PATTERN)]]);
    case 'decimal':
      // Decimals travel as strings (no digit lost to a float); the pattern holds the column's size.
      return make('String', [['pattern', only(decimalPattern(f.decimal ?? decimalSize(s)))]]);
    case 'boolean':
      return make('Boolean', []);
    case 'date':
      return make('String', [['format', 'date']]);
    case 'datetime':
      return make('String', [['format', 'date-time']]);
    case 'json':
      return make('Unknown', []);
    case 'enum': {
      const literals = enumLiterals(f);
      const opts = options(extra);
      if (literals.length === 1) return opts ? call('Type.Literal', str(s.values![0]!), opts) : literals[0]!;
      return unionOf(literals, opts);
    }
  }
}

/** The TypeBox type of a key pointing at a record whose primary key has type `pkType`. */
export function keySchema(pkType: string, mode: Mode): Expr {
  switch (pkType) {
    case 'uuid':
      return call('Type.String', options([['format', 'uuid']])!);
    case 'integer':
      return call('Type.Integer');
    case 'bigint':
      return mode === 'input' ? call('Type.String', options([['pattern', BIGINT_PATTERN]])!) : call('Type.String');
    default:
      return mode === 'input' ? call('Type.String', options([['minLength', 1]])!) : call('Type.String');
  }
}
