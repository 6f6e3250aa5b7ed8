/**
 * `/docs` (the Swagger UI, loaded on its first request by `swaggerUiOnDemand`): the page, its static
 * files, the OpenAPI document as JSON and YAML, conditional requests, HEAD, and the app's own 404
 * envelope for a file that does not exist.
 */
import { expect, it } from 'vitest';
import { describeFixtureApp } from './helpers.js';

describeFixtureApp('the docs UI', (ctx) => {
  it('serves the page at /docs and /docs/, unauthenticated', async () => {
    for (const url of ['/docs', '/docs/']) {
      const res = await ctx.request('anonymous', { method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('swagger-ui');
      expect(res.body).toContain('static/swagger-initializer.js');
    }
  });

  it("serves the UI's static files with their type and caching headers, and answers a revalidation with 304", async () => {
    const css = await ctx.request('anonymous', { method: 'GET', url: '/docs/static/swagger-ui.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body.length).toBeGreaterThan(10_000);
    expect(Number(css.headers['content-length'])).toBe(css.rawPayload.length);
    expect(css.headers['etag']).toBeTruthy();

    const again = await ctx.request('anonymous', {
      method: 'GET',
      url: '/docs/static/swagger-ui.css',
      headers: { 'if-none-match': String(css.headers['etag']) },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');

    const init = await ctx.request('anonymous', { method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    expect(init.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(init.body).toContain("resolveUrl('./json')"); // the document, relative to the page
  });

  it('serves the OpenAPI document of the app as JSON and YAML, with the app routes and without hidden ones', async () => {
    const json = await ctx.request('anonymous', { method: 'GET', url: '/docs/json' });
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    const document = json.json<{ openapi: string; paths: Record<string, unknown> }>();
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/tasks', '/tasks/{id}', '/tasks/search']));
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/docs') || path === '/health')).toEqual([]);

    const yaml = await ctx.request('anonymous', { method: 'GET', url: '/docs/yaml' });
    expect(yaml.statusCode).toBe(200);
    expect(yaml.headers['content-type']).toBe('application/x-yaml');
    expect(yaml.body).toContain(`openapi: ${document.openapi}`);
    expect(yaml.body).toContain('/tasks/search:');
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await ctx.request('anonymous', { method: 'HEAD', url: '/docs/static/swagger-ui.css' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(res.body).toBe('');
  });

  it("gives the app's 404 envelope for a docs file that does not exist", async () => {
    for (const url of ['/docs/static/no-such-file.js', '/docs/no-such-page']) {
      const res = await ctx.request('anonymous', { method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toEqual({
        success: false,
        message: 'No route matches this URL.',
        data: null,
        error: {
          code: 'NOT_FOUND',
          details: [{ path: 'url', message: 'No route matches this URL.', reason: 'unknown_route' }],
        },
      });
    }
  });
});
