/**
 * The document a caller is served: only the operations it may call, without the fields it may not
 * see, never shared by caches; and the documents and UI switched off by `DOCS_ENABLED=false` (the
 * default with `ENVIRONMENT=production`).
 */
import { expect, it } from 'vitest';
import { describeFixtureApp, type Role } from './helpers.js';

type Json = Record<string, unknown>;

const operationIds = (document: Json): string[] =>
  Object.values(document['paths'] as Record<string, Record<string, Json>>)
    .flatMap((item) => Object.values(item).map((operation) => String(operation['operationId'])))
    .sort();

describeFixtureApp("the caller's OpenAPI document", (ctx) => {
  const documentOf = async (role: Role): Promise<Json> => {
    const res = await ctx.request(role, { method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    return res.json<Json>();
  };

  it('lists only the operations the caller may call', async () => {
    expect(operationIds(await documentOf('admin'))).toEqual([
      'createTask',
      'deleteTask',
      'getTask',
      'listTasks',
      'replaceTask',
      'searchTasks',
      'updateTask',
    ]);
    // The viewer holds tasks:view and tasks:listview only.
    expect(operationIds(await documentOf('viewer'))).toEqual(['getTask', 'listTasks', 'searchTasks']);
    // Without a credential: the shared document, every operation.
    expect(operationIds(await documentOf('anonymous'))).toHaveLength(7);
  });

  it('answers with Vary: Authorization, Cookie and Cache-Control: private, in both spellings', async () => {
    for (const url of ['/docs/json', '/docs/yaml']) {
      for (const role of ['admin', 'anonymous'] as const) {
        const res = await ctx.request(role, { method: 'GET', url });
        expect(res.statusCode, `${role} ${url}`).toBe(200);
        expect(String(res.headers['vary']).toLowerCase()).toContain('authorization');
        expect(String(res.headers['vary']).toLowerCase()).toContain('cookie');
        expect(res.headers['cache-control']).toBe('private');
      }
    }
    const yaml = (await ctx.request('viewer', { method: 'GET', url: '/docs/yaml' })).body;
    expect(yaml).toContain('operationId: getTask');
    expect(yaml).not.toContain('operationId: createTask');
  });
});

describeFixtureApp(
  'DOCS_ENABLED=false',
  (ctx) => {
    it('serves neither the documents nor the UI, while app.swagger() still describes the app', async () => {
      for (const url of ['/docs/json', '/docs/yaml', '/docs', '/docs/static/index.html']) {
        const res = await ctx.request('admin', { method: 'GET', url });
        expect(res.statusCode, url).toBe(404);
        expect(res.json<Json>()['success']).toBe(false);
      }
      expect(operationIds(ctx.app.swagger() as unknown as Json)).toHaveLength(7);
    });
  },
  { env: { DOCS_ENABLED: 'false' } },
);

describeFixtureApp(
  'ENVIRONMENT=production',
  (ctx) => {
    it('keeps the documents off unless DOCS_ENABLED turns them on', async () => {
      expect(ctx.settings.docsEnabled).toBe(false);
      expect((await ctx.request('admin', { method: 'GET', url: '/docs/json' })).statusCode).toBe(404);
    });
  },
  { env: { ENVIRONMENT: 'production' } },
);
