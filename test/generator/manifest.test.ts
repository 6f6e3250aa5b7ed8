import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Tree } from '../../generator/engine/tree.js';
import { generateApp } from '../../generator/generators/app/index.js';
import type { Manifest } from '../../generator/manifest/schema.js';
import { ManifestError, parseManifest, validateManifest } from '../../generator/manifest/validate.js';
import { core, lines, snapshot, tempDir } from '../helpers/cli.js';
import { GOLDEN_DIR } from './golden-runner.js';

const starter = JSON.parse(readFileSync(new URL('../../fixtures/specs/tasks.resource.json', import.meta.url), 'utf8'));

function issuesOf(manifest: unknown): { path: string; message: string }[] {
  try {
    validateManifest(manifest, 'tasks.resource.json');
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return (err as ManifestError).issues;
  }
}

const withField = (name: string, spec: unknown) => ({ ...starter, fields: { ...starter.fields, [name]: spec } });

describe('manifest validation', () => {
  it('accepts the starter task manifest', () => {
    expect(validateManifest(starter, 'tasks.resource.json')).toEqual(starter);
  });

  it.each([
    ['unknown top-level key', { ...starter, colour: 'red' }, '$', /unknown key "colour"/],
    ['unknown field type', withField('x', { type: 'money' }), '$.fields.x.type', /expected one of "uuid".*got "money"/],
    ['unknown field flag', withField('x', { type: 'string', requried: true }), '$.fields.x', /unknown key "requried"/],
    ['bad field name', withField('Title', { type: 'string' }), '$.fields.Title', /not a valid name/],
    ['bad table name', { ...starter, name: 'Tasks' }, '$.name', /lower snake_case/],
    ['bad entity name', { ...starter, entity: 'task' }, '$.entity', /PascalCase/],
    ['missing fields', { name: 'tasks', entity: 'Task' }, '$', /missing required key "fields"/],
    ['max_length < 1', withField('x', { type: 'string', max_length: 0 }), '$.fields.x.max_length', />= 1/],
    [
      'default of the wrong type',
      withField('x', { type: 'boolean', default: 'yes' }),
      '$.fields.x.default',
      /true or false/,
    ],
    [
      'null default without nullable',
      withField('x', { type: 'string', default: null }),
      '$.fields.x.default',
      /nullable/,
    ],
    [
      'default longer than max_length',
      withField('x', { type: 'string', max_length: 2, default: 'abc' }),
      '$.fields.x.default',
      /longer than max_length/,
    ],
    ['enum without values', withField('x', { type: 'enum' }), '$.fields.x', /needs "values"/],
    [
      'enum default outside values',
      withField('x', { type: 'enum', values: ['a'], default: 'b' }),
      '$.fields.x.default',
      /one of/,
    ],
    [
      'max_length on an integer',
      withField('x', { type: 'integer', max_length: 3 }),
      '$.fields.x.max_length',
      /only applies/,
    ],
    ['two primary keys', withField('x', { type: 'uuid', primary: true }), '$.fields', /2 primary fields/],
    ['no primary key', { ...starter, fields: { title: { type: 'string' } } }, '$.fields', /exactly one/],
    ['reserved name', withField('constructor', { type: 'string' }), '$.fields.constructor', /reserved/],
    [
      'relation named like a field',
      { ...starter, relations: { title: { kind: 'many-to-one', target: 'projects' } } },
      '$.relations.title',
      /same name as a field/,
    ],
    [
      'one-to-many without inverse',
      { ...starter, relations: { comments: { kind: 'one-to-many', target: 'comments' } } },
      '$.relations.comments.inverse',
      /needs "inverse"/,
    ],
    [
      'unknown relation kind',
      { ...starter, relations: { p: { kind: 'belongs-to', target: 'projects' } } },
      '$.relations.p.kind',
      /expected one of "many-to-one"/,
    ],
  ])('%s', (_name, manifest, path, message) => {
    const issues = issuesOf(manifest);
    expect(
      issues.find((i) => i.path === path),
      JSON.stringify(issues),
    ).toMatchObject({ message: expect.stringMatching(message) });
  });

  it('reports invalid JSON with the file name', () => {
    expect(() => parseManifest('{ "name": ', 'src/apps/tasks/tasks.resource.json')).toThrow(
      /Invalid manifest src\/apps\/tasks\/tasks.resource.json:\n {2}\$: not valid JSON/,
    );
  });

  it('lists every problem at once, one per line', () => {
    const manifest = { ...starter, name: 'Tasks', fields: { ...starter.fields, x: { type: 'money' } } };
    expect(() => validateManifest(manifest, 'm.json')).toThrow(/\$\.name: .*\n {2}\$\.fields\.x\.type: /);
  });
});

describe('decimal precision and scale', () => {
  const PRECISION_HINT =
    /\(precision is the total number of digits, an integer from 1 to 38: 38 is the most SQL Server and Oracle accept, so a manifest stays portable\)$/;
  const SCALE_HINT = /\(scale is the number of digits after the point, an integer from 0 to the precision\)$/;

  it.each([
    ['precision 0', { type: 'decimal', precision: 0 }, '$.fields.x.precision', /^must be >= 1, got 0 /, PRECISION_HINT],
    [
      'precision above 38',
      { type: 'decimal', precision: 39 },
      '$.fields.x.precision',
      /^must be <= 38, got 39 /,
      PRECISION_HINT,
    ],
    [
      'a fractional precision',
      { type: 'decimal', precision: 10.5 },
      '$.fields.x.precision',
      /^expected integer, got 10\.5 /,
      PRECISION_HINT,
    ],
    [
      'precision as a string',
      { type: 'decimal', precision: '10' },
      '$.fields.x.precision',
      /^expected integer, got "10" /,
      PRECISION_HINT,
    ],
    ['a negative scale', { type: 'decimal', scale: -1 }, '$.fields.x.scale', /^must be >= 0, got -1 /, SCALE_HINT],
    [
      'a fractional scale',
      { type: 'decimal', scale: 1.5 },
      '$.fields.x.scale',
      /^expected integer, got 1\.5 /,
      SCALE_HINT,
    ],
  ])('structure: %s', (_name, spec, path, start, hint) => {
    const issues = issuesOf(withField('x', spec));
    expect(issues).toEqual([{ path, message: expect.stringMatching(start) }]);
    expect(issues[0]!.message).toMatch(hint);
  });

  it.each([
    [
      'scale above precision',
      { type: 'decimal', precision: 4, scale: 5 },
      '$.fields.x.scale',
      'scale 5 is larger than precision 4: the digits after the point are part of the precision; lower "scale" or raise "precision"',
    ],
    [
      'a precision below the default scale',
      { type: 'decimal', precision: 1 },
      '$.fields.x.scale',
      'scale 2 (the default) is larger than precision 1: the digits after the point are part of the precision; lower "scale" or raise "precision"',
    ],
    [
      'a scale above the default precision',
      { type: 'decimal', scale: 13 },
      '$.fields.x.scale',
      'scale 13 is larger than precision 12 (the default): the digits after the point are part of the precision; lower "scale" or raise "precision"',
    ],
    [
      'precision on a float',
      { type: 'float', precision: 10 },
      '$.fields.x.precision',
      '"precision" only applies to decimal fields, this one is "float"',
    ],
    [
      'scale on an integer',
      { type: 'integer', scale: 0 },
      '$.fields.x.scale',
      '"scale" only applies to decimal fields, this one is "integer"',
    ],
    [
      'a default with too many integer digits',
      { type: 'decimal', precision: 5, scale: 2, default: '1234.5' },
      '$.fields.x.default',
      '"1234.5" does not fit numeric(5, 2): at most 3 digits before the point and 2 after',
    ],
    [
      'a default with too many decimals',
      { type: 'decimal', precision: 6, scale: 0, default: '1.5' },
      '$.fields.x.default',
      '"1.5" does not fit numeric(6, 0): at most 6 digits and no fraction',
    ],
    [
      'a default above 1 when every digit is after the point',
      { type: 'decimal', precision: 3, scale: 3, default: '1.000' },
      '$.fields.x.default',
      '"1.000" does not fit numeric(3, 3): 0 before the point and at most 3 digits after',
    ],
    [
      'a default outside the default size',
      { type: 'decimal', default: '0.005' },
      '$.fields.x.default',
      '"0.005" does not fit numeric(12, 2): at most 10 digits before the point and 2 after',
    ],
    [
      'a numeric default',
      { type: 'decimal', default: 0 },
      '$.fields.x.default',
      'expected a string default for a decimal field (decimals travel as strings, e.g. "0.00"), got 0',
    ],
  ])('rules: %s', (_name, spec, path, message) => {
    expect(issuesOf(withField('x', spec))).toEqual([{ path, message }]);
  });

  it.each([
    ['the default size', { type: 'decimal', default: '-9999999999.99' }],
    ['the smallest precision', { type: 'decimal', precision: 1, scale: 0, default: '9' }],
    [
      'the largest precision',
      { type: 'decimal', precision: 38, scale: 0, default: '-99999999999999999999999999999999999999' },
    ],
    ['every digit after the point', { type: 'decimal', precision: 38, scale: 38, default: '0.5' }],
    ['a scale equal to the default precision', { type: 'decimal', scale: 12, default: '0.000000000001' }],
  ])('accepts %s', (_name, spec) => {
    expect(issuesOf(withField('x', spec))).toEqual([]);
  });

  /** models.ts and schemas.ts generated from the starter task manifest plus `fields`, in memory. */
  async function generated(fields: Manifest['fields']): Promise<{ models: string; schemas: string }> {
    const manifest = { ...starter, fields: { ...starter.fields, ...fields } } as Manifest;
    const tree = new Tree('/nonexistent/core-decimal');
    const manifests = new Map([[manifest.name, manifest]]);
    await generateApp(tree, manifest, {
      module: 'tasks',
      dir: 'src/apps/tasks',
      manifestPath: 'src/apps/tasks/tasks.resource.json',
      manifests,
    });
    return { models: tree.read('src/apps/tasks/models.ts')!, schemas: tree.read('src/apps/tasks/schemas.ts')! };
  }

  it('carries precision and scale into the column and the input pattern; (12, 2) without them', async () => {
    const { models, schemas } = await generated({
      price: { type: 'decimal', default: '0.00' },
      rate: { type: 'decimal', precision: 9, scale: 6, nullable: true },
      units: { type: 'decimal', precision: 5, scale: 0 },
      share: { type: 'decimal', precision: 4, scale: 4 },
    });
    expect(models).toContain("  price: p.decimal('string').precision(12).scale(2).default('0.00'),\n");
    expect(models).toContain("  rate: p.decimal('string').precision(9).scale(6).nullable(),\n");
    expect(models).toContain("  units: p.decimal('string').precision(5).scale(0),\n");
    expect(models).toContain("  share: p.decimal('string').precision(4).scale(4),\n");
    expect(models).toContain('  declare rate: string | null;\n');
    // The patterns as printed in schemas.ts (TypeScript string literals), once in create and once in update.
    const patterns = {
      price: String.raw`'^-?\\d{1,10}(\\.\\d{1,2})?$'`,
      rate: String.raw`'^-?\\d{1,3}(\\.\\d{1,6})?$'`,
      units: String.raw`'^-?\\d{1,5}$'`,
      share: String.raw`'^-?0(\\.\\d{1,4})?$'`,
    };
    for (const literal of Object.values(patterns)) expect(schemas.split(`pattern: ${literal}`)).toHaveLength(3);
    // Output schemas carry no pattern: what the database returns is returned.
    expect(schemas).toMatch(/units: Type\.String\(\),\n/);
  });

  it.each([
    [
      'numeric(9, 6)',
      String.raw`^-?\d{1,3}(\.\d{1,6})?$`,
      ['0', '-999.999999', '12.5', '001.1'],
      ['1000', '1.1234567', '.5', '1.', '+1', '1e3', '1,5', ' 1'],
    ],
    ['numeric(5, 0)', String.raw`^-?\d{1,5}$`, ['99999', '-1', '0'], ['100000', '1.0', '1.']],
    ['numeric(4, 4)', String.raw`^-?0(\.\d{1,4})?$`, ['0', '0.9999', '-0.5'], ['1', '1.5', '0.12345', '.5']],
  ])('the %s pattern accepts what fits and nothing else', (_size, pattern, valid, invalid) => {
    const re = new RegExp(pattern);
    for (const value of valid) expect(re.test(value), value).toBe(true);
    for (const value of invalid) expect(re.test(value), value).toBe(false);
  });

  describe('through `core generate`', () => {
    const dir = tempDir('core-decimal-');
    const manifestPath = join(dir.path, 'src/apps/tasks/tasks.resource.json');

    beforeAll(() => {
      // The smallest project `core generate` works in: a package.json depending on the runtime, an
      // entry point and one app's manifest (no `core init`, which packs the runtime).
      cpSync(join(GOLDEN_DIR, 'minimal/input/src/main.ts'), join(dir.path, 'src/main.ts'));
      mkdirSync(join(dir.path, 'src/apps/tasks'), { recursive: true });
      writeFileSync(
        join(dir.path, 'package.json'),
        JSON.stringify({ name: 'shop', type: 'module', dependencies: { '@core/runtime': '0.0.0' } }),
      );
    });
    afterAll(() => dir.remove());

    const withFields = (fields: Record<string, unknown>) => {
      writeFileSync(manifestPath, JSON.stringify({ ...starter, fields: { ...starter.fields, ...fields } }, null, 2));
    };

    it('an invalid size: exit 1, one line per problem naming the JSON path, nothing written', async () => {
      withFields({
        price: { type: 'decimal', precision: 40 },
        ratio: { type: 'float', scale: 2 },
        fee: { type: 'decimal', precision: 3, scale: 4 },
      });
      let before = snapshot(dir.path);
      const result = await core(['generate'], { cwd: dir.path });
      expect(result.code).toBe(1);
      expect(lines(result.stderr)).toEqual([
        expect.stringMatching(
          /^core: src\/apps\/tasks\/tasks\.resource\.json \$\.fields\.price\.precision: must be <= 38, got 40 \(precision is the total number of digits/,
        ),
        'core: the manifest is invalid: nothing was written',
      ]);
      expect(result.stdout).toBe('');
      expect(snapshot(dir.path)).toEqual(before);

      // Structure fixed: the rules that need the whole field are reported together.
      withFields({
        price: { type: 'decimal', precision: 38 },
        ratio: { type: 'float', scale: 2 },
        fee: { type: 'decimal', precision: 3, scale: 4 },
      });
      before = snapshot(dir.path);
      const rules = await core(['generate'], { cwd: dir.path });
      expect(rules.code).toBe(1);
      expect(lines(rules.stderr)).toEqual([
        'core: src/apps/tasks/tasks.resource.json $.fields.ratio.scale: "scale" only applies to decimal fields, this one is "float"',
        'core: src/apps/tasks/tasks.resource.json $.fields.fee.scale: scale 4 is larger than precision 3: the digits after the point are part of the precision; lower "scale" or raise "precision"',
        'core: the manifest is invalid: nothing was written',
      ]);
      expect(snapshot(dir.path)).toEqual(before);
    });

    it('a valid size reaches models.ts and schemas.ts', async () => {
      withFields({ price: { type: 'decimal', precision: 10, scale: 4, default: '0.0000' } });
      const result = await core(['generate'], { cwd: dir.path });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('CREATE    src/apps/tasks/models.ts');
      const read = (file: string) => readFileSync(join(dir.path, file), 'utf8');
      expect(read('src/apps/tasks/models.ts')).toContain(
        "  price: p.decimal('string').precision(10).scale(4).default('0.0000'),\n",
      );
      expect(read('src/apps/tasks/schemas.ts')).toContain(
        String.raw`price: Type.Optional(Type.String({ pattern: '^-?\\d{1,6}(\\.\\d{1,4})?$', default: '0.0000' })),`,
      );
    });
  });
});

describe('"version": true', () => {
  it('is accepted on one non-null integer field that is not the key', () => {
    expect(issuesOf(withField('version', { type: 'integer', version: true }))).toEqual([]);
    expect(
      issuesOf(
        withField('revision', { type: 'integer', version: true, readonly: true, description: 'Bumped on every write' }),
      ),
    ).toEqual([]);
  });

  it.each([
    ['not a boolean', withField('v', { type: 'integer', version: 'yes' }), '$.fields.v.version', /expected boolean/],
    [
      'on a string',
      withField('v', { type: 'string', version: true }),
      '$.fields.v.version',
      /applies to integer fields, this one is "string"/,
    ],
    [
      'on a bigint',
      withField('v', { type: 'bigint', version: true }),
      '$.fields.v.version',
      /applies to integer fields/,
    ],
    [
      'on the primary key',
      { ...starter, fields: { ...starter.fields, id: { type: 'integer', primary: true, version: true } } },
      '$.fields.id.version',
      /primary key cannot be the version/,
    ],
    [
      'nullable',
      withField('v', { type: 'integer', version: true, nullable: true }),
      '$.fields.v.nullable',
      /cannot be nullable/,
    ],
    [
      'with a default',
      withField('v', { type: 'integer', version: true, default: 0 }),
      '$.fields.v.default',
      /starts at 1 by itself/,
    ],
    [
      'writable on create',
      withField('v', { type: 'integer', version: true, create: true }),
      '$.fields.v.create',
      /set by the system/,
    ],
    [
      'writable on update',
      withField('v', { type: 'integer', version: true, update: true }),
      '$.fields.v.update',
      /set by the system/,
    ],
    [
      'twice',
      {
        ...starter,
        fields: { ...starter.fields, a: { type: 'integer', version: true }, b: { type: 'integer', version: true } },
      },
      '$.fields',
      /2 version fields \(a, b\); a resource has at most one/,
    ],
  ])('is refused %s', (_name, manifest, path, message) => {
    const issues = issuesOf(manifest);
    expect(
      issues.find((i) => i.path === path),
      JSON.stringify(issues),
    ).toMatchObject({ message: expect.stringMatching(message) });
  });
});
