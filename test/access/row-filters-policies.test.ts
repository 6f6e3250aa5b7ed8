/**
 * A policies document whose `row_filters` name a table, field, relation or operator the app does not
 * have stops the app at start, with an error naming the JSON path of the mistake, instead of a filter
 * that silently matches nothing (or everything).
 */
import { afterEach, expect, it } from 'vitest';
import { dbManager, type PolicyDocument } from '@core/runtime';
import type { FastifyInstance } from 'fastify';
import { describePerDatabase } from '../helpers/databases.js';
import { rowFilterPolicies, startApp, type Json } from './helpers.js';

type Edit = (filters: Record<string, Json[]>) => void;

const CLAIM = { $claim: 'sub' };

/** [what, edit of member's row_filters, JSON path the error names, word the error quotes] */
const MISTAKES: [string, Edit, string, string][] = [
  [
    'an unknown table',
    (f) => {
      f['nope_table'] = [{ field: 'id', op: 'eq', value: CLAIM }];
    },
    '$.roles.member.row_filters.nope_table',
    'nope_table',
  ],
  [
    'an unknown field',
    (f) => {
      f['tasks'] = [{ field: 'nope_field', op: 'eq', value: CLAIM }];
    },
    '$.roles.member.row_filters.tasks[0]',
    'nope_field',
  ],
  [
    'an unknown relation in a path',
    (f) => {
      f['tasks'] = [{ field: 'ghost.owner_id', op: 'eq', value: CLAIM }];
    },
    '$.roles.member.row_filters.tasks[0]',
    'ghost',
  ],
  [
    'an unknown field at the end of a relation path',
    (f) => {
      f['tasks'] = [{ field: 'project.nope_field', op: 'eq', value: CLAIM }];
    },
    '$.roles.member.row_filters.tasks[0]',
    'nope_field',
  ],
  [
    'an unknown operator',
    (f) => {
      f['tasks'] = [{ field: 'owner_id', op: 'regex', value: 'x' }];
    },
    '$.roles.member.row_filters.tasks[0]',
    'regex',
  ],
  [
    'an unknown group operator',
    (f) => {
      f['tasks'] = [
        { field: 'owner_id', op: 'eq', value: CLAIM },
        { op: 'xor', items: [{ field: 'points', op: 'gt', value: 1 }] },
      ];
    },
    '$.roles.member.row_filters.tasks[1]',
    'xor',
  ],
  [
    'a $claim value with an operator other than eq, ne, in and nin',
    (f) => {
      f['tasks'] = [{ field: 'points', op: 'gt', value: { $claim: 'level' } }];
    },
    '$.roles.member.row_filters.tasks[0]',
    'gt',
  ],
  [
    'an unknown field inside an or group',
    (f) => {
      f['projects'] = [
        {
          op: 'or',
          items: [
            { field: 'is_public', op: 'eq', value: true },
            { field: 'nope_field', op: 'eq', value: CLAIM },
          ],
        },
      ];
    },
    '$.roles.member.row_filters.projects[0].items[1]',
    'nope_field',
  ],
];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describePerDatabase('row filters: policies checked at start', ({ url }) => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await dbManager.close();
  });

  it('the valid document starts (the control)', async () => {
    app = await startApp(url(), { policies: rowFilterPolicies() });
    expect(app.server).toBeDefined();
  });

  it.each(MISTAKES)('%s stops the start with an error naming its JSON path', async (_what, edit, path, word) => {
    const policies = rowFilterPolicies() as PolicyDocument & { roles: Record<string, Json> };
    edit(policies.roles['member']!['row_filters'] as Record<string, Json[]>);
    const error = await startApp(url(), { policies }).then(
      (started) => {
        app = started;
        return null;
      },
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    // The path of the mistake itself, not of a sibling: `tasks[0]` must not be read as `tasks[0]x`.
    expect(message).toMatch(new RegExp(`${escapeRegExp(path)}(?![\\w\\[])`));
    expect(message).toMatch(new RegExp(`\\b${escapeRegExp(word)}\\b`));
  });
});
