import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ManifestError, parseManifest, validateManifest } from '../../generator/manifest/validate.js';

const seed = JSON.parse(readFileSync(new URL('../../fixtures/specs/tasks.resource.json', import.meta.url), 'utf8'));

function issuesOf(manifest: unknown): { path: string; message: string }[] {
  try {
    validateManifest(manifest, 'tasks.resource.json');
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return (err as ManifestError).issues;
  }
}

const withField = (name: string, spec: unknown) => ({ ...seed, fields: { ...seed.fields, [name]: spec } });

describe('manifest validation', () => {
  it('accepts the seed task manifest', () => {
    expect(validateManifest(seed, 'tasks.resource.json')).toEqual(seed);
  });

  it.each([
    ['unknown top-level key', { ...seed, colour: 'red' }, '$', /unknown key "colour"/],
    ['unknown field type', withField('x', { type: 'money' }), '$.fields.x.type', /expected one of "uuid".*got "money"/],
    ['unknown field flag', withField('x', { type: 'string', requried: true }), '$.fields.x', /unknown key "requried"/],
    ['bad field name', withField('Title', { type: 'string' }), '$.fields.Title', /not a valid name/],
    ['bad table name', { ...seed, name: 'Tasks' }, '$.name', /lower snake_case/],
    ['bad entity name', { ...seed, entity: 'task' }, '$.entity', /PascalCase/],
    ['missing fields', { name: 'tasks', entity: 'Task' }, '$', /missing required key "fields"/],
    ['max_length < 1', withField('x', { type: 'string', max_length: 0 }), '$.fields.x.max_length', />= 1/],
    ['default of the wrong type', withField('x', { type: 'boolean', default: 'yes' }), '$.fields.x.default', /true or false/],
    ['null default without nullable', withField('x', { type: 'string', default: null }), '$.fields.x.default', /nullable/],
    ['default longer than max_length', withField('x', { type: 'string', max_length: 2, default: 'abc' }), '$.fields.x.default', /longer than max_length/],
    ['enum without values', withField('x', { type: 'enum' }), '$.fields.x', /needs "values"/],
    ['enum default outside values', withField('x', { type: 'enum', values: ['a'], default: 'b' }), '$.fields.x.default', /one of/],
    ['max_length on an integer', withField('x', { type: 'integer', max_length: 3 }), '$.fields.x.max_length', /only applies/],
    ['two primary keys', withField('x', { type: 'uuid', primary: true }), '$.fields', /2 primary fields/],
    ['no primary key', { ...seed, fields: { title: { type: 'string' } } }, '$.fields', /exactly one/],
    ['reserved name', withField('constructor', { type: 'string' }), '$.fields.constructor', /reserved/],
    ['relation named like a field', { ...seed, relations: { title: { kind: 'many-to-one', target: 'projects' } } }, '$.relations.title', /same name as a field/],
    ['one-to-many without inverse', { ...seed, relations: { comments: { kind: 'one-to-many', target: 'comments' } } }, '$.relations.comments.inverse', /needs "inverse"/],
    ['unknown relation kind', { ...seed, relations: { p: { kind: 'belongs-to', target: 'projects' } } }, '$.relations.p.kind', /expected one of "many-to-one"/],
  ])('%s', (_name, manifest, path, message) => {
    const issues = issuesOf(manifest);
    expect(issues.find((i) => i.path === path), JSON.stringify(issues)).toMatchObject({ message: expect.stringMatching(message) });
  });

  it('reports invalid JSON with the file name', () => {
    expect(() => parseManifest('{ "name": ', 'src/apps/tasks/tasks.resource.json')).toThrow(/Invalid manifest src\/apps\/tasks\/tasks.resource.json:\n  \$: not valid JSON/);
  });

  it('lists every problem at once, one per line', () => {
    const manifest = { ...seed, name: 'Tasks', fields: { ...seed.fields, x: { type: 'money' } } };
    expect(() => validateManifest(manifest, 'm.json')).toThrow(/\$\.name: .*\n  \$\.fields\.x\.type: /);
  });
});
