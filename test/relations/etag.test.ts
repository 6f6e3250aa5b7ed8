/**
 * ETags of records with relations (the generated relation-graph project, real sockets, both
 * databases): the tag covers the row's whole stored state, so it changes with the many-to-many links
 * the record owns and with columns no response shows (`output: false`), and `If-Match` guards link
 * changes like any other write.
 */
import { expect, it } from 'vitest';
import { signToken } from '@core/runtime';
import { describeRelationApp, SECRET, seedGraph, type Json } from './relation-app.js';

const ADMIN = `Bearer ${signToken({ sub: 'admin', roles: ['admin'] }, SECRET)}`;

describeRelationApp('ETags of related records', (ctx) => {
  async function send(
    method: string,
    path: string,
    body?: unknown,
    ifMatch?: string,
  ): Promise<{ status: number; etag: string | null; data: Json | null }> {
    const headers: Record<string, string> = { authorization: ADMIN };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (ifMatch !== undefined) headers['if-match'] = ifMatch;
    const res = await fetch(ctx.baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as { data: Json | null };
    return { status: res.status, etag: res.headers.get('etag'), data: json.data };
  }

  async function etag(path: string): Promise<string> {
    const res = await send('GET', path);
    expect(res.status).toBe(200);
    expect(res.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    return res.etag!;
  }

  async function labelIds(taskId: unknown): Promise<string[]> {
    const res = await send('GET', `/tasks/${String(taskId)}?include=labels`);
    return ((res.data!.labels as Json[]) ?? []).map((l) => l.id as string).sort();
  }

  it('changes with the many-to-many links the record owns, and not with their order', async () => {
    const { task, labels } = await seedGraph(ctx);
    const [bug, ui] = labels.map((l) => l.id as string) as [string, string];
    const both = await etag(`/tasks/${task.id}`);
    expect(await etag(`/tasks/${task.id}?include=labels,project`)).toBe(both);

    const one = await send('PATCH', `/tasks/${task.id}`, { tag_ids: [bug] });
    expect(one.status).toBe(200);
    expect(one.etag).not.toBe(both);
    expect(await etag(`/tasks/${task.id}`)).toBe(one.etag);

    const again = await send('PATCH', `/tasks/${task.id}`, { tag_ids: [ui, bug] });
    expect(again.etag).toBe(both);
  });

  it('a stale If-Match refuses a change of links, and the links stay as they were', async () => {
    const { task, labels } = await seedGraph(ctx);
    const stale = await etag(`/tasks/${task.id}`);
    expect((await send('PATCH', `/tasks/${task.id}`, { tag_ids: [labels[0]!.id] })).status).toBe(200);
    const refused = await send('PATCH', `/tasks/${task.id}`, { tag_ids: [] }, stale);
    expect(refused.status).toBe(412);
    expect(await labelIds(task.id)).toEqual([labels[0]!.id]);
  });

  it('racing link changes with the same If-Match: one wins, the other gets 412', async () => {
    const { task, labels } = await seedGraph(ctx);
    const tag = await etag(`/tasks/${task.id}`);
    const answers = await Promise.all(
      labels.map((label) => send('PATCH', `/tasks/${task.id}`, { tag_ids: [label.id] }, tag)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
    const won = answers.findIndex((a) => a.status === 200);
    expect(await labelIds(task.id)).toEqual([labels[won]!.id]);
    expect(await etag(`/tasks/${task.id}`)).toBe(answers[won]!.etag);
  });

  it('changes with a column no response shows (output: false)', async () => {
    const { user } = await seedGraph(ctx);
    const before = await etag(`/users/${user.id}`);
    const res = await send('PATCH', `/users/${user.id}`, { password_hash: 'changed' });
    expect(res.status).toBe(200);
    expect(res.data).not.toHaveProperty('password_hash');
    expect(res.etag).not.toBe(before);
    expect(await etag(`/users/${user.id}`)).toBe(res.etag);
  });
});
