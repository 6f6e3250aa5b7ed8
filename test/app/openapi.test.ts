/**
 * The OpenAPI document of the task app (`/docs/json`) as API clients and gateways use it: 3.1 with
 * named components, operationIds and security; `redocly lint` without errors; and every response of
 * every route, for every role and error path the app has, declared by the document: the status, the
 * headers and the body's schema. Responses are checked against the shared document and against the
 * caller's own document (which leaves out what the caller cannot see, so a leak would fail).
 */
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { CoreAPIRoute, CoreJSONResponse, FILTER_OPERATORS } from '@core/runtime';
import { OpenApiConformance, redoclyLint } from '../helpers/openapi.js';
import { describeFixtureApp, type Role } from './helpers.js';

type Json = Record<string, unknown>;
type Caller = Role | 'bad-token';

const MISSING = '00000000-0000-4000-8000-000000000000';

describeFixtureApp('the OpenAPI document', (ctx) => {
  let shared: OpenApiConformance;
  const own = new Map<Caller, OpenApiConformance>();

  const headersOf = (caller: Caller): Record<string, string> =>
    caller === 'bad-token' ? { authorization: 'Bearer not.a.token' } : ctx.auth(caller);

  const fetchDocument = async (caller: Caller): Promise<Json> => {
    const res = await ctx.app.inject({ method: 'GET', url: '/docs/json', headers: headersOf(caller) });
    expect(res.statusCode).toBe(200);
    return res.json<Json>();
  };

  beforeAll(async () => {
    shared = new OpenApiConformance(await fetchDocument('anonymous'));
    for (const caller of ['admin', 'viewer', 'editor', 'anonymous', 'bad-token'] as const)
      own.set(
        caller,
        new OpenApiConformance(await fetchDocument(caller), {
          callerDocument: caller !== 'anonymous' && caller !== 'bad-token',
        }),
      );
  });

  /** Sends a request as `caller` and checks the response against both documents. */
  const send = async (caller: Caller, options: InjectOptions): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = {
      ...headersOf(caller),
      ...(options.headers as Record<string, string> | undefined),
    };
    if (typeof options.payload === 'object' && !headers['content-type']) headers['content-type'] = 'application/json';
    const res = await ctx.app.inject({ ...options, headers });
    const observed = {
      method: String(options.method),
      url: String(options.url),
      status: res.statusCode,
      headers: res.headers as Record<string, string>,
      body: res.body,
      ...(options.payload === undefined
        ? {}
        : { requestBody: typeof options.payload === 'string' ? options.payload : JSON.stringify(options.payload) }),
    };
    shared.check(observed);
    own.get(caller)!.check(observed);
    return res;
  };

  it('is OpenAPI 3.1.0 with the operationIds, components and security schemes of the resource', () => {
    const document = shared.document;
    expect(document['openapi']).toBe('3.1.0');
    const paths = document['paths'] as Record<string, Record<string, Json>>;
    expect(Object.keys(paths)).toEqual(['/tasks', '/tasks/{id}', '/tasks/search']);
    const ids = Object.values(paths).flatMap((item) => Object.values(item).map((op) => op['operationId']));
    expect(ids.sort()).toEqual([
      'createTask',
      'deleteTask',
      'getTask',
      'listTasks',
      'replaceTask',
      'searchTasks',
      'updateTask',
    ]);
    const components = document['components'] as Record<string, Json>;
    expect(Object.keys(components['schemas']!)).toEqual(
      expect.arrayContaining([
        'TaskCreate',
        'TaskUpdate',
        'TaskPatch',
        'TaskOut',
        'TaskSearchRequest',
        'PageMeta',
        'ErrorEnvelope',
      ]),
    );
    expect(Object.keys(components['securitySchemes']!).sort()).toEqual(['bearerAuth', 'cookieAuth']);
    // Every operation of the task app is guarded: a credential is required.
    for (const op of Object.values(paths).flatMap((item) => Object.values(item))) {
      expect(op['security'], String(op['operationId'])).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }]);
      expect(Object.keys(op['responses'] as Json), String(op['operationId'])).toEqual(
        expect.arrayContaining(['400', '401', '403', '500', '503']),
      );
    }
    const out = (components['schemas'] as Record<string, Json>)['TaskOut']!;
    // The viewer may not see assignee_email: optional in the shared document, absent from the viewer's.
    expect(out['required']).not.toContain('assignee_email');
    expect(Object.keys(out['properties'] as Json)).toContain('assignee_email');
    const viewerOut = (
      (own.get('viewer')!.document['components'] as Record<string, Json>)['schemas'] as Record<string, Json>
    )['TaskOut']!;
    expect(Object.keys(viewerOut['properties'] as Json)).not.toContain('assignee_email');
    expect(
      Object.keys(
        (((own.get('admin')!.document['components'] as Json)['schemas'] as Json)['TaskOut'] as Json)[
          'properties'
        ] as Json,
      ),
    ).toContain('assignee_email');
  });

  it("names the task resource's filter fields with their operators, its sort fields, and nothing to include", () => {
    const schemasOf = (document: Json): Record<string, Json> =>
      (document['components'] as Json)['schemas'] as Record<string, Json>;
    const conditionOf = (document: Json) =>
      (schemasOf(document)['TaskFilterCondition']!['anyOf'] as Json[]).map((branch) => {
        const properties = branch['properties'] as Record<string, Json>;
        return { field: properties['field']!['enum'], op: properties['op']!['enum'] };
      });
    const ordered = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'isnull'];
    expect(conditionOf(shared.document)).toEqual([
      { field: ['title', 'description', 'priority', 'assignee_email'], op: [...FILTER_OPERATORS] },
      { field: ['id'], op: ordered },
      { field: ['is_completed'], op: ['eq', 'ne', 'in', 'nin', 'isnull'] },
    ]);
    const sortOf = (document: Json): unknown =>
      ((schemasOf(document)['TaskSortRule']!['properties'] as Record<string, Json>)['field'] as Json)['enum'];
    expect(sortOf(shared.document)).toEqual([
      'id',
      'title',
      'description',
      'priority',
      'is_completed',
      'assignee_email',
    ]);
    // The viewer may not see assignee_email: its document neither filters nor sorts on it.
    const viewer = own.get('viewer')!.document;
    expect(conditionOf(viewer)[0]!.field).toEqual(['title', 'description', 'priority']);
    expect(sortOf(viewer)).not.toContain('assignee_email');
    // A task has no relations: the search takes no include, get and list have no include parameter.
    const search = schemasOf(shared.document)['TaskSearchRequest']!['properties'] as Record<string, Json>;
    expect(search['include']).toMatchObject({ type: 'array', maxItems: 0 });
    expect(search['limit']).toMatchObject({ type: 'integer', minimum: 1, maximum: 500 });
    expect(search['sort']).toMatchObject({ maxItems: 5, items: { $ref: '#/components/schemas/TaskSortRule' } });
    const paths = shared.document['paths'] as Record<string, Record<string, Json>>;
    const names = (operation: Json): unknown[] => ((operation['parameters'] as Json[]) ?? []).map((p) => p['name']);
    expect(names(paths['/tasks/{id}']!['get']!)).not.toContain('include');
    expect(names(paths['/tasks']!['get']!)).toEqual(['limit', 'offset', 'cursor']);
  });

  it('states the bounds of limit and offset, and the format and an example of the id', () => {
    const paths = shared.document['paths'] as Record<string, Record<string, Json>>;
    const parameter = (path: string, method: string, name: string): Json =>
      (paths[path]![method]!['parameters'] as Json[]).find((p) => p['name'] === name)!;
    expect(parameter('/tasks', 'get', 'limit')['schema']).toEqual({ type: 'integer', minimum: 1, maximum: 500 });
    expect(parameter('/tasks', 'get', 'offset')['schema']).toEqual({ type: 'integer', minimum: 0 });
    for (const method of ['get', 'put', 'patch', 'delete']) {
      const id = parameter('/tasks/{id}', method, 'id');
      expect(id['schema'], method).toMatchObject({ type: 'string', format: 'uuid' });
      expect(String(id['example'])).toMatch(new RegExp(String((id['schema'] as Json)['pattern'])));
    }
  });

  it('counts as a violation a request the server accepted that the document refuses', () => {
    // What the suites check with every accepted request, shown on requests the document refuses.
    const conformance = new OpenApiConformance(shared.document);
    const ok = { status: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
    conformance.check({ ...ok, method: 'GET', url: '/tasks?limit=501' });
    conformance.check({
      ...ok,
      method: 'POST',
      url: '/tasks/search',
      requestBody: JSON.stringify({ filters: [{ field: 'is_completed', op: 'startswith', value: 'x' }] }),
    });
    conformance.check({ ...ok, method: 'POST', url: '/tasks/search', requestBody: '{"sort":[{"field":"nope"}]}' });
    const problems = conformance.violations.map((v) => `${v.request}: ${v.problem.split(':')[0]}`);
    expect(problems).toEqual(
      expect.arrayContaining([
        'GET /tasks?limit=501: accepted query parameter limit=501',
        'POST /tasks/search: accepted request body',
      ]),
    );
    expect(conformance.violations.filter((v) => v.problem.startsWith('accepted'))).toHaveLength(3);
  });

  it('passes redocly lint (recommended rules) without errors, shared and per caller', async () => {
    // The document does not depend on the database: linted once, with the SQLite suite.
    if (ctx.dbName !== 'sqlite') return;
    const lint = await redoclyLint([shared.document, own.get('viewer')!.document]);
    expect(lint.errors).toBe(0);
    // The one warning left is documented in docs/openapi.md (the license is the project's choice).
    expect(lint.problems).toEqual([
      'info-license: Info object should contain `license` field.',
      'info-license: Info object should contain `license` field.',
    ]);
  });

  it('serves the YAML spelling, also per caller', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/docs/yaml', headers: ctx.auth('viewer') });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-yaml');
    expect(res.body).toContain('openapi: 3.1.0');
    expect(res.body).toContain('operationId: searchTasks');
    expect(res.body).not.toContain('assignee_email');
  });

  it.each(['admin', 'editor', 'viewer', 'anonymous', 'bad-token'] as const)(
    'declares every response of every route to %s',
    async (caller) => {
      const task = await ctx.createTask({ title: 'first', assignee_email: 'a@example.com' });
      await ctx.createTask({ title: 'second' });
      await ctx.createTask({ title: 'third' });
      const id = task.id;

      for (const url of ['/tasks/', '/tasks']) {
        await send(caller, { method: 'POST', url, payload: { title: 'new', assignee_email: 'b@example.com' } });
        await send(caller, { method: 'GET', url });
      }
      await send(caller, { method: 'GET', url: `/tasks/${id}` });
      await send(caller, { method: 'GET', url: `/tasks/${MISSING}` });
      await send(caller, { method: 'GET', url: `/tasks/${id}?include=nothing` });
      const current = await send(caller, { method: 'GET', url: `/tasks/${id}` });
      const etag = current.headers['etag'] === undefined ? '"none"' : String(current.headers['etag']);
      await send(caller, {
        method: 'PUT',
        url: `/tasks/${id}`,
        payload: { title: 'replaced' },
        headers: { 'if-match': '"stale"' },
      });
      await send(caller, {
        method: 'PATCH',
        url: `/tasks/${id}`,
        payload: { is_completed: true },
        headers: { 'if-match': etag },
      });
      await send(caller, {
        method: 'PUT',
        url: `/tasks/${id}`,
        payload: { title: 'replaced', assignee_email: 'c@example.com' },
      });
      await send(caller, { method: 'PATCH', url: `/tasks/${MISSING}`, payload: { title: 'x' } });
      await send(caller, { method: 'GET', url: '/tasks/?limit=2' });
      const page = await send(caller, { method: 'GET', url: '/tasks?limit=2&include=' });
      const cursor =
        page.statusCode === 200 ? (page.json<{ meta: { next_cursor: string | null } }>().meta.next_cursor ?? '') : 'x';
      await send(caller, { method: 'GET', url: `/tasks?cursor=${encodeURIComponent(cursor)}` });
      await send(caller, { method: 'GET', url: '/tasks?cursor=tampered' });
      await send(caller, { method: 'GET', url: '/tasks?limit=0' });
      await send(caller, {
        method: 'POST',
        url: '/tasks/search',
        payload: { filters: [{ field: 'title', op: 'startswith', value: 'f' }], sort: [{ field: 'title' }] },
      });
      await send(caller, {
        method: 'POST',
        url: '/tasks/search',
        payload: { filters: [{ field: 'assignee_email', op: 'isnull', value: false }], limit: 1 },
      });
      await send(caller, {
        method: 'POST',
        url: '/tasks/search',
        payload: { filters: [{ field: 'nope', op: 'eq', value: 1 }] },
      });
      await send(caller, { method: 'POST', url: '/tasks/search' });
      await send(caller, { method: 'DELETE', url: `/tasks/${id}`, headers: { 'if-match': '"stale"' } });
      await send(caller, { method: 'DELETE', url: `/tasks/${id}` });
      await send(caller, { method: 'DELETE', url: `/tasks/${MISSING}` });

      expect(shared.report()).toBe('');
      expect(own.get(caller)!.report()).toBe('');
    },
  );

  it('declares the errors of the URL and of request bodies', async () => {
    const { id } = await ctx.createTask({ title: 'one' });
    for (const caller of ['admin', 'anonymous'] as const) {
      await send(caller, { method: 'GET', url: '/tasks/not-a-uuid' });
      await send(caller, { method: 'GET', url: `/tasks/${'x'.repeat(101)}` });
      await send(caller, { method: 'GET', url: '/tasks/%E0%A4%A' });
      await send(caller, {
        method: 'POST',
        url: '/tasks/',
        payload: '{"title":',
        headers: { 'content-type': 'application/json' },
      });
      await send(caller, {
        method: 'POST',
        url: '/tasks/',
        payload: 'title=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      await send(caller, { method: 'POST', url: '/tasks/', payload: { title: 'x'.repeat(1_100_000) } });
      await send(caller, { method: 'POST', url: '/tasks/', payload: { title: 'x'.repeat(300) } });
      await send(caller, { method: 'POST', url: '/tasks/', payload: {} });
      await send(caller, { method: 'PUT', url: `/tasks/${id}`, payload: { description: 5 } });
      await send(caller, {
        method: 'PATCH',
        url: `/tasks/${id}`,
        payload: '[1',
        headers: { 'content-type': 'application/json' },
      });
      await send(caller, {
        method: 'POST',
        url: '/tasks/search',
        payload: {
          filters: [{ op: 'and', items: [{ op: 'or', items: [{ op: 'and', items: [{ op: 'or', items: [] }] }] }] }],
        },
      });
      await send(caller, {
        method: 'POST',
        url: '/tasks/search',
        payload: 'nope',
        headers: { 'content-type': 'text/plain' },
      });
    }
    expect(shared.report()).toBe('');
    expect(own.get('admin')!.report()).toBe('');
  });

  // Runs last: the tests above are the ones that produce these answers.
  it('reached every answer the suite means to check (so a change that stops producing one cannot weaken it)', () => {
    const expected = [
      'createTask 201',
      'createTask 400',
      'createTask 401',
      'createTask 403',
      'createTask 413',
      'createTask 415',
      'createTask 422',
      'getTask 200',
      'getTask 401',
      'getTask 404',
      'getTask 414',
      'getTask 422',
      'getTask 400',
      'replaceTask 200',
      'replaceTask 412',
      'replaceTask 403',
      'replaceTask 422',
      'updateTask 200',
      'updateTask 404',
      'updateTask 400',
      'deleteTask 200',
      'deleteTask 412',
      'deleteTask 404',
      'listTasks 200',
      'listTasks 422',
      'listTasks 401',
      'searchTasks 200',
      'searchTasks 403',
      'searchTasks 415',
      'searchTasks 422',
    ];
    expect([...shared.covered].filter((c) => expected.includes(c)).sort()).toEqual([...expected].sort());
  });
});

describeFixtureApp(
  'the OpenAPI document of routes an app adds itself',
  (ctx) => {
    it("documents a plain route as Core leaves it (unguarded) and a CoreAPIRoute with its guard and Core's errors", async () => {
      const document = (await ctx.app.inject({ method: 'GET', url: '/docs/json' })).json<Json>();
      const paths = document['paths'] as Record<string, Record<string, Json>>;
      expect(paths['/ping']!['get']).toMatchObject({ operationId: 'ping', security: [] });
      const stats = paths['/tasks-stats']!['get']!;
      expect(stats).toMatchObject({ operationId: 'taskStats', security: [{ bearerAuth: [] }, { cookieAuth: [] }] });
      expect(Object.keys(stats['responses'] as Json).sort()).toEqual(['200', '400', '401', '403', '500', '503']);

      const conformance = new OpenApiConformance(document);
      for (const role of ['admin', 'anonymous'] as const) {
        for (const url of ['/ping', '/tasks-stats']) {
          const res = await ctx.request(role, { method: 'GET', url });
          conformance.check({
            method: 'GET',
            url,
            status: res.statusCode,
            headers: res.headers as Record<string, string>,
            body: res.body,
          });
        }
      }
      expect(conformance.report()).toBe('');
      expect([...conformance.covered].sort()).toEqual(['ping 200', 'taskStats 200', 'taskStats 401']);
    });
  },
  {
    configure: (app) => {
      const count = {
        type: 'object',
        properties: { count: { type: 'integer' } },
        required: ['count'],
        additionalProperties: false,
      } as const;
      app.get(
        '/ping',
        { schema: { tags: ['tasks'], summary: 'Liveness', operationId: 'ping', response: { 200: count } } },
        async () => ({ count: 1 }),
      );
      const envelope = {
        type: 'object',
        properties: { success: { type: 'boolean' }, message: { type: 'string' }, data: count, meta: { type: 'null' } },
      } as const;
      app.route(
        CoreAPIRoute({
          method: 'GET',
          url: '/tasks-stats',
          action: 'tasks:view',
          schema: {
            tags: ['tasks'],
            summary: 'Count the tasks',
            operationId: 'taskStats',
            response: { 200: envelope },
          },
          handler: async () => new CoreJSONResponse({ count: 0 }),
        }),
      );
    },
  },
);
