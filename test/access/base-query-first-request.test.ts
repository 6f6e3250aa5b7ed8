/**
 * A repository's `buildBaseQuery` override scopes its rows from the very first request, including
 * when that request comes through another resource (an include, a relation path) and no request has
 * reached the overridden resource yet: the router builds each service once when the app is ready.
 * A file of its own, because the scope is registered process-wide once a repository is built.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { container, type PolicyDocument } from '@core/runtime';
import { TaskRepository } from './fixtures/app/src/apps/tasks/repositories.js';
import { TenantTaskRepository } from './fixtures/tenant-repository.js';
import { describeAccessApp, idList, idSet, signClaims, type AccessApp, type Json } from './helpers.js';

const POLICIES: PolicyDocument = {
  roles: {
    admin: { permissions: ['*'], restricted_fields: [] },
    staff: { permissions: ['tasks:*', 'projects:*'], restricted_fields: [] },
    anonymous: { permissions: [], restricted_fields: [] },
  },
};

const ANN = signClaims({ sub: 'ann', roles: ['staff'], tenant: 'acme' });

describeAccessApp(
  'buildBaseQuery override before any request to its resource',
  {
    policies: () => POLICIES,
    configure: () => {
      container.scoped(TaskRepository, { useClass: TenantTaskRepository });
    },
  },
  (ctx: AccessApp) => {
    it('a project include and a relation path obey the tenant scope on the first request', async () => {
      const project = await ctx.admin('POST', '/projects/', { name: 'Shared venture' });
      // Tasks written straight into the table: nothing has asked the task resource for anything yet.
      const rows = [
        { id: randomUUID(), title: 'acme 1', tenant: 'acme' },
        { id: randomUUID(), title: 'globex 1', tenant: 'globex' },
      ];
      for (const row of rows) {
        await ctx.db.orm.em
          .getConnection()
          .execute('insert into tasks (id, title, tenant, project_id) values (?, ?, ?, ?)', [
            row.id,
            row.title,
            row.tenant,
            project.id,
          ]);
      }
      const included = await ctx.call(ANN, 'GET', `/projects/${project.id}?include=tasks`);
      expect(included.statusCode, included.body).toBe(200);
      expect(idSet(included.json().data.tasks as Json[])).toEqual(idSet([rows[0]!]));

      const matched = await ctx.call(ANN, 'POST', '/projects/search', {
        filters: [{ field: 'tasks.title', op: 'eq', value: 'globex 1' }],
      });
      expect(matched.statusCode, matched.body).toBe(200);
      expect(idList(matched.json().data)).toEqual([]);
    });
  },
);
