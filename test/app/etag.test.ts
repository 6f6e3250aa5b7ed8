/**
 * Optimistic concurrency on the task app (no version column: the ETag derives from the stored row):
 * `ETag` on GET by id, `If-Match` on PUT, PATCH and DELETE (412 when stale, nothing written), the new
 * ETag on PUT and PATCH responses, and two clients racing with the same ETag over real sockets.
 */
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { describeFixtureApp, type TaskJson } from './helpers.js';

const STRONG_TAG = /^"[A-Za-z0-9_-]{22}"$/;

describeFixtureApp('ETag and If-Match', (ctx) => {
  async function etagOf(id: string, role: 'admin' | 'editor' = 'admin'): Promise<string> {
    const res = await ctx.request(role, { method: 'GET', url: `/tasks/${id}` });
    expect(res.statusCode).toBe(200);
    const tag = res.headers['etag'];
    expect(tag).toMatch(STRONG_TAG);
    return tag as string;
  }

  function write(method: 'PUT' | 'PATCH' | 'DELETE', id: string, ifMatch: string | undefined, payload?: object) {
    return ctx.request('admin', {
      method,
      url: `/tasks/${id}`,
      ...(payload ? { payload } : {}),
      headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
    });
  }

  it('GET by id sends a strong ETag: the same for identical reads, for every caller, and new after a change', async () => {
    const task = await ctx.createTask({ title: 'read me', assignee_email: 'a@example.com' });
    const first = await etagOf(task.id);
    expect(await etagOf(task.id)).toBe(first);
    // One record state, one tag: the editor's view lacks assignee_email, its tag is the same.
    expect(await etagOf(task.id, 'editor')).toBe(first);
    // An include changes the body, not the record.
    const included = await ctx.request('admin', { method: 'GET', url: `/tasks/${task.id}?include=` });
    expect(included.headers['etag']).toBe(first);

    const other = await ctx.createTask({ title: 'read me', assignee_email: 'a@example.com' });
    expect(await etagOf(other.id)).not.toBe(first);

    const patched = await write('PATCH', task.id, undefined, { priority: 'high' });
    expect(patched.statusCode).toBe(200);
    const after = await etagOf(task.id);
    expect(after).not.toBe(first);
    expect(patched.headers['etag']).toBe(after);
  });

  it('GET by id reads the tag with the row: one statement, the same tag as a write gives', async () => {
    const task = await ctx.createTask({ title: 'one read', assignee_email: 'b@example.com' });
    for (const role of ['admin', 'editor'] as const) {
      const { result, sql } = await ctx.countSql(() => ctx.request(role, { method: 'GET', url: `/tasks/${task.id}` }));
      expect(result.statusCode).toBe(200);
      expect(sql.map((q) => q.sql)).toHaveLength(1);
      // The stored columns read for the tag stay out of the body, a hidden one included.
      expect(Object.keys(result.json().data).some((key) => key.startsWith('$'))).toBe(false);
      if (role === 'editor') expect(result.json().data).not.toHaveProperty('assignee_email');
      // A column the body shows is read once: only the editor's hidden one is added for the tag.
      expect(sql[0]!.sql.match(/\$tag\d+/g) ?? []).toHaveLength(role === 'editor' ? 1 : 0);
    }
    const patched = await write('PATCH', task.id, undefined, { title: 'one read, changed' });
    expect(await etagOf(task.id)).toBe(patched.headers['etag']);
    // A missing record is one statement too, and no tag.
    const missing = await ctx.countSql(() =>
      ctx.request('admin', { method: 'GET', url: '/tasks/00000000-0000-4000-8000-000000000000' }),
    );
    expect(missing.result.statusCode).toBe(404);
    expect(missing.sql).toHaveLength(1);
  });

  it('no ETag and a 404 for a missing record; list and search send none', async () => {
    const missing = await ctx.request('admin', { method: 'GET', url: '/tasks/00000000-0000-4000-8000-000000000000' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['etag']).toBeUndefined();
    await ctx.createTask({ title: 'listed' });
    const list = await ctx.request('admin', { method: 'GET', url: '/tasks/' });
    expect(list.statusCode).toBe(200);
    expect(list.headers['etag']).toBeUndefined();
  });

  it.each(['PUT', 'PATCH'] as const)('%s with a stale If-Match answers 412 and writes nothing', async (method) => {
    const task = await ctx.createTask({ title: 'original', priority: 'low' });
    const stale = await etagOf(task.id);
    expect((await write('PATCH', task.id, undefined, { is_completed: true })).statusCode).toBe(200);
    const before = await ctx.readTask(task.id);

    const res = await write(method, task.id, stale, { title: 'overwritten', priority: 'high' });
    expect(res.statusCode).toBe(412);
    expect(res.headers['etag']).toBeUndefined();
    expect(res.json()).toMatchObject({
      success: false,
      data: null,
      error: { code: 'PRECONDITION_FAILED', details: [{ path: 'headers.if-match', reason: 'stale' }] },
    });
    expect(await ctx.readTask(task.id)).toEqual(before);
  });

  it.each(['PUT', 'PATCH'] as const)('%s with the current If-Match writes and answers the new ETag', async (method) => {
    const task = await ctx.createTask({ title: 'original' });
    const current = await etagOf(task.id);
    const res = await write(method, task.id, current, { title: 'changed' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.title).toBe('changed');
    const tag = res.headers['etag'];
    expect(tag).toMatch(STRONG_TAG);
    expect(tag).not.toBe(current);
    expect(await etagOf(task.id)).toBe(tag);
    // The new tag is good for the next write; the old one is not.
    expect((await write(method, task.id, current, { title: 'again' })).statusCode).toBe(412);
    expect((await write(method, task.id, tag as string, { title: 'again' })).statusCode).toBe(200);
  });

  it('DELETE with a stale If-Match answers 412 and keeps the record; with the current one it deletes', async () => {
    const task = await ctx.createTask({ title: 'keep me' });
    const stale = await etagOf(task.id);
    await write('PATCH', task.id, undefined, { title: 'changed' });
    const refused = await write('DELETE', task.id, stale);
    expect(refused.statusCode).toBe(412);
    expect(refused.json().error.code).toBe('PRECONDITION_FAILED');
    expect(await ctx.readTask(task.id)).toMatchObject({ title: 'changed' });

    const deleted = await write('DELETE', task.id, await etagOf(task.id));
    expect(deleted.statusCode).toBe(200);
    expect(await ctx.readTask(task.id)).toBeNull();
  });

  it('If-Match forms: *, a list, a weak tag, a malformed header, a missing record', async () => {
    const task = await ctx.createTask({ title: 'forms' });
    const current = await etagOf(task.id);
    const other = await etagOf((await ctx.createTask({ title: 'other' })).id);

    expect((await write('PATCH', task.id, '*', { priority: 'a' })).statusCode).toBe(200);
    const now = await etagOf(task.id);
    // A list matches when any of its tags does; strong comparison, so a weak tag never matches.
    expect((await write('PATCH', task.id, `${other}, ${now}`, { priority: 'b' })).statusCode).toBe(200);
    const latest = await etagOf(task.id);
    expect((await write('PATCH', task.id, `W/${latest}`, { priority: 'c' })).statusCode).toBe(412);
    expect((await write('PATCH', task.id, current, { priority: 'c' })).statusCode).toBe(412);

    for (const malformed of ['abc', latest.slice(1, -1), `${latest} junk`, '', '*, *', `*, ${latest}`]) {
      const res = await write('PATCH', task.id, malformed, { priority: 'c' });
      expect(res.statusCode, malformed).toBe(412);
      expect(res.json().error.details[0]).toMatchObject({ path: 'headers.if-match', reason: 'malformed' });
    }
    expect(await ctx.readTask(task.id)).toMatchObject({ priority: 'b' });

    // Without If-Match, writes behave as they always did.
    expect((await write('PATCH', task.id, undefined, { priority: 'd' })).statusCode).toBe(200);

    const missing = '00000000-0000-4000-8000-000000000000';
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const res = await write(method, missing, latest, method === 'DELETE' ? undefined : { title: 'x' });
      expect(res.statusCode, method).toBe(404);
      expect((await write(method, missing, '*', method === 'DELETE' ? undefined : { title: 'x' })).statusCode).toBe(
        404,
      );
    }
  });

  it('two clients racing with the same If-Match over real sockets: exactly one wins, the other gets 412', async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    const headers = { ...ctx.auth('admin'), 'content-type': 'application/json' };
    for (let round = 0; round < 5; round++) {
      const task = await ctx.createTask({ title: `race ${round}` });
      const tag = await etagOf(task.id);
      const answers = await Promise.all(
        ['first', 'second', 'third'].map(async (title) => {
          const res = await fetch(`http://127.0.0.1:${port}/tasks/${task.id}`, {
            method: 'PATCH',
            headers: { ...headers, 'if-match': tag },
            body: JSON.stringify({ title }),
          });
          return { title, status: res.status, etag: res.headers.get('etag') };
        }),
      );
      const winners = answers.filter((a) => a.status === 200);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412]);
      const stored = (await ctx.readTask(task.id)) as TaskJson;
      expect(stored.title).toBe(winners[0]!.title);
      expect(await etagOf(task.id)).toBe(winners[0]!.etag);
    }
  });

  it("the ETag is keyed: it changes with a field the caller cannot see, but carries no form of that field's value", async () => {
    const email = 'hidden.person@example.com';
    const task = await ctx.createTask({ title: 'secret holder', assignee_email: email });
    const before = await etagOf(task.id, 'editor');
    const changed = await write('PATCH', task.id, undefined, { assignee_email: 'someone.else@example.com' });
    expect(changed.statusCode).toBe(200);
    const after = await etagOf(task.id, 'editor');
    expect(after).not.toBe(before);
    // Setting the value back restores the state, and so the tag: it is derived from the stored row.
    await write('PATCH', task.id, undefined, { assignee_email: email });
    expect(await etagOf(task.id, 'editor')).toBe(before);

    // No unkeyed digest of the value or of the visible row is what the tag shows.
    const body = (await ctx.request('editor', { method: 'GET', url: `/tasks/${task.id}` })).json().data;
    const candidates = [email, JSON.stringify(body), JSON.stringify({ ...body, assignee_email: email })];
    for (const text of candidates) {
      for (const algorithm of ['md5', 'sha1', 'sha256']) {
        for (const encoding of ['hex', 'base64', 'base64url'] as const) {
          const digest = createHash(algorithm).update(text).digest(encoding);
          expect(before.includes(digest.slice(0, 22))).toBe(false);
        }
      }
    }
    expect(before).not.toContain('hidden');
  });
});
