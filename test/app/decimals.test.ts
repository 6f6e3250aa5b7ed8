/**
 * A decimal is a string on the wire with exactly its column's scale of digits after the point, on both
 * databases, wherever a row is read: write responses, view, list, search and included rows ("3.50",
 * a default "0.00"; SQLite keeps a decimal as a number and would say "3.5", "0"). A decimal the
 * database cannot hold exactly is refused with 422, never rounded: more digits than the column's
 * precision or scale, and on SQLite more than the 15 significant digits a double keeps. At the
 * manifest's largest precision (38) PostgreSQL keeps every digit, through create, PATCH and search.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '@core/runtime';
import { describeValuesApp, MeasureRepository, sample, type Json, type ValuesApp } from './values-app.js';

/** numeric(38, 10) at full width: 28 digits, a point, 10 digits. */
const WIDEST = '1234567890123456789012345678.1234567890';
/** numeric(38, 38) at full width. */
const FINEST = '0.12345678901234567890123456789012345678';

async function get(ctx: ValuesApp, path: string): Promise<Json> {
  const res = await ctx.request({ method: 'GET', url: path });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Json;
}

async function search(ctx: ValuesApp, path: string, body: Json): Promise<Json[]> {
  const res = await ctx.request({ method: 'POST', url: path, payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Json[];
}

function expectRefused(res: { statusCode: number; body: string; json(): unknown }, path: string, reason: string): void {
  expect(res.statusCode, res.body).toBe(422);
  const body = res.json() as { error: { code: string; details: { path: string; reason?: string }[] } };
  expect(body.error.code).toBe('VALIDATION_ERROR');
  expect(body.error.details).toContainEqual(expect.objectContaining({ path, reason }));
}

describeValuesApp('decimals keep their scale and every digit', (ctx) => {
  describe('the scale on the wire', () => {
    it('numeric(12, 2) and numeric(9, 6): create response, view, list, search, PATCH response and the default', async () => {
      const cases: [Json, string, string | null][] = [
        [{ price: '3.5', exchange_rate: '1' }, '3.50', '1.000000'],
        [{ price: '3.50', exchange_rate: '0.000001' }, '3.50', '0.000001'],
        [{ price: '-0.5', exchange_rate: '-123.4' }, '-0.50', '-123.400000'],
        [{ price: '12' }, '12.00', null],
        [{}, '0.00', null], // the default, as the database filled it in
        [{ price: '9999999999.99', exchange_rate: '999.999999' }, '9999999999.99', '999.999999'],
      ];
      for (const [extra, price, rate] of cases) {
        const created = await ctx.create('/samples/', sample(extra));
        expect([created.price, created.exchange_rate], JSON.stringify(extra)).toEqual([price, rate]);
        const viewed = await get(ctx, `/samples/${created.id as string}`);
        expect([viewed.price, viewed.exchange_rate]).toEqual([price, rate]);
        const found = await search(ctx, '/samples/search', { filters: [{ field: 'id', op: 'eq', value: created.id }] });
        expect([found[0]!.price, found[0]!.exchange_rate]).toEqual([price, rate]);
      }
      const list = await ctx.request({ method: 'GET', url: '/samples/' });
      expect(
        list
          .json()
          .data.map((s: Json) => s.price)
          .sort(),
      ).toEqual(['-0.50', '0.00', '12.00', '3.50', '3.50', '9999999999.99']);

      const one = await ctx.create('/samples/', sample({ price: '1.25' }));
      const patched = await ctx.request({
        method: 'PATCH',
        url: `/samples/${one.id as string}`,
        payload: { price: '7.1', exchange_rate: '2.5' },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      expect([patched.json().data.price, patched.json().data.exchange_rate]).toEqual(['7.10', '2.500000']);
      const put = await ctx.request({
        method: 'PUT',
        url: `/samples/${one.id as string}`,
        payload: sample({ code: one.code }),
      });
      expect(put.json().data.price).toBe('0.00'); // absent from the replace: back to the default
    });

    it('a filter compares decimals by value, and the sort orders them by value', async () => {
      for (const price of ['10', '9.99', '-1', '0.5']) await ctx.create('/samples/', sample({ price }));
      const over = await search(ctx, '/samples/search', {
        filters: [{ field: 'price', op: 'gte', value: '0.50' }],
        sort: [{ field: 'price', order: 'asc' }],
      });
      expect(over.map((s) => s.price)).toEqual(['0.50', '9.99', '10.00']);
      const exact = await search(ctx, '/samples/search', { filters: [{ field: 'price', op: 'eq', value: '9.990' }] });
      expect(exact.map((s) => s.price)).toEqual(['9.99']);
    });

    it('an included row keeps its decimals at their scale', async () => {
      const parent = await ctx.create('/samples/', sample({ price: '3.5', exchange_rate: '2' }));
      const measure = await ctx.create('/measures/', { label: 'with sample', sample_id: parent.id });
      const viewed = await get(ctx, `/measures/${measure.id as string}?include=sample`);
      expect((viewed.sample as Json).price).toBe('3.50');
      expect((viewed.sample as Json).exchange_rate).toBe('2.000000');
      const listed = await ctx.request({ method: 'GET', url: '/measures/?include=sample' });
      expect(listed.json().data[0].sample).toEqual(parent);
      const found = await search(ctx, '/measures/search', { include: ['sample'] });
      expect(found[0]!.sample).toEqual(parent);
    });
  });

  describe('the largest precision (38)', () => {
    it('numeric(38, 10) and numeric(38, 38) at full width: every digit on PostgreSQL, 422 on SQLite', async () => {
      const res = await ctx.request({
        method: 'POST',
        url: '/measures/',
        payload: { label: 'widest', wide: WIDEST, fraction: FINEST },
      });
      if (ctx.dbName === 'sqlite') {
        expectRefused(res, 'wide', 'too_precise');
        expectRefused(res, 'fraction', 'too_precise');
        expect((await ctx.request({ method: 'GET', url: '/measures/' })).json().data).toEqual([]);
        return;
      }
      expect(res.statusCode, res.body).toBe(201);
      const created = res.json().data as Json;
      expect([created.wide, created.fraction]).toEqual([WIDEST, FINEST]);
      const id = created.id as string;
      expect(await get(ctx, `/measures/${id}`)).toEqual(created);
      const negative = await ctx.create('/measures/', {
        label: 'negative',
        wide: `-${WIDEST}`,
        fraction: `-${FINEST}`,
      });
      expect([negative.wide, negative.fraction]).toEqual([`-${WIDEST}`, `-${FINEST}`]);

      // Only the last digit changes: the update is written, not taken for "no change".
      const last = `${WIDEST.slice(0, -1)}1`;
      const patched = await ctx.request({
        method: 'PATCH',
        url: `/measures/${id}`,
        payload: { wide: last, fraction: `${FINEST.slice(0, -1)}9` },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      expect([patched.json().data.wide, patched.json().data.fraction]).toEqual([last, `${FINEST.slice(0, -1)}9`]);
      expect((await get(ctx, `/measures/${id}`)).wide).toBe(last);

      const exact = await search(ctx, '/measures/search', { filters: [{ field: 'wide', op: 'eq', value: last }] });
      expect(exact.map((m) => m.id)).toEqual([id]);
      const none = await search(ctx, '/measures/search', { filters: [{ field: 'wide', op: 'eq', value: WIDEST }] });
      expect(none).toEqual([]);
    });

    it('SQLite holds 15 significant digits exactly and refuses a 16th; PostgreSQL holds both', async () => {
      const fifteen: [string, string, string | null, string | null][] = [
        ['123456789012345', '123456789012345.0000000000', null, null],
        [
          '12345.6789012345',
          '12345.6789012345',
          '0.000000000000000000000000000000000001',
          '0.00000000000000000000000000000000000100',
        ],
        [
          '-99999999999999.9',
          '-99999999999999.9000000000',
          '0.999999999999999',
          '0.99999999999999900000000000000000000000',
        ],
        ['0.0000000001', '0.0000000001', '-0.5', '-0.50000000000000000000000000000000000000'],
        ['1000000000000000000000000000', '1000000000000000000000000000.0000000000', null, null], // 28 digits, 1 significant
      ];
      for (const [wide, wideOut, fraction, fractionOut] of fifteen) {
        const created = await ctx.create('/measures/', { label: 'x', wide, fraction });
        expect([created.wide, created.fraction]).toEqual([wideOut, fractionOut]);
        expect(await get(ctx, `/measures/${created.id as string}`)).toEqual(created);
      }

      const sixteen = await ctx.request({
        method: 'POST',
        url: '/measures/',
        payload: { label: 'x', wide: '1234567890123456', fraction: '0.1234567890123456' },
      });
      const kept = await ctx.create('/measures/', { label: 'kept', wide: '1.5' });
      const patch = await ctx.request({
        method: 'PATCH',
        url: `/measures/${kept.id as string}`,
        payload: { wide: '123456.1234567891' },
      });
      if (ctx.dbName === 'sqlite') {
        expectRefused(sixteen, 'wide', 'too_precise');
        expectRefused(sixteen, 'fraction', 'too_precise');
        expectRefused(patch, 'wide', 'too_precise');
        expect((await get(ctx, `/measures/${kept.id as string}`)).wide).toBe('1.5000000000');
      } else {
        expect(sixteen.statusCode, sixteen.body).toBe(201);
        expect([sixteen.json().data.wide, sixteen.json().data.fraction]).toEqual([
          '1234567890123456.0000000000',
          '0.12345678901234560000000000000000000000',
        ]);
        expect(patch.json().data.wide).toBe('123456.1234567891');
      }
      // Past the column's 28 digits before the point: the request schema's 422 on both.
      expectRefused(
        await ctx.request({ method: 'POST', url: '/measures/', payload: { label: 'x', wide: '1'.padEnd(29, '0') } }),
        'wide',
        'pattern',
      );
    });
  });

  describe('never rounded', () => {
    it('more digits after the point than the scale: 422 from the request schema', async () => {
      expectRefused(
        await ctx.request({ method: 'POST', url: '/samples/', payload: sample({ price: '3.505' }) }),
        'price',
        'pattern',
      );
      expectRefused(
        await ctx.request({ method: 'POST', url: '/measures/', payload: { label: 'x', wide: '1.12345678901' } }),
        'wide',
        'pattern',
      );
      expectRefused(
        await ctx.request({ method: 'POST', url: '/samples/', payload: sample({ price: '12345678901' }) }),
        'price',
        'pattern',
      );
    });

    it('through the repository (no request schema) the column decides: past the scale or the precision is a ValidationError', async () => {
      const repository = new MeasureRepository();
      const refusal = async (data: Json): Promise<unknown> => {
        try {
          await repository.create({ label: 'direct', ...data } as never);
        } catch (err) {
          return err;
        }
        throw new Error('expected a ValidationError');
      };
      const scale = await refusal({ wide: '1.12345678901' });
      expect(scale).toBeInstanceOf(ValidationError);
      expect((scale as ValidationError).details).toEqual([
        expect.objectContaining({ path: 'wide', reason: 'too_precise' }),
      ]);
      const precision = await refusal({ wide: '1'.repeat(29) });
      expect((precision as ValidationError).details).toEqual([
        expect.objectContaining({ path: 'wide', reason: 'out_of_range' }),
      ]);
      const notANumber = await refusal({ wide: '1e5' });
      expect((notANumber as ValidationError).details).toEqual([
        expect.objectContaining({ path: 'wide', reason: 'type' }),
      ]);
      // A trailing zero past the scale changes nothing, so it is not a rounding; a number is read as its digits.
      expect((await repository.create({ label: 'direct', wide: '1.50000000000' } as never)).wide).toBe('1.5000000000');
      expect((await repository.create({ label: 'direct', wide: 0.25 } as never)).wide).toBe('0.2500000000');
      expect(await ctx.request({ method: 'GET', url: '/measures/' }).then((r) => r.json().data.length)).toBe(2);
    });
  });
});
