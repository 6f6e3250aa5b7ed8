/**
 * The OpenAPI document of the generated relation-graph project (six related resources) against its
 * real HTTP responses: every route of every resource, as each role of the relation policies, with
 * includes, relation paths in searches, unique and foreign-key conflicts and restricted relations.
 * Each response must be declared (status, headers, body schema) by the shared document and by the
 * caller's own document, and both documents pass `redocly lint` without errors.
 */
import { signToken } from '@core/runtime';
import { beforeAll, expect, it } from 'vitest';
import { OpenApiConformance, redoclyLint } from '../helpers/openapi.js';
import { describeRelationApp, SECRET, seedGraph, type Role } from './relation-app.js';

type Json = Record<string, unknown>;

const ROLES: readonly Role[] = ['admin', 'noproject', 'nobudget', 'anonymous'];
const RESOURCES = ['users', 'profiles', 'projects', 'labels', 'tasks', 'comments'];
const MISSING = '00000000-0000-4000-8000-000000000000';

describeRelationApp('the OpenAPI document of related resources', (ctx) => {
  let shared: OpenApiConformance;
  const own = new Map<Role, OpenApiConformance>();

  const headersOf = (role: Role): Record<string, string> =>
    role === 'anonymous' ? {} : { authorization: `Bearer ${signToken({ sub: role, roles: [role] }, SECRET)}` };

  const send = async (
    role: Role,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Json }> => {
    const headers = headersOf(role);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(ctx.baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const observed = { method, url: path, status: res.status, headers: Object.fromEntries(res.headers), body: text };
    shared.check(observed);
    own.get(role)!.check(observed);
    return { status: res.status, json: text ? (JSON.parse(text) as Json) : {} };
  };

  beforeAll(async () => {
    const documentFor = async (role: Role): Promise<Json> => {
      const res = await fetch(`${ctx.baseUrl}/docs/json`, { headers: headersOf(role) });
      expect(res.status).toBe(200);
      return (await res.json()) as Json;
    };
    shared = new OpenApiConformance(await documentFor('anonymous'));
    for (const role of ROLES)
      own.set(role, new OpenApiConformance(await documentFor(role), { callerDocument: role !== 'anonymous' }));
  });

  it('names one output component per resource, relations optional, restricted fields per caller', () => {
    const schemas = (shared.document['components'] as Json)['schemas'] as Record<string, Json>;
    for (const entity of ['User', 'Profile', 'Project', 'Label', 'Task', 'Comment']) {
      for (const suffix of ['Out', 'Create', 'Update', 'Patch', 'SearchRequest'])
        expect(Object.keys(schemas), entity + suffix).toContain(entity + suffix);
    }
    const task = schemas['TaskOut']!;
    expect(task['properties']).toMatchObject({
      project: { anyOf: [{ $ref: '#/components/schemas/ProjectOut' }, { type: 'null' }] },
      comments: { type: 'array', items: { $ref: '#/components/schemas/CommentOut' } },
    });
    // `noproject` cannot see the task → project link, `nobudget` a project's budget: optional here…
    expect(task['required']).not.toContain('project_id');
    expect(schemas['ProjectOut']!['required']).not.toContain('budget');
    // … and absent from those callers' documents.
    const schemasOf = (role: Role): Record<string, Json> =>
      (own.get(role)!.document['components'] as Json)['schemas'] as Record<string, Json>;
    expect(Object.keys(schemasOf('noproject')['TaskOut']!['properties'] as Json)).not.toContain('project_id');
    expect(Object.keys(schemasOf('noproject')['TaskOut']!['properties'] as Json)).not.toContain('project');
    expect(Object.keys(schemasOf('noproject')['TaskCreate']!['properties'] as Json)).not.toContain('project_id');
    expect(Object.keys(schemasOf('nobudget')['ProjectOut']!['properties'] as Json)).not.toContain('budget');
    // `password_hash` is never returned, so it is not in any output component.
    expect(Object.keys(schemas['UserOut']!['properties'] as Json)).not.toContain('password_hash');
  });

  it('passes redocly lint without errors, shared and per caller', async () => {
    if (ctx.dbName !== 'sqlite') return; // the document does not depend on the database
    const lint = await redoclyLint([shared.document, own.get('noproject')!.document, own.get('nobudget')!.document]);
    expect(lint.errors).toBe(0);
    expect(lint.problems.filter((p) => !p.startsWith('info-license:'))).toEqual([]);
  });

  it.each(ROLES)('declares every response of every resource route to %s', async (role) => {
    const graph = await seedGraph(ctx);
    const ids: Record<string, string> = {
      users: String(graph.user.id),
      profiles: String(graph.profile.id),
      projects: String(graph.project.id),
      labels: String(graph.labels[0]!.id),
      tasks: String(graph.task.id),
      comments: String(graph.comments[0]!.id),
    };
    const bodies: Record<string, Json> = {
      users: { email: `${role}@example.com`, name: role, password_hash: 'x' },
      profiles: { bio: role, user_id: ids['users'] },
      projects: { name: `P-${role}`, budget: 5, owner_id: ids['users'] },
      labels: { name: `L-${role}`, color: 'red' },
      tasks: { title: role, project_id: ids['projects'], tag_ids: [ids['labels']] },
      comments: { body: role, task_id: ids['tasks'], author_id: ids['users'] },
    };
    const includes: Record<string, string> = {
      users: 'projects,profile',
      profiles: 'user',
      projects: 'owner,tasks.labels',
      labels: 'tasks',
      tasks: 'project.owner,comments.author,labels',
      comments: 'task.project,author',
    };
    for (const name of RESOURCES) {
      const id = ids[name]!;
      const created = await send(role, 'POST', `/${name}`, bodies[name]);
      await send(role, 'GET', `/${name}/${id}?include=${includes[name]}`);
      await send(role, 'GET', `/${name}/${MISSING}`);
      await send(role, 'GET', `/${name}?include=${includes[name]}`);
      await send(role, 'GET', `/${name}/?limit=1&include=${includes[name]}`);
      await send(role, 'POST', `/${name}/search`, {
        include: includes[name]!.split(','),
        limit: 5,
        sort: [{ field: 'id', order: 'desc' }],
      });
      await send(role, 'POST', `/${name}/search`, { filters: [{ field: 'nope', op: 'eq', value: 1 }] });
      await send(role, 'PATCH', `/${name}/${id}`, name === 'labels' ? { name: 'ui' } : {});
      if (created.status === 201) {
        const newId = String((created.json['data'] as Json)['id']);
        await send(role, 'PUT', `/${name}/${newId}`, bodies[name]);
        await send(role, 'DELETE', `/${name}/${newId}`);
      }
    }
    // Relation paths: a restricted one is a 403 for that caller, the same request a 200 for others.
    await send(role, 'POST', '/tasks/search', {
      filters: [{ field: 'project.name', op: 'eq', value: 'Apollo' }],
      include: ['project'],
    });
    await send(role, 'POST', '/projects/search', { filters: [{ field: 'budget', op: 'gt', value: 1 }] });
    await send(role, 'GET', '/tasks?include=project');
    // Conflicts: a unique value taken, a row still referenced.
    await send(role, 'POST', '/labels', { name: String(graph.labels[1]!.name) });
    await send(role, 'POST', '/projects', { name: String(graph.project.name) });
    await send(role, 'DELETE', `/users/${ids['users']}`);

    expect(shared.report()).toBe('');
    expect(own.get(role)!.report()).toBe('');
  });

  // Runs last: the tests above are the ones that produce these answers.
  it('reached every answer the suite means to check (so a change that stops producing one cannot weaken it)', () => {
    const expected = [
      'createLabel 201',
      'createLabel 409',
      'createProject 409',
      'deleteUser 409',
      'updateLabel 409',
      'getTask 200',
      'getTask 404',
      'getTask 401',
      'listTasks 200',
      'listTasks 403',
      'searchTasks 200',
      'searchTasks 403',
      'searchProjects 403',
      'searchComments 422',
      'replaceComment 200',
      'deleteComment 200',
      'createComment 401',
    ];
    expect([...shared.covered].filter((c) => expected.includes(c)).sort()).toEqual([...expected].sort());
  });
});
