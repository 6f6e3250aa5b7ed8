/**
 * The two formatting helpers every generated file goes through: the width-aware expression printer
 * (generated code is formatted by construction, no formatter runs) and the import collector; and the
 * example role with a row filter that `core startapp` prints.
 */
import { describe, expect, it } from 'vitest';
import { array, call, chain, literal, print, property, str, WIDTH } from '../../generator/engine/code.js';
import { Imports } from '../../generator/engine/imports.js';
import { rowFilterExample } from '../../generator/generators/app/row-filter-example.js';
import type { Manifest } from '../../generator/manifest/schema.js';

const literals = (n: number, prefix = 'value') =>
  array(Array.from({ length: n }, (_, i) => call('Type.Literal', str(`${prefix}_${i}`))));

describe('print', () => {
  it.each([
    ['a string with quotes and backslashes', literal("it's \\d"), "'it\\'s \\\\d'"],
    [
      'an object literal',
      literal({ defaultLimit: 20, 'x-y': [true, null] }),
      "{ defaultLimit: 20, 'x-y': [true, null] }",
    ],
    ['an empty object and array', literal({ a: {}, b: [] }), '{ a: {}, b: [] }'],
    ['a chain', chain(call('p.string'), ['length', '255'], ['index']), 'p.string().length(255).index()'],
  ])('%s on one line when it fits', (_case, expr, expected) => {
    expect(print(expr, 0)).toBe(expected);
  });

  it('breaks a chain of more than two calls taking a function, one call per line, as Biome does', () => {
    const uuid = chain(call('p.uuid'), ['primary'], ['onCreate', '() => randomUUID()']);
    expect(property('id', uuid, 2)).toBe(
      ['  id: p', '    .uuid()', '    .primary()', '    .onCreate(() => randomUUID()),'].join('\n'),
    );
    // Two calls, or no function: one line.
    expect(property('at', chain(call('p.datetime'), ['onCreate', '() => new Date()']), 2)).toBe(
      '  at: p.datetime().onCreate(() => new Date()),',
    );
    expect(property('title', chain(call('p.string'), ['length', '255'], ['index']), 2)).toBe(
      '  title: p.string().length(255).index(),',
    );
  });

  it('hugs a trailing array argument when the line is too long, one element per line', () => {
    const text = property('status', call('Type.Union', literals(8)), 4);
    expect(text).toBe(
      [
        '    status: Type.Union([',
        ...Array.from({ length: 8 }, (_, i) => `      Type.Literal('value_${i}'),`),
        '    ]),',
      ].join('\n'),
    );
  });

  it('breaks the arguments of a call whose last argument cannot hug', () => {
    const inner = call('Type.Union', literals(3, 'a_rather_long_enum_value'), literal({ default: null }));
    const text = property('kind', call('Type.Optional', inner), 4);
    expect(text.split('\n')[0]).toBe('    kind: Type.Optional(');
    expect(text.split('\n').every((line) => line.length <= WIDTH)).toBe(true);
    expect(text.endsWith('\n    ),')).toBe(true);
  });
});

describe('Imports', () => {
  it('orders built-ins, packages, the framework, then relative files; values before types; only type names → import type', () => {
    const imports = new Imports()
      .value('./models.js', 'Task')
      .type('./schemas.js', 'TaskUpdateInput', 'TaskCreateInput')
      .value('@core/runtime', 'Inject', 'BaseService', 'domainEvent')
      .type('@core/runtime', 'UnitOfWork', 'Row', 'Inject')
      .value('../projects/models.js', 'Project')
      .type('@mikro-orm/core', 'Ref')
      .value('@mikro-orm/core', 'p')
      .value('node:crypto', 'randomUUID');
    expect(imports.render().split('\n')).toEqual([
      "import { randomUUID } from 'node:crypto';",
      "import { p, type Ref } from '@mikro-orm/core';",
      "import { BaseService, domainEvent, Inject, type Row, type UnitOfWork } from '@core/runtime';",
      "import { Project } from '../projects/models.js';",
      "import { Task } from './models.js';",
      "import type { TaskCreateInput, TaskUpdateInput } from './schemas.js';",
    ]);
  });

  it('lists one name per line when the declaration is too long', () => {
    const names = Array.from({ length: 12 }, (_, i) => `SomeRatherLongName${i}`);
    const text = new Imports().value('./schemas.js', ...names).render();
    expect(text.split('\n')).toEqual([
      'import {',
      ...[...names].sort().map((n) => `  ${n},`),
      "} from './schemas.js';",
    ]);
  });
});

describe('rowFilterExample (what `core startapp` prints and the project README shows)', () => {
  const manifest = (fields: Manifest['fields']): Manifest => ({ name: 'notes', entity: 'Note', fields });
  const id = { type: 'uuid', primary: true } as const;

  it.each([
    ['an owner_id field', { id, title: { type: 'string' }, owner_id: { type: 'string' } }, 'owner_id', true],
    ['an author_id uuid', { id, author_id: { type: 'uuid' } }, 'author_id', true],
    [
      'owner_id preferred over user_id',
      { id, user_id: { type: 'string' }, owner_id: { type: 'uuid' } },
      'owner_id',
      true,
    ],
    [
      'no field that could hold an owner: owner_id to add',
      { id, assignee_email: { type: 'string' } },
      'owner_id',
      false,
    ],
    ['an integer user_id does not compare with the sub claim', { id, user_id: { type: 'integer' } }, 'owner_id', false],
  ] as const)('%s', (_case, fields, field, present) => {
    const example = rowFilterExample(manifest(fields as Manifest['fields']));
    expect({ field: example.field, present: example.present }).toEqual({ field, present });
    expect(JSON.parse(`{${example.role.join('\n')}}`)).toEqual({
      member: {
        permissions: ['notes:*'],
        restricted_fields: [],
        row_filters: { notes: [{ field, op: 'eq', value: { $claim: 'sub' } }] },
      },
    });
  });
});
