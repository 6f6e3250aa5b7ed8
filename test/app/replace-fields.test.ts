/**
 * A replace (PUT) resets the writable fields its body leaves out, and only those: a field the update
 * schema does not declare (`external_ref`, `"update": false` in the manifest) keeps its stored value,
 * as a restricted field does, on both databases.
 */
import { expect, it } from 'vitest';
import { describeValuesApp, sample, type Json } from './values-app.js';

const REF = '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21';

describeValuesApp('a replace leaves the fields it cannot update alone', (ctx) => {
  it('PUT without external_ref keeps it; the absent writable fields return to their defaults', async () => {
    const created = await ctx.create('/samples/', sample({ external_ref: REF, notes: 'n', quantity: 7 }));
    expect(created).toMatchObject({ external_ref: REF, notes: 'n', quantity: 7 });
    const id = created.id as string;

    const put = await ctx.request({
      method: 'PUT',
      url: `/samples/${id}`,
      payload: { code: created.code, starts_at: created.starts_at },
    });
    expect(put.statusCode, put.body).toBe(200);
    const expected = { external_ref: REF, notes: null, quantity: 1 };
    expect(put.json().data).toMatchObject(expected);
    const read = await ctx.request({ method: 'GET', url: `/samples/${id}` });
    expect(read.json().data as Json).toMatchObject(expected);
  });

  it('a PUT that sends external_ref does not change it either (the key is not in the update schema)', async () => {
    const created = await ctx.create('/samples/', sample({ external_ref: REF }));
    const other = '00000000-0000-4000-8000-000000000001';
    const put = await ctx.request({
      method: 'PUT',
      url: `/samples/${created.id as string}`,
      payload: { code: created.code, starts_at: created.starts_at, external_ref: other },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().data.external_ref).toBe(REF);
  });

  it('a field that may be updated but not set on create is reset by a PUT that leaves it out', async () => {
    const created = await ctx.create('/samples/', sample());
    const id = created.id as string;
    const patched = await ctx.request({ method: 'PATCH', url: `/samples/${id}`, payload: { reviewed: true } });
    expect(patched.json().data.reviewed).toBe(true);
    const put = await ctx.request({
      method: 'PUT',
      url: `/samples/${id}`,
      payload: { code: created.code, starts_at: created.starts_at },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().data.reviewed).toBe(false);
  });
});
