/**
 * Manifest validation: structure first (the published JSON Schema), then the rules a schema cannot say
 * (one primary key, defaults that fit their type, relation names that do not collide…). Every problem
 * names its JSON path (`$.fields.priority.max_length`) and what was expected; nothing is written by the
 * generator unless all manifests pass.
 */
import { Compile } from 'typebox/compile';
import { decimalPattern, decimalRule, decimalSize, describeDecimal, MAX_DECIMAL_PRECISION } from './decimal.js';
import { ManifestSchema, type FieldSpec, type Manifest } from './schema.js';

export interface ManifestIssue {
  /** JSON path inside the manifest, e.g. `$.fields.title.type`. */
  path: string;
  message: string;
}

/** One or more problems in one manifest file. The message lists them, one per line. */
export class ManifestError extends Error {
  constructor(
    readonly file: string,
    readonly issues: ManifestIssue[],
  ) {
    super(`Invalid manifest ${file}:\n${issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`);
    this.name = 'ManifestError';
  }
}

const checker = Compile(ManifestSchema);

/** Keys that would break generated classes or objects. */
const RESERVED = new Set(['constructor', 'prototype', '__proto__', 'toString', 'toJSON', 'valueOf', 'hasOwnProperty']);

/** Parses and validates a manifest's text. Throws `ManifestError` with every problem found. */
export function parseManifest(text: string, file: string): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(file, [{ path: '$', message: `not valid JSON (${(err as Error).message})` }]);
  }
  return validateManifest(json, file);
}

/** Validates a parsed manifest. Throws `ManifestError` with every problem found. */
export function validateManifest(json: unknown, file: string): Manifest {
  if (!checker.Check(json)) throw new ManifestError(file, [...structuralIssues(json), ...keyNameIssues(json)]);
  const issues = [...keyNameIssues(json), ...semanticIssues(json)];
  if (issues.length) throw new ManifestError(file, issues);
  return json;
}

function structuralIssues(json: unknown): ManifestIssue[] {
  const issues = new Map<string, ManifestIssue>();
  for (const error of checker.Errors(json)) {
    // `additionalProperties: false` reports each extra key twice (once as "schema is false"); keep the named one.
    if (error.keyword === 'boolean') continue;
    const params = error.params as Record<string, unknown>;
    let path = toJsonPath(error.instancePath);
    let message: string;
    switch (error.keyword) {
      case 'additionalProperties': {
        const keys = params.additionalProperties as string[];
        message = `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => JSON.stringify(k)).join(', ')}`;
        break;
      }
      case 'required':
        message = `missing required key ${(params.requiredProperties as string[]).map((k) => JSON.stringify(k)).join(', ')}`;
        break;
      case 'enum':
        message = `expected one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${describe(valueAt(json, error.instancePath))}`;
        break;
      case 'type':
        message = `expected ${String(params.type)}, got ${describe(valueAt(json, error.instancePath))}${sizeHint(error.instancePath)}`;
        break;
      case 'pattern':
        message = `${describe(valueAt(json, error.instancePath))} does not match ${String(params.pattern)}${namingHint(error.instancePath)}`;
        break;
      case 'propertyNames':
        path = toJsonPath(error.instancePath);
        message = `has an invalid key name (names are lower snake_case, starting with a letter)`;
        break;
      default:
        message = `${error.message}, got ${describe(valueAt(json, error.instancePath))}${sizeHint(error.instancePath)}`;
    }
    const key = `${path}\u0000${message}`;
    if (!issues.has(key)) issues.set(key, { path, message });
  }
  return [...issues.values()];
}

const NAME = /^[a-z][a-z0-9_]*$/;

/** Field and relation names become columns, JSON keys and TypeScript properties: lower snake_case only. */
function keyNameIssues(json: unknown): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  if (json === null || typeof json !== 'object') return issues;
  for (const section of ['fields', 'relations'] as const) {
    const entries = (json as Record<string, unknown>)[section];
    if (entries === null || typeof entries !== 'object') continue;
    for (const key of Object.keys(entries)) {
      if (!NAME.test(key) || key.length > 63) {
        issues.push({
          path: toJsonPath(`/${section}/${key}`),
          message: `${JSON.stringify(key)} is not a valid name (lower snake_case, starting with a letter, at most 63 characters)`,
        });
      }
    }
  }
  return issues;
}

function semanticIssues(m: Manifest): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const add = (path: string, message: string) => issues.push({ path, message });
  const fields = Object.entries(m.fields);
  const primary = fields.filter(([, f]) => f.primary);
  if (primary.length !== 1) {
    add(
      '$.fields',
      primary.length === 0
        ? 'needs exactly one field with "primary": true'
        : `has ${primary.length} primary fields (${primary.map(([n]) => n).join(', ')}); composite keys are not supported`,
    );
  }
  const versions = fields.filter(([, f]) => f.version === true).map(([n]) => n);
  if (versions.length > 1)
    add('$.fields', `has ${versions.length} version fields (${versions.join(', ')}); a resource has at most one`);
  for (const [name, f] of fields) {
    const at = `$.fields.${name}`;
    if (RESERVED.has(name)) add(at, `"${name}" is reserved; choose another field name`);
    if (f.version === true) versionIssues(f, at, add);
    if (f.primary && !['uuid', 'integer', 'bigint', 'string'].includes(f.type))
      add(`${at}.type`, `a primary key must be uuid, integer, bigint or string, got "${f.type}"`);
    if (f.primary && f.nullable) add(`${at}.nullable`, 'a primary key cannot be nullable');
    if (f.type === 'enum' && !f.values) add(at, 'an enum field needs "values"');
    if (f.type !== 'enum' && f.values)
      add(`${at}.values`, `"values" only applies to enum fields, this one is "${f.type}"`);
    if (f.max_length !== undefined && !['string', 'text'].includes(f.type))
      add(`${at}.max_length`, `"max_length" only applies to string and text fields, this one is "${f.type}"`);
    if (f.format !== undefined && f.type !== 'string')
      add(`${at}.format`, `"format" only applies to string fields, this one is "${f.type}"`);
    for (const key of ['precision', 'scale'] as const) {
      if (f[key] !== undefined && f.type !== 'decimal')
        add(`${at}.${key}`, `"${key}" only applies to decimal fields, this one is "${f.type}"`);
    }
    if (f.type === 'decimal') {
      const { precision, scale } = decimalSize(f);
      if (scale > precision) {
        const given = (key: 'precision' | 'scale') => (f[key] === undefined ? ' (the default)' : '');
        add(
          `${at}.scale`,
          `scale ${scale}${given('scale')} is larger than precision ${precision}${given('precision')}: the digits after the point are part of the precision; lower "scale" or raise "precision"`,
        );
      }
    }
    if ('default' in f) {
      const problem = defaultProblem(f);
      if (problem) add(`${at}.default`, problem);
    }
  }
  for (const [name, r] of Object.entries(m.relations ?? {})) {
    const at = `$.relations.${name}`;
    if (RESERVED.has(name)) add(at, `"${name}" is reserved; choose another relation name`);
    if (name in m.fields) add(at, `relation "${name}" has the same name as a field`);
    const toOne = r.kind === 'many-to-one' || r.kind === 'one-to-one';
    if (toOne && `${name}_id` in m.fields)
      add(at, `relation "${name}" needs the key "${name}_id", which is already a field`);
    if (!toOne && r.nullable !== undefined)
      add(`${at}.nullable`, `"nullable" applies to to-one relations, this one is ${r.kind}`);
    if (r.kind !== 'many-to-many' && r.ids_field !== undefined)
      add(`${at}.ids_field`, `"ids_field" applies to many-to-many relations, this one is ${r.kind}`);
    if (r.kind === 'one-to-many' && !r.inverse)
      add(
        `${at}.inverse`,
        'a one-to-many relation needs "inverse": the many-to-one relation on the target that points back',
      );
    if (r.on_delete === 'set null' && toOne && r.nullable === false)
      add(`${at}.on_delete`, '"set null" needs a nullable relation');
  }
  return issues;
}

/** A version column counts updates: an integer the system sets, starting at 1, on every record. */
function versionIssues(f: FieldSpec, at: string, add: (path: string, message: string) => void): void {
  if (f.type !== 'integer') add(`${at}.version`, `"version" applies to integer fields, this one is "${f.type}"`);
  if (f.primary)
    add(`${at}.version`, 'the primary key cannot be the version; add a separate integer field with "version": true');
  if (f.nullable)
    add(`${at}.nullable`, 'a version field cannot be nullable: every record has a version, 1 when created');
  if (f.default !== undefined) add(`${at}.default`, 'a version field starts at 1 by itself; remove "default"');
  if (f.create === true || f.update === true) {
    add(
      `${at}.${f.create === true ? 'create' : 'update'}`,
      'a version field is set by the system, never by a body; remove "create" / "update"',
    );
  }
}

function defaultProblem(f: FieldSpec): string | null {
  const value = f.default;
  if (value === null) return f.nullable ? null : 'null default needs "nullable": true';
  switch (f.type) {
    case 'string':
    case 'text':
    case 'uuid':
    case 'date':
    case 'datetime':
      if (typeof value !== 'string') return `expected a string default for a ${f.type} field, got ${describe(value)}`;
      if (f.max_length !== undefined && value.length > f.max_length)
        return `default is longer than max_length ${f.max_length}`;
      return null;
    case 'decimal': {
      if (typeof value !== 'string')
        return `expected a string default for a decimal field (decimals travel as strings, e.g. "0.00"), got ${describe(value)}`;
      const size = decimalSize(f);
      // A scale larger than the precision is reported on its own; no pattern can be built for it.
      if (size.scale > size.precision || new RegExp(decimalPattern(size)).test(value)) return null;
      return `${describe(value)} does not fit ${describeDecimal(size)}: ${decimalRule(size)}`;
    }
    case 'enum':
      return typeof value === 'string' && f.values?.includes(value)
        ? null
        : `default must be one of ${JSON.stringify(f.values ?? [])}, got ${describe(value)}`;
    case 'integer':
    case 'bigint':
      return Number.isInteger(value) ? null : `expected an integer default, got ${describe(value)}`;
    case 'float':
      return typeof value === 'number' ? null : `expected a number default, got ${describe(value)}`;
    case 'boolean':
      return typeof value === 'boolean' ? null : `expected true or false, got ${describe(value)}`;
    case 'json':
      return null;
  }
}

/** Structural errors about a decimal's size say what the number means and why it is bounded. */
function sizeHint(instancePath: string): string {
  if (/^\/fields\/[^/]+\/precision$/.test(instancePath)) {
    return ` (precision is the total number of digits, an integer from 1 to ${MAX_DECIMAL_PRECISION}: ${MAX_DECIMAL_PRECISION} is the most SQL Server and Oracle accept, so a manifest stays portable)`;
  }
  if (/^\/fields\/[^/]+\/scale$/.test(instancePath))
    return ' (scale is the number of digits after the point, an integer from 0 to the precision)';
  return '';
}

function namingHint(instancePath: string): string {
  if (/\/entity$/.test(instancePath)) return ' (PascalCase, e.g. "Task")';
  if (/\/prefix$/.test(instancePath)) return ' (a path such as "/tasks")';
  return ' (lower snake_case, starting with a letter)';
}

function toJsonPath(pointer: string): string {
  if (!pointer) return '$';
  return (
    '$' +
    pointer
      .split('/')
      .slice(1)
      .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((key) =>
        /^\d+$/.test(key) ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`,
      )
      .join('')
  );
}

function valueAt(json: unknown, pointer: string): unknown {
  let current = json;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
