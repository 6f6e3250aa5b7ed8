/**
 * A resource with `"version": true` (the generated `versioned` golden project, its `buildApp`), over
 * real sockets on both databases: the version is output only, starts at 1 and grows by one per update;
 * the ETag derives from it; `If-Match` is one compare-and-set, so racing writers never both win and
 * racing increments are never lost.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { dbManager, loadSettings, signToken, type QueryEvent } from '@core/runtime';
import { buildApp } from '../../fixtures/golden/versioned/expected/src/main.js';
import { describePerDatabase } from '../helpers/databases.js';

const SECRET = 'v'.repeat(48);
const STRONG_TAG = /^"[A-Za-z0-9_-]{22}"$/;

interface Doc {
  id: string;
  title: string;
  body: string | null;
  reviewer_note?: string | null;
  version: number;
}

interface Answer {
  status: number;
  etag: string | null;
  body: { data: Doc | null; error?: { code: string; details: { path?: string; reason?: string }[] } };
}

describePerDatabase('version column', ({ url }) => {
  let app: FastifyInstance;
  let base = '';

  beforeAll(async () => {
    const settings = loadSettings({
      env: { DATABASE_URL: url(), ENVIRONMENT: 'test', SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
    });
    vi.stubEnv('SECRET_KEY', SECRET);
    try {
      app = await buildApp({ settings });
    } finally {
      vi.unstubAllEnvs();
    }
    await dbManager.db.resetSchema();
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/documents`;
  });

  afterAll(async () => {
    await app?.close();
    await dbManager.close();
  });

  beforeEach(async () => {
    await dbManager.db.orm.em.fork().getConnection().execute('delete from documents');
  });

  async function call(
    method: string,
    path: string,
    options: { body?: unknown; ifMatch?: string; role?: 'admin' | 'editor' } = {},
  ): Promise<Answer> {
    const role = options.role ?? 'admin';
    const headers: Record<string, string> = {
      authorization: `Bearer ${signToken({ sub: role, roles: [role] }, SECRET)}`,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
    const res = await fetch(base + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    return { status: res.status, etag: res.headers.get('etag'), body: (await res.json()) as Answer['body'] };
  }

  async function create(title: string, extra: object = {}): Promise<Doc> {
    const res = await call('POST', '/', { body: { title, ...extra } });
    expect(res.status).toBe(201);
    return res.body.data!;
  }

  async function read(id: string, role: 'admin' | 'editor' = 'admin'): Promise<{ doc: Doc; etag: string }> {
    const res = await call('GET', `/${id}`, { role });
    expect(res.status).toBe(200);
    expect(res.etag).toMatch(STRONG_TAG);
    return { doc: res.body.data!, etag: res.etag! };
  }

  it('starts at 1, grows by one per PUT or PATCH, and is never taken from a body; the ETag follows it', async () => {
    const doc = await create('first', { version: 42 });
    expect(doc.version).toBe(1);
    const v1 = await read(doc.id);
    expect((await read(doc.id)).etag).toBe(v1.etag);

    const patched = await call('PATCH', `/${doc.id}`, { body: { body: 'text', version: 7 } });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ body: 'text', version: 2 });
    const v2 = await read(doc.id);
    expect(v2.etag).not.toBe(v1.etag);
    expect(patched.etag).toBe(v2.etag);

    // A replace resets absent fields to their defaults, but the version keeps counting.
    const replaced = await call('PUT', `/${doc.id}`, { body: { title: 'replaced' } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).toMatchObject({ title: 'replaced', body: null, version: 3 });
    expect(replaced.etag).toBe((await read(doc.id)).etag);

    // Even a write that changes no value is an update: a new version, a new tag.
    const same = await call('PATCH', `/${doc.id}`, { body: { title: 'replaced' } });
    expect(same.body.data!.version).toBe(4);
    expect(same.etag).not.toBe(replaced.etag);
  });

  it('a stale If-Match answers 412 and changes nothing, the version included; the current one writes', async () => {
    const doc = await create('guarded');
    const { etag: stale } = await read(doc.id);
    expect((await call('PATCH', `/${doc.id}`, { body: { title: 'moved on' } })).status).toBe(200);
    const before = await read(doc.id);

    for (const method of ['PUT', 'PATCH'] as const) {
      const res = await call(method, `/${doc.id}`, { body: { title: 'lost update' }, ifMatch: stale });
      expect(res.status).toBe(412);
      expect(res.body.error).toMatchObject({
        code: 'PRECONDITION_FAILED',
        details: [{ path: 'headers.if-match', reason: 'stale' }],
      });
    }
    const refused = await call('DELETE', `/${doc.id}`, { ifMatch: stale });
    expect(refused.status).toBe(412);
    expect(await read(doc.id)).toEqual(before);

    const ok = await call('PATCH', `/${doc.id}`, { body: { title: 'in time' }, ifMatch: before.etag });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ title: 'in time', version: before.doc.version + 1 });
    expect((await call('DELETE', `/${doc.id}`, { ifMatch: ok.etag! })).status).toBe(200);
    expect((await call('GET', `/${doc.id}`)).status).toBe(404);
    expect((await call('PATCH', `/${doc.id}`, { body: { title: 'gone' }, ifMatch: ok.etag! })).status).toBe(404);
  });

  it('the check and the write are one compare-and-set statement on the version', async () => {
    const doc = await create('one statement');
    const { etag } = await read(doc.id);
    const sent: QueryEvent[] = [];
    const off = dbManager.db.onQuery((q) => sent.push(q));
    try {
      expect((await call('PATCH', `/${doc.id}`, { body: { title: 'cas' }, ifMatch: etag })).status).toBe(200);
    } finally {
      off();
    }
    const cas = sent.filter((q) =>
      /^update .*documents.* set .*version.* = .*version.* \+ 1 where .*id.* = \? and .*version.* = \?/i.test(q.sql),
    );
    expect(cas).toHaveLength(1);
    expect(cas[0]!.params).toEqual([doc.id, 1]);
  });

  it('racing writers with the same If-Match: exactly one wins, the version grows by one', async () => {
    for (let round = 0; round < 5; round++) {
      const doc = await create(`race ${round}`);
      const { etag } = await read(doc.id);
      const answers = await Promise.all(
        ['a', 'b', 'c', 'd'].map((title) => call('PATCH', `/${doc.id}`, { body: { title }, ifMatch: etag })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412, 412]);
      const winner = answers.find((a) => a.status === 200)!;
      const now = await read(doc.id);
      expect(now.doc).toMatchObject({ title: winner.body.data!.title, version: 2 });
      expect(now.etag).toBe(winner.etag);
    }
  });

  it('racing writers without If-Match all land, and no increment is lost', async () => {
    const doc = await create('counter');
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call('PATCH', `/${doc.id}`, { body: { body: `write ${i}` } })),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.body.data!.version))).toEqual(new Set([2, 3, 4, 5, 6, 7, 8, 9]));
    expect((await read(doc.id)).doc.version).toBe(9);
  });

  it("one tag for every caller; a change to a field the caller cannot see still makes the caller's tag stale", async () => {
    const doc = await create('reviewed', { reviewer_note: 'fine' });
    const admin = await read(doc.id);
    const editor = await read(doc.id, 'editor');
    expect(editor.doc).not.toHaveProperty('reviewer_note');
    expect(editor.etag).toBe(admin.etag);
    expect((await call('PATCH', `/${doc.id}`, { body: { reviewer_note: 'not fine' } })).status).toBe(200);
    const res = await call('PATCH', `/${doc.id}`, { body: { title: 'edited' }, ifMatch: editor.etag, role: 'editor' });
    expect(res.status).toBe(412);
  });
});
