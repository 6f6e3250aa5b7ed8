/**
 * Request bodies for the generated endpoint tests, derived from the manifest: a valid value for
 * every field type (within its length, bounds, format and enum values), a second and third value for
 * the PUT and PATCH checks, a wrongly typed value for the 422 check, and the records that required
 * relations need first (created through their own endpoints, recursively).
 */
import { decimalSize, type DecimalSize } from '../../manifest/decimal.js';
import type { FieldSpec, Manifest } from '../../manifest/schema.js';
import { ManifestError } from '../../manifest/validate.js';
import { literal, type Expr, type Literal } from '../../engine/code.js';
import { camel } from '../../engine/names.js';
import { fieldInfo, type FieldInfo } from './fields.js';
import type { AppModel } from './normalize.js';
import { resolveRelations } from './relations.js';

/** Names of the generated test file that a prerequisite's variable must not shadow. */
const RESERVED = new Set([
  'app',
  'api',
  'token',
  'expectStatus',
  'validBody',
  'body',
  'created',
  'result',
  'gone',
  'invalid',
  'expect',
  'it',
  'describe',
  'buildApp',
  'createApiClient',
  'dbManager',
  'injectFetch',
  'signToken',
]);

/** 0: the create body; 1: the PUT change; 2: the PATCH change. */
type Variant = 0 | 1 | 2;

const WORD = ['Sample', 'Changed', 'Patched'] as const;

/**
 * A valid value of `f`, never null. The create body uses a field's default when it has one: a default
 * is acceptable to any business rule (the starter task service, for one, rewrites unknown priorities).
 */
export function sampleValue(f: FieldInfo, variant: Variant): Literal {
  const s = f.spec;
  if (variant === 0 && f.default && f.default.value !== null) return f.default.value;
  switch (f.type) {
    case 'string':
    case 'text':
      return fit(textSample(f.name, s, variant), s);
    case 'uuid':
      return `00000000-0000-4000-8000-00000000000${variant + 1}`;
    case 'integer':
      return clamp(7 + variant, s);
    case 'float':
      return clamp(1.5 + variant, s);
    case 'bigint':
      return String(42 + variant);
    case 'decimal':
      return decimalSample(f.decimal ?? decimalSize(s), variant);
    case 'boolean':
      return variant !== 1;
    case 'date':
      return ['2024-01-31', '2024-02-29', '2024-03-31'][variant]!;
    case 'datetime':
      return ['2024-01-31T12:00:00.000Z', '2024-02-29T12:30:00.000Z', '2024-03-31T18:45:00.000Z'][variant]!;
    case 'json':
      return { [WORD[variant].toLowerCase()]: true };
    case 'enum': {
      const values = s.values ?? [];
      return values[variant % values.length]!;
    }
  }
}

/** `12.5`, `13.5`, `14.5` in `numeric(12, 2)`; shortened to what a smaller size holds (`1`, `0.5`…). */
function decimalSample({ precision, scale }: DecimalSize, variant: Variant): string {
  const integerDigits = precision - scale;
  const integer = integerDigits >= 2 ? 12 + variant : integerDigits === 1 ? 1 + variant : 0;
  if (scale === 0) return String(integer);
  return integerDigits === 0 ? `0.${5 + variant}` : `${integer}.5`;
}

function textSample(name: string, s: FieldSpec, variant: Variant): string {
  const word = WORD[variant].toLowerCase();
  switch (s.format) {
    case 'email':
      return `${word}@example.com`;
    case 'uri':
      return `https://example.com/${word}`;
    case 'hostname':
      return `${word}.example.com`;
    default:
      return `${WORD[variant]} ${name.replace(/_/g, ' ')}`;
  }
}

/** Cut to `max_length`, padded to `min_length`. */
function fit(text: string, s: FieldSpec): string {
  let value = s.max_length !== undefined ? text.slice(0, s.max_length) : text;
  if (s.min_length !== undefined && value.length < s.min_length) value = value.padEnd(s.min_length, 'x');
  return value;
}

function clamp(value: number, s: FieldSpec): number {
  const low = s.minimum ?? -Infinity;
  const high = s.maximum ?? Infinity;
  return Math.min(Math.max(value, low), high);
}

/** A JSON value of the wrong type for `f`: what the 422 check sends. */
export function invalidValue(f: FieldInfo): Literal {
  switch (f.type) {
    case 'integer':
    case 'float':
      return 'not a number';
    case 'boolean':
      return 'not a boolean';
    default:
      return 12345;
  }
}

export interface Prerequisite {
  readonly table: string;
  /** Variable holding the created record, e.g. `project`. */
  readonly variable: string;
  /** Its model class, e.g. `Project` (its create body is the document's `ProjectCreate`). */
  readonly entity: string;
  /** Collection path of its resource in the OpenAPI document, e.g. `/projects`. */
  readonly path: string;
  readonly entries: readonly (readonly [string, Expr])[];
}

export interface TestBodies {
  readonly prerequisites: readonly Prerequisite[];
  /** The create body of the resource itself. */
  readonly body: readonly (readonly [string, Expr])[];
  /** The field changed by PUT then PATCH, with its two new values; undefined when no field can change. */
  readonly change: { readonly name: string; readonly put: Literal; readonly patch: Literal } | undefined;
  /** A body failing validation. */
  readonly invalid: Literal;
  /** Keys sent on create that come back unchanged. */
  readonly roundTrip: readonly string[];
}

export function testBodies(app: AppModel): TestBodies {
  const prerequisites: Prerequisite[] = [];
  const taken = new Set<string>();
  const body = bodyOf(app, app.manifest, [app.manifest.name], prerequisites, taken);

  // A text field without a default is the safest to change: no business rule is likely to rewrite it.
  const candidates = app.fields.filter((f) => f.inUpdate && canChange(f));
  const changeable =
    candidates.find((f) => (f.type === 'string' || f.type === 'text') && !f.default) ??
    candidates.find((f) => !f.default) ??
    candidates[0];
  const firstInput = app.fields.find((f) => f.inCreate && f.type !== 'json');
  const toOneKeys = app.relations
    .filter((r) => r.owner && r.kind !== 'many-to-many' && r.key && !r.nullable)
    .map((r) => r.key!);
  return {
    prerequisites,
    body,
    change: changeable
      ? { name: changeable.name, put: sampleValue(changeable, 1), patch: sampleValue(changeable, 2) }
      : undefined,
    invalid: firstInput
      ? { [firstInput.name]: invalidValue(firstInput) }
      : toOneKeys[0]
        ? { [toOneKeys[0]]: 12345 }
        : [],
    // Decimals come back in the column's notation ('0.00' may read '0' on SQLite, '12.5' '12.50' on PostgreSQL).
    roundTrip: [
      ...app.fields.filter((f) => f.inCreate && f.inOutput && f.type !== 'decimal').map((f) => f.name),
      ...toOneKeys,
    ],
  };
}

/** The `n`-th distinct variant of a sample for a unique column: `sample2@example.com`, `Sample name 2`, 9… */
function distinct(value: Literal, n: number): Literal {
  if (typeof value === 'number') return value + n;
  if (typeof value !== 'string') return value;
  return value.includes('@') ? value.replace('@', `${n}@`) : `${value} ${n}`;
}

function canChange(f: FieldInfo): boolean {
  const [a, b, c] = [sampleValue(f, 0), sampleValue(f, 1), sampleValue(f, 2)].map((v) => JSON.stringify(v));
  return a !== b && b !== c;
}

/**
 * The create body of `manifest`: a sample for every field the body takes, and for each required
 * to-one relation the key of a record created first (pushed onto `prerequisites`, recursively).
 * `path` holds the tables on the way down (a repeat is a cycle); `via` the app's own relation that
 * started the descent, which is where a cycle is reported.
 */
function bodyOf(
  app: AppModel,
  manifest: Manifest,
  path: string[],
  prerequisites: Prerequisite[],
  taken: Set<string>,
  via?: string,
): [string, Expr][] {
  // A resource created a second time (two required relations to it) needs other values in its unique fields.
  const copy = prerequisites.filter((p) => p.table === manifest.name).length + (path.length === 1 ? 0 : 1);
  const entries: [string, Expr][] = Object.entries(manifest.fields)
    .map(([name, spec]) => fieldInfo(name, spec))
    .filter((f) => f.inCreate)
    .map((f) => [f.name, literal(copy > 1 && f.spec.unique ? distinct(sampleValue(f, 0), copy) : sampleValue(f, 0))]);
  const { relations } = resolveRelations(manifest, app.manifests, app.modules);
  for (const r of relations) {
    if (!r.owner || r.kind === 'many-to-many' || r.nullable || !r.key) continue;
    if (path.includes(r.target.table)) {
      throw new ManifestError(app.manifestPath, [
        {
          path: `$.relations.${via ?? r.name}`,
          message: `required relations form a cycle (${[...path, r.target.table].join(' → ')}): no record could be created first; make one of them "nullable": true`,
        },
      ]);
    }
    const target = app.manifests.get(r.target.table)!;
    const targetBody = bodyOf(app, target, [...path, r.target.table], prerequisites, taken, via ?? r.name);
    let variable = camel(r.name);
    // `<variable>Body` holds its create body: both names must be free.
    const free = (name: string) => !taken.has(name) && !RESERVED.has(name);
    for (let n = 2; !free(variable) || !free(`${variable}Body`); n++) variable = `${camel(r.name)}${n}`;
    taken.add(variable).add(`${variable}Body`);
    prerequisites.push({
      table: r.target.table,
      variable,
      entity: target.entity,
      path: (target.prefix ?? `/${target.name}`).replace(/\/+$/, ''),
      entries: targetBody,
    });
    entries.push([r.key, `${variable}.${r.target.pk.name}`]);
  }
  return entries;
}
