/**
 * Dates and date-times are accepted in the years 0001–9999, the same on both databases, and what the
 * schemas publish says so: year 0000 (which PostgreSQL cannot store) and a date-time whose offset
 * carries it out of those years are a 422 naming the field, on create and on replace; the years
 * 0001–0099 round-trip and can be searched for (they are not read as 1900–1999).
 */
import { Compile } from 'typebox/compile';
import { expect, it } from 'vitest';
import { describeValuesApp, sample, type Json } from './values-app.js';

const REFUSED: [string, Json][] = [
  ['a date in year 0000', { born_on: '0000-06-11' }],
  ['a date-time in year 0000', { starts_at: '0000-01-01T00:00:00Z' }],
  ['a date-time east of UTC on 0001-01-01', { starts_at: '0001-01-01T00:30:00+01:00' }],
  ['a date-time west of UTC on 9999-12-31', { starts_at: '9999-12-31T23:00:00-02:00' }],
];

const ACCEPTED: [string, Json, Json][] = [
  [
    'the first day',
    { born_on: '0001-01-01', starts_at: '0001-01-01T00:00:00Z' },
    { born_on: '0001-01-01', starts_at: '0001-01-01T00:00:00.000Z' },
  ],
  [
    'a year below 100',
    { born_on: '0050-06-01', starts_at: '0099-12-31T23:59:59.5+00:00' },
    { born_on: '0050-06-01', starts_at: '0099-12-31T23:59:59.500Z' },
  ],
  [
    'west of UTC on the first day',
    { starts_at: '0001-01-01T00:00:00-05:00' },
    { starts_at: '0001-01-01T05:00:00.000Z' },
  ],
  [
    'the last day',
    { born_on: '9999-12-31', starts_at: '9999-12-31T23:59:59.999Z' },
    { born_on: '9999-12-31', starts_at: '9999-12-31T23:59:59.999Z' },
  ],
];

describeValuesApp('dates and date-times in the years 0001 to 9999', (ctx) => {
  it.each(REFUSED)('create with %s → 422 naming the field, nothing written', async (_name, fields) => {
    const res = await ctx.request({ method: 'POST', url: '/samples/', payload: sample(fields) });
    expect(res.statusCode, res.body).toBe(422);
    const [field] = Object.keys(fields);
    expect(res.json().error.details).toEqual([expect.objectContaining({ path: field })]);
    const rows = await ctx.db.select<{ n: number | string }>('select count(*) as n from samples');
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it.each(REFUSED)('PUT and PATCH with %s → 422 naming the field, the row unchanged', async (_name, fields) => {
    const created = await ctx.create('/samples/', sample({ born_on: '2024-06-11' }));
    for (const method of ['PUT', 'PATCH']) {
      const res = await ctx.request({
        method,
        url: `/samples/${created.id as string}`,
        payload: { code: created.code, starts_at: created.starts_at, ...fields },
      });
      expect(res.statusCode, `${method} ${res.body}`).toBe(422);
      expect(res.json().error.details).toEqual([expect.objectContaining({ path: Object.keys(fields)[0] })]);
    }
    const read = await ctx.request({ method: 'GET', url: `/samples/${created.id as string}` });
    expect(read.json().data).toMatchObject({ born_on: '2024-06-11', starts_at: created.starts_at });
  });

  it.each(ACCEPTED)('%s round-trips and is found by a search for it', async (_name, fields, expected) => {
    const created = await ctx.create('/samples/', sample(fields));
    expect(created).toMatchObject(expected);
    const read = await ctx.request({ method: 'GET', url: `/samples/${created.id as string}` });
    expect(read.json().data).toMatchObject(expected);
    for (const [field, value] of Object.entries(fields)) {
      const res = await ctx.request({
        method: 'POST',
        url: '/samples/search',
        payload: { filters: [{ field, op: 'eq', value }] },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(
        (res.json().data as Json[]).map((row) => row.id),
        `${field} eq ${String(value)}`,
      ).toEqual([created.id]);
    }
  });

  it('a search refuses year 0000 and accepts any year from 0001, before and after UTC', async () => {
    const created = await ctx.create('/samples/', sample({ born_on: '0050-06-01', starts_at: '0001-05-05T20:52:02Z' }));
    const search = async (filter: Json): Promise<{ status: number; body: Json }> => {
      const res = await ctx.request({ method: 'POST', url: '/samples/search', payload: { filters: [filter] } });
      return { status: res.statusCode, body: res.json() as Json };
    };
    for (const filter of [
      { field: 'born_on', op: 'eq', value: '0000-06-01' },
      { field: 'starts_at', op: 'gt', value: '0000-12-31T00:00:00Z' },
    ]) {
      const { status, body } = await search(filter);
      expect(status).toBe(422);
      expect((body.error as { details: Json[] }).details).toEqual([
        expect.objectContaining({ path: 'filters[0].value', reason: 'invalid_value' }),
      ]);
    }
    for (const [filter, ids] of [
      [{ field: 'born_on', op: 'lt', value: '0100-01-01' }, [created.id]],
      [{ field: 'starts_at', op: 'gte', value: '0001-01-01T00:30:00+01:00' }, [created.id]],
      [{ field: 'starts_at', op: 'gt', value: '0001-05-05T20:52:02.001Z' }, []],
    ] as const) {
      const { status, body } = await search(filter);
      expect(status, JSON.stringify(body)).toBe(200);
      expect((body.data as Json[]).map((row) => row.id)).toEqual(ids);
    }
  });

  it('the published schemas state the range: what they accept is what is stored', async () => {
    const introspected = await ctx.request({ method: 'POST', url: '/samples/?schema=true', payload: {} });
    const openapi = await ctx.request({ method: 'GET', url: '/docs/json' });
    expect(openapi.statusCode).toBe(200);
    const components = (
      openapi.json() as { components: { schemas: Record<string, { properties: Record<string, Json> }> } }
    ).components.schemas;
    const create = Object.values(components).find(
      (s) => s.properties?.['external_ref'] && s.properties['code'] && !s.properties['id'],
    )!;
    for (const published of [
      (introspected.json().data as { properties: Record<string, Json> }).properties,
      create.properties,
    ]) {
      expect(published['starts_at']).toMatchObject({ format: 'date-time', pattern: expect.any(String) });
      expect(published['born_on']).toMatchObject({ format: 'date', pattern: expect.any(String) });
      const startsAt = Compile(published['starts_at'] as never);
      const bornOn = Compile({ ...published['born_on'], type: 'string' } as never);
      for (const [, fields] of REFUSED) {
        if ('starts_at' in fields) expect(startsAt.Check(fields.starts_at), String(fields.starts_at)).toBe(false);
        if ('born_on' in fields) expect(bornOn.Check(fields.born_on), String(fields.born_on)).toBe(false);
      }
      for (const [, fields] of ACCEPTED) {
        if ('starts_at' in fields) expect(startsAt.Check(fields.starts_at), String(fields.starts_at)).toBe(true);
        if ('born_on' in fields) expect(bornOn.Check(fields.born_on), String(fields.born_on)).toBe(true);
      }
    }
  });
});
