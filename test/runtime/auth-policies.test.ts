import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PolicyError, loadPolicies } from '@core/runtime';
import { POLICIES } from './auth-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'core-policies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

describe('loadPolicies: sources', () => {
  it.each([
    ['a path', () => file('ok.json', JSON.stringify(POLICIES))],
    ['a file URL', () => pathToFileURL(file('ok-url.json', JSON.stringify(POLICIES)))],
    ['an object', () => POLICIES],
  ])('from %s', (_name, source) => {
    const set = loadPolicies(source());
    expect(set.roleNames).toEqual(Object.keys(POLICIES.roles));
    const ctx = set.contextFor({ sub: 'u', roles: ['viewer'] });
    expect([...ctx.permissions].sort()).toEqual(['tasks:listview', 'tasks:view']);
  });

  it('accepts a $schema key for editor completion', () => {
    expect(() => loadPolicies({ $schema: './policies.schema.json', ...POLICIES })).not.toThrow();
  });
});

describe('loadPolicies: errors name the JSON path', () => {
  const viewer = { permissions: ['tasks:view'], restricted_fields: [] };
  it.each([
    { name: 'not an object', doc: 5, expected: ['$ must be object'] },
    { name: 'roles missing', doc: {}, expected: ['$ must have required properties roles'] },
    { name: 'roles is an array', doc: { roles: [] }, expected: ['$.roles must be object'] },
    { name: 'unexpected top-level key', doc: { roles: {}, users: {} }, expected: ['$ has unexpected key(s) "users"'] },
    {
      name: 'permissions not an array',
      doc: { roles: { viewer: { ...viewer, permissions: 'tasks:view' } } },
      expected: ['$.roles.viewer.permissions must be array'],
    },
    {
      name: 'permission not a string',
      doc: { roles: { viewer: { ...viewer, permissions: ['tasks:view', 7] } } },
      expected: ['$.roles.viewer.permissions[1] must be string'],
    },
    {
      name: 'permission with whitespace',
      doc: { roles: { viewer: { ...viewer, permissions: ['tasks:view '] } } },
      expected: ['$.roles.viewer.permissions[0] must be a permission without whitespace'],
    },
    {
      name: 'restricted_fields missing',
      doc: { roles: { viewer: { permissions: [] } } },
      expected: ['$.roles.viewer must have required properties restricted_fields'],
    },
    {
      name: 'restriction without a namespace',
      doc: { roles: { viewer: { ...viewer, restricted_fields: ['assignee_email'] } } },
      expected: ['$.roles.viewer.restricted_fields[0] must look like "<table>.<field>"'],
    },
    {
      name: 'unexpected role key',
      doc: { roles: { viewer: { ...viewer, inherits: 'admin' } } },
      expected: ['$.roles.viewer has unexpected key(s) "inherits"'],
    },
    {
      name: 'odd role names are quoted',
      doc: { roles: { 'team-lead': { ...viewer, permissions: [1] } } },
      expected: ['$.roles["team-lead"].permissions[0] must be string'],
    },
  ])('$name', ({ doc, expected }) => {
    let error: unknown;
    try {
      loadPolicies(doc as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PolicyError);
    for (const fragment of expected) expect((error as Error).message).toContain(fragment);
  });

  it.each([
    {
      name: 'missing file',
      setup: () => join(dir, 'nope.json'),
      expected: /Cannot read the policies file .*nope\.json \(ENOENT\)/,
    },
    { name: 'invalid JSON', setup: () => file('bad.json', '{ "roles": { '), expected: /bad\.json is not valid JSON/ },
    {
      name: 'invalid shape names the file',
      setup: () => file('shape.json', '{ "roles": { "a": {} } }'),
      expected: /shape\.json: \$\.roles\.a must have required properties/,
    },
  ])('$name', ({ setup, expected }) => {
    expect(() => loadPolicies(setup())).toThrow(expected);
  });
});
