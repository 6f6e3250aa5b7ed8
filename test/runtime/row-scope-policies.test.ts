/**
 * `row_filters` in policies: how several roles combine per table and action, what a caller without a
 * filter carries (nothing), and the mistakes refused at start with the JSON path that names them —
 * the structure when the policies are loaded, the names once they meet the models.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { dbManager, loadPolicies, type PolicyDocument } from '@core/runtime';
import { describePerDatabase } from '../helpers/databases.js';
import { POLICIES, startScopeApp } from './row-scope-app.js';

const SUB = { $claim: 'sub' };
const OWN = { field: 'owner_id', op: 'eq', value: SUB };
const PUBLIC = { field: 'is_public', op: 'eq', value: true };
const ORG = { field: 'org_id', op: 'eq', value: { $claim: 'org' } };

const COMBINED: PolicyDocument = {
  roles: {
    admin: { permissions: ['*'], restricted_fields: [] },
    writer: { permissions: ['docs:*'], restricted_fields: [], row_filters: { docs: [ORG, OWN] } },
    reader: {
      permissions: ['docs:view', 'docs:listview'],
      restricted_fields: [],
      row_filters: { docs: [ORG, PUBLIC] },
    },
    viewer: { permissions: ['docs:view'], restricted_fields: [] },
    linker: { permissions: ['links:*'], restricted_fields: [], row_filters: { docs: [OWN] } },
  },
};

describe('row filters of several roles', () => {
  const set = loadPolicies(COMBINED);
  const filter = (roles: string[], action: string, table = 'docs') =>
    set.contextFor({ sub: 'u', roles }).rowFilters?.filterFor(table, action);

  it('a role without any filter carries none: its callers pay nothing', () => {
    expect(set.contextFor({ sub: 'u', roles: ['admin'] }).rowFilters).toBeUndefined();
    expect(set.contextFor({ sub: 'u', roles: ['viewer'] }).rowFilters).toBeUndefined();
  });

  it('one role: its filter as written, for every action it grants', () => {
    expect(filter(['writer'], 'update')).toEqual([ORG, OWN]);
    expect(filter(['writer'], 'listview')).toEqual([ORG, OWN]);
    // A table the role does not filter is open.
    expect(filter(['writer'], 'view', 'links')).toBeNull();
  });

  it('roles granting the action are ORed; leaves they all share stay at the top level', () => {
    const both = filter(['writer', 'reader'], 'view');
    expect(both).toEqual([ORG, { op: 'or', items: expect.arrayContaining([OWN, PUBLIC]) }]);
    expect((both![1] as { items: readonly unknown[] }).items).toHaveLength(2);
    // Only writer grants update: reader's filter does not widen it.
    expect(filter(['writer', 'reader'], 'update')).toEqual([ORG, OWN]);
  });

  it('a role granting the action without a filter opens the table for that action only', () => {
    expect(filter(['writer', 'viewer'], 'view')).toBeNull();
    expect(filter(['writer', 'viewer'], 'update')).toEqual([ORG, OWN]);
  });

  it('where no role grants the action (a relation included from elsewhere), every role’s filter counts', () => {
    expect(filter(['linker'], 'view')).toEqual([OWN]);
    expect(filter(['linker', 'admin'], 'view')).toBeNull();
  });

  it('a caller without any known role sees no row of a table some role filters', () => {
    const ctx = set.contextFor({ sub: 'u', roles: ['ghost'] });
    expect(ctx.rowFilters?.filterFor('docs', 'view')).toEqual([{ op: 'or', items: [] }]);
    expect(ctx.rowFilters?.filterFor('links', 'view')).toBeNull();
  });

  it('the claims of the token travel in the context', () => {
    const claims = { sub: 'u', org: 'acme' };
    expect(set.contextFor({ sub: 'u', roles: ['writer'], claims }).claims).toBe(claims);
  });
});

describe('row filter structure, checked when the policies are loaded', () => {
  const withFilter = (nodes: unknown[]): PolicyDocument =>
    ({
      roles: { member: { permissions: ['docs:*'], restricted_fields: [], row_filters: { docs: nodes } } },
    }) as PolicyDocument;

  it.each([
    [
      '$claim with an operator other than eq, ne, in, nin',
      [{ field: 'n', op: 'gt', value: SUB }],
      '$.roles.member.row_filters.docs[0].op',
    ],
    [
      'a $claim that is not a claim path',
      [{ field: 'n', op: 'eq', value: { $claim: '' } }],
      '$.roles.member.row_filters.docs[0].value.$claim',
    ],
    [
      'an object value that is not a claim',
      [{ field: 'n', op: 'eq', value: { claim: 'sub' } }],
      '$.roles.member.row_filters.docs[0].value',
    ],
    ['a group without items', [{ op: 'or' }], '$.roles.member.row_filters.docs[0].items'],
    ['an unknown group operator', [{ op: 'xor', items: [OWN] }], '$.roles.member.row_filters.docs[0].op'],
    [
      'a leaf without a field',
      [{ op: 'or', items: [{ op: 'eq', value: 1 }] }],
      '$.roles.member.row_filters.docs[0].items[0].field',
    ],
    ['an unexpected key', [{ field: 'n', op: 'eq', value: 1, values: [1] }], '$.roles.member.row_filters.docs[0]'],
    ['a node that is not an object', ['owner_id = 1'], '$.roles.member.row_filters.docs[0]'],
  ])('%s is refused, naming its JSON path', (_what, nodes, path) => {
    let error: unknown;
    try {
      loadPolicies(withFilter(nodes));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe('PolicyError');
    expect((error as Error).message).toContain(`${path} `);
  });

  it('a valid filter loads', () => {
    expect(() =>
      loadPolicies(withFilter([OWN, { op: 'or', items: [PUBLIC, { op: 'and', items: [] }] }])),
    ).not.toThrow();
  });
});

describePerDatabase('row filter names, checked against the models at start', ({ url }) => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await dbManager.close();
  });

  const member = (filters: Record<string, unknown[]>): PolicyDocument => {
    const doc = structuredClone(POLICIES) as PolicyDocument;
    doc.roles['member']!.row_filters = filters as never;
    return doc;
  };

  it.each([
    ['an unknown table', { ghosts: [OWN] }, '$.roles.member.row_filters.ghosts', 'ghosts'],
    [
      'an unknown field',
      { projects: [{ field: 'colour', op: 'eq', value: 'red' }] },
      '$.roles.member.row_filters.projects[0].field',
      'colour',
    ],
    [
      'an unknown relation',
      { tasks: [{ field: 'owner.id', op: 'eq', value: SUB }] },
      '$.roles.member.row_filters.tasks[0].field',
      'owner',
    ],
    [
      'an unknown operator',
      { projects: [{ field: 'name', op: 'regex', value: 'x' }] },
      '$.roles.member.row_filters.projects[0].op',
      'regex',
    ],
    [
      'an operator the column does not take',
      { projects: [{ field: 'budget', op: 'startswith', value: '1' }] },
      '$.roles.member.row_filters.projects[0].op',
      'startswith',
    ],
    [
      'a value the column cannot hold',
      { projects: [{ field: 'budget', op: 'eq', value: 'lots' }] },
      '$.roles.member.row_filters.projects[0].value',
      'lots',
    ],
    [
      'a mistake deep in a group',
      { projects: [{ op: 'or', items: [PUBLIC] }] },
      '$.roles.member.row_filters.projects[0].items[0].field',
      'is_public',
    ],
  ])('%s stops the start, naming its JSON path', async (_what, filters, path, word) => {
    const error = await startScopeApp(url(), member(filters)).then(
      (started) => {
        app = started;
        return undefined;
      },
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain(`${path} `);
    expect(message).toContain(word);
  });

  it('the valid policies start (the control)', async () => {
    app = await startScopeApp(url(), POLICIES);
    expect(app.server).toBeDefined();
  });
});
