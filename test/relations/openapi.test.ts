/**
 * The OpenAPI document of the generated relation-graph project (six related resources) against its
 * real HTTP responses: every route of every resource, as each role of the relation policies, with
 * includes, relation paths in searches, unique and foreign-key conflicts and restricted relations.
 * Each response must be declared (status, headers, body schema) by the shared document and by the
 * caller's own document, and both documents pass `redocly lint` without errors.
 */
import { FILTER_OPERATORS, signToken } from '@core/runtime';
import { beforeAll, expect, it } from 'vitest';
import { OpenApiConformance, redoclyLint } from '../helpers/openapi.js';
import { describeRelationApp, SECRET, seedGraph, type Role } from './relation-app.js';

type Json = Record<string, unknown>;

const ROLES: readonly Role[] = ['admin', 'noproject', 'nobudget', 'anonymous'];
const RESOURCES = ['users', 'profiles', 'projects', 'labels', 'tasks', 'comments'];
const MISSING = '00000000-0000-4000-8000-000000000000';

/**
 * Filter leaves per probing search. Few: PostgreSQL plans a statement that joins dozens of distinct
 * relation paths very slowly (48 such leaves on users outlast its statement timeout).
 */
const LEAVES_PER_SEARCH = 8;

/** A value of the type an output property declares, to filter on that field with. */
function sampleValue(property: Json, uuid: string): unknown {
  const types = [property['type']].flat();
  if (property['format'] === 'uuid') return uuid;
  if (property['format'] === 'date') return '2024-01-31';
  if (property['format'] === 'date-time') return '2024-01-31T10:00:00Z';
  if (types.includes('integer') || types.includes('number')) return 5;
  if (types.includes('boolean')) return true;
  return 'x';
}

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
    const observed = {
      method,
      url: path,
      status: res.status,
      headers: Object.fromEntries(res.headers),
      body: text,
      ...(body === undefined ? {} : { requestBody: JSON.stringify(body) }),
    };
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

  const componentsOf = (conformance: OpenApiConformance): Record<string, Json> =>
    (conformance.document['components'] as Json)['schemas'] as Record<string, Json>;

  /** What one document says a resource's search accepts: filter fields by operator list, sort fields, include paths. */
  const vocabularyOf = (conformance: OpenApiConformance, entity: string) => {
    const schemas = componentsOf(conformance);
    const enumOf = (node: Json): string[] => node['enum'] as string[];
    const branches = ((schemas[`${entity}FilterCondition`]!['anyOf'] as Json[]) ?? []).map((branch) => {
      const properties = branch['properties'] as Record<string, Json>;
      return { fields: enumOf(properties['field']!), ops: enumOf(properties['op']!) };
    });
    const sort = enumOf((schemas[`${entity}SortRule`]!['properties'] as Record<string, Json>)['field']!);
    const include = schemas[`${entity}IncludePath`] === undefined ? [] : enumOf(schemas[`${entity}IncludePath`]!);
    return { branches, filterFields: branches.flatMap((b) => b.fields), sort, include };
  };

  const ENTITIES: Record<string, string> = {
    users: 'User',
    profiles: 'Profile',
    projects: 'Project',
    labels: 'Label',
    tasks: 'Task',
    comments: 'Comment',
  };

  /** A search as `role` (no conformance check: these probe the engine, many at a time). */
  const search = async (role: Role, name: string, body: Json): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${ctx.baseUrl}/${name}/search`, {
      method: 'POST',
      headers: { ...headersOf(role), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Json };
  };

  /** The output schema of a field path (`project.owner.email`), following the relations' components. */
  const outputProperty = (entity: string, path: string): Json => {
    const schemas = componentsOf(shared);
    let node = schemas[`${entity}Out`]!;
    const segments = path.split('.');
    for (const segment of segments.slice(0, -1)) {
      const relation = (node['properties'] as Record<string, Json>)[segment]!;
      const target = ((relation['items'] as Json | undefined) ?? (relation['anyOf'] as Json[])[0]!)['$ref'] as string;
      node = schemas[target.split('/').pop()!]!;
    }
    return (node['properties'] as Record<string, Json>)[segments[segments.length - 1]!]!;
  };

  const chunks = <T>(items: readonly T[], size: number): T[][] =>
    Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, i * size + size));

  it('enumerates filter fields, sort fields and include paths to the path depth limit, and no further', () => {
    const task = vocabularyOf(shared, 'Task');
    expect(new Set(task.include)).toEqual(
      new Set([
        ...['project', 'comments', 'labels'],
        ...['project.owner', 'project.tasks', 'comments.task', 'comments.author', 'labels.tasks'],
        ...['project.owner.profile', 'project.owner.projects', 'project.tasks.project', 'project.tasks.comments'],
        ...['project.tasks.labels', 'comments.task.project', 'comments.task.comments', 'comments.task.labels'],
        ...['comments.author.profile', 'comments.author.projects', 'labels.tasks.project', 'labels.tasks.comments'],
        'labels.tasks.labels',
      ]),
    );
    // Three relations and a field at most (the engine's maxPathDepth is 3).
    expect(task.filterFields).toEqual(
      expect.arrayContaining([
        'title',
        'project_id',
        'project.name',
        'comments.author.email',
        'labels.tasks.project.budget',
      ]),
    );
    expect(task.filterFields.filter((f) => f.split('.').length > 4)).toEqual([]);
    expect(task.filterFields).toHaveLength(new Set(task.filterFields).size);
    // Sorting follows to-one relations only.
    expect(task.sort).toEqual(expect.arrayContaining(['title', 'project.name', 'project.owner.profile.bio']));
    expect(task.sort.filter((f) => f.startsWith('comments.') || f.startsWith('labels.'))).toEqual([]);
    // Operators by the column's kind: text takes every operator, a number comparisons, a boolean equality.
    const opsOf = (field: string): string[] | undefined => task.branches.find((b) => b.fields.includes(field))?.ops;
    expect(opsOf('title')).toEqual(expect.arrayContaining(['eq', 'in', 'gt', 'like', 'ilike', 'contains', 'isnull']));
    expect(opsOf('points')).toEqual(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'isnull']);
    expect(opsOf('is_completed')).toEqual(['eq', 'ne', 'in', 'nin', 'isnull']);
    expect(opsOf('project.owner.profile.bio')).toEqual(opsOf('title'));
  });

  it("states each resource's limits: page size, offset, list lengths, the id's format", () => {
    const paths = shared.document['paths'] as Record<string, Record<string, Json>>;
    const parameter = (path: string, method: string, name: string): Json =>
      (paths[path]![method]!['parameters'] as Json[]).find((p) => p['name'] === name)!;
    // projects.resource.json sets pagination.max_limit 100; the others keep 500.
    expect(parameter('/projects', 'get', 'limit')['schema']).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    expect(parameter('/tasks', 'get', 'limit')['schema']).toEqual({ type: 'integer', minimum: 1, maximum: 500 });
    expect(parameter('/tasks', 'get', 'offset')['schema']).toEqual({ type: 'integer', minimum: 0 });
    const schemas = componentsOf(shared);
    const body = (entity: string): Record<string, Json> =>
      schemas[`${entity}SearchRequest`]!['properties'] as Record<string, Json>;
    expect(body('Project')['limit']).toMatchObject({ minimum: 1, maximum: 100 });
    expect(body('Task')['limit']).toMatchObject({ minimum: 1, maximum: 500 });
    expect(body('Task')['offset']).toMatchObject({ minimum: 0 });
    expect(body('Task')['include']).toMatchObject({
      maxItems: 8,
      items: { $ref: '#/components/schemas/TaskIncludePath' },
    });
    expect(body('Task')['sort']).toMatchObject({ maxItems: 5 });
    for (const method of ['get', 'put', 'patch', 'delete']) {
      const id = parameter('/tasks/{id}', method, 'id');
      expect(id['schema']).toMatchObject({ type: 'string', format: 'uuid' });
      expect(id['example']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
    // `include` on get and list: one path or several, sent comma-separated.
    expect(parameter('/tasks/{id}', 'get', 'include')).toMatchObject({
      style: 'form',
      explode: false,
      schema: { anyOf: [{ $ref: '#/components/schemas/TaskIncludePath' }, { type: 'array', maxItems: 8 }] },
    });
  });

  it('lists exactly what the engine accepts: every name and operator it lists is taken, every other refused', async () => {
    for (const [name, entity] of Object.entries(ENTITIES)) {
      const { branches, filterFields, sort, include } = vocabularyOf(shared, entity);
      for (const part of chunks(filterFields, LEAVES_PER_SEARCH)) {
        const res = await search('admin', name, {
          filters: part.map((field) => ({ field, op: 'isnull', value: false })),
        });
        expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(200);
      }
      for (const part of chunks(include, 8)) {
        const res = await search('admin', name, { include: part, limit: 1 });
        expect(res.status, `${name} include ${part.join(',')}: ${JSON.stringify(res.json)}`).toBe(200);
      }
      for (const field of sort) {
        const res = await search('admin', name, { sort: [{ field, order: 'desc' }], limit: 1 });
        expect(res.status, `${name} sort ${field}: ${JSON.stringify(res.json)}`).toBe(200);
      }
      // Each operator on one field of each kind: 200 when its branch lists it, 422 when not.
      for (const { fields, ops } of branches) {
        const field = fields[0]!;
        const value = sampleValue(outputProperty(entity, field), MISSING);
        for (const op of FILTER_OPERATORS) {
          const leafValue = op === 'isnull' ? true : op === 'in' || op === 'nin' ? [value] : value;
          const res = await search('admin', name, { filters: [{ field, op, value: leafValue }] });
          expect(res.status, `${name}: ${field} ${op} ${JSON.stringify(leafValue)}`).toBe(ops.includes(op) ? 200 : 422);
        }
      }
    }
    // One hop further than the limit: refused, and not listed.
    const task = vocabularyOf(shared, 'Task');
    expect(task.include).not.toContain('project.owner.profile.user');
    expect((await search('admin', 'tasks', { include: ['project.owner.profile.user'] })).status).toBe(422);
    expect(task.filterFields).not.toContain('project.owner.profile.user.id');
    const tooDeep = await search('admin', 'tasks', {
      filters: [{ field: 'project.owner.profile.user.id', op: 'isnull', value: true }],
    });
    expect(tooDeep.status).toBe(422);
    expect(task.sort).not.toContain('comments.body');
    expect((await search('admin', 'tasks', { sort: [{ field: 'comments.body' }] })).status).toBe(422);
  });

  it("leaves out of a caller's document exactly the names that caller is refused", async () => {
    for (const role of ['noproject', 'nobudget'] as const) {
      for (const [name, entity] of Object.entries(ENTITIES)) {
        const all = vocabularyOf(shared, entity);
        const mine = vocabularyOf(own.get(role)!, entity);
        const refused = {
          filter: all.filterFields.filter((f) => !mine.filterFields.includes(f)),
          sort: all.sort.filter((f) => !mine.sort.includes(f)),
          include: all.include.filter((p) => !mine.include.includes(p)),
        };
        for (const part of chunks(mine.filterFields, LEAVES_PER_SEARCH)) {
          const res = await search(role, name, {
            filters: part.map((field) => ({ field, op: 'isnull', value: true })),
          });
          expect(res.status, `${role} ${name}: ${JSON.stringify(res.json)}`).toBe(200);
        }
        for (const part of chunks(mine.include, 8))
          expect(
            (await search(role, name, { include: part, limit: 1 })).status,
            `${role} ${name} ${part.join(',')}`,
          ).toBe(200);
        for (const field of refused.filter) {
          const res = await search(role, name, { filters: [{ field, op: 'isnull', value: true }] });
          expect(res.status, `${role} ${name} filter ${field}`).toBe(403);
        }
        for (const field of refused.sort)
          expect((await search(role, name, { sort: [{ field }] })).status, `${role} ${name} sort ${field}`).toBe(403);
        for (const path of refused.include)
          expect((await search(role, name, { include: [path] })).status, `${role} ${name} include ${path}`).toBe(403);
      }
    }
    // What the restrictions hide: the task → project link for one role, a project's budget for the other.
    const noproject = vocabularyOf(own.get('noproject')!, 'Task');
    expect(noproject.include).not.toContain('project');
    expect(noproject.filterFields).not.toContain('project_id');
    expect(noproject.filterFields).not.toContain('project.name');
    expect(vocabularyOf(own.get('noproject')!, 'Comment').include).not.toContain('task.project');
    const nobudget = vocabularyOf(own.get('nobudget')!, 'Task');
    expect(nobudget.filterFields).toContain('project.name');
    expect(nobudget.filterFields).not.toContain('project.budget');
    expect(nobudget.sort).not.toContain('project.budget');
    expect(vocabularyOf(own.get('nobudget')!, 'Project').filterFields).not.toContain('budget');
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
