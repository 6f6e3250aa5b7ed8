/**
 * Any value a client can send is bound as a parameter, stored and returned exactly, or refused with
 * 422 naming the field, on both databases, through every write (create, PUT, PATCH: MikroORM's flush)
 * and the read and search paths. Text: every code point but U+0000 round-trips, in plain strings and
 * in JSON values and keys; U+0000 and unpaired surrogates are refused (PostgreSQL cannot store the
 * first, and the second is not Unicode). Numbers: integers and bigints within their column's range
 * round-trip to the last digit, beyond it they are refused.
 */
import { describe, expect, it } from 'vitest';
import { UnitOfWork, type QueryEvent } from '@core/runtime';
import { Sample } from '../../fixtures/golden/every-field-type/expected/src/apps/samples/models.js';
import { describeFixtureApp } from './helpers.js';
import { describeValuesApp, sample, type Json, type ValuesApp } from './values-app.js';

/** Every code point from U+0001 to U+FFFF but the surrogates, in order. */
const EVERY_BMP = (() => {
  let text = '';
  for (let c = 1; c <= 0xffff; c++) if (c < 0xd800 || c > 0xdfff) text += String.fromCharCode(c);
  return text;
})();
/** Characters outside the BMP, each a surrogate pair: the first, an emoji, the last code point. */
const ASTRAL = '\u{10000}\u{1F600}\u{10FFFF}';
/** What SQL text would trip on, if a value ever reached it unbound. */
const SQL_TEXT = `'; drop table samples; -- "x" \\ \\' ? ?? $1 %_ \u0001\u001f\u007f\u2028\u2029\uFEFF\uFFFE\uFFFF`;

const REFUSED_TEXT: [string, string][] = [
  ['U+0000 alone', '\u0000'],
  ['U+0000 inside', 'a\u0000b'],
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate', '\udc00'],
  ['a high surrogate at the end', 'x\ud83d'],
  ['two high surrogates', '\ud83d\ud83d\ude00'],
];

interface ErrorBody {
  error: { code: string; details: { path: string; reason?: string; message: string }[] };
}

function expectRefused(
  res: { statusCode: number; body: string; json(): unknown },
  path: string,
  reason = 'invalid_character',
): void {
  expect(res.statusCode, res.body).toBe(422);
  const body = res.json() as ErrorBody;
  expect(body.error.code).toBe('VALIDATION_ERROR');
  expect(body.error.details).toContainEqual(expect.objectContaining({ path, reason }));
  // The message says what and where, never the value: no raw control or surrogate character.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is what must not appear
  expect(res.body).not.toMatch(/[\u0000\ud800-\udfff]/);
}

async function get(ctx: ValuesApp, path: string): Promise<Json> {
  const res = await ctx.request({ method: 'GET', url: path });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Json;
}

describeValuesApp('values round-trip exactly or are refused', (ctx) => {
  describe('statements', () => {
    it("MikroORM's insert, update and delete carry every value as a bound parameter, never in the SQL text", async () => {
      const seen: QueryEvent[] = [];
      const off = ctx.db.onQuery((q) => seen.push(q));
      let id: string;
      try {
        const created = await ctx.create('/samples/', sample({ notes: SQL_TEXT, settings: { [SQL_TEXT]: SQL_TEXT } }));
        id = created.id as string;
        const patched = await ctx.request({
          method: 'PATCH',
          url: `/samples/${id}`,
          payload: { notes: `${SQL_TEXT}!`, price: '1.25' },
        });
        expect(patched.statusCode, patched.body).toBe(200);
        expect((await ctx.request({ method: 'DELETE', url: `/samples/${id}` })).statusCode).toBe(200);
      } finally {
        off();
      }
      const writes = seen.filter((q) => /^\s*(insert|update|delete)\b/i.test(q.sql));
      expect(writes.map((q) => q.sql.trim().split(/\s/)[0]!.toLowerCase())).toEqual(['insert', 'update', 'delete']);
      for (const q of writes) {
        expect(q.sql).not.toContain('drop table');
        expect(q.sql).not.toContain(id);
      }
      expect(writes[0]!.params).toContain(SQL_TEXT);
      expect(writes[0]!.params).toContain(JSON.stringify({ [SQL_TEXT]: SQL_TEXT }));
      expect(writes[1]!.params).toEqual(expect.arrayContaining([`${SQL_TEXT}!`, '1.25', id]));
      expect(writes[2]!.params).toContain(id);
    });

    it('what an app writes through uow.em is bound too: SQLite stores a NUL (it used to be a syntax error), PostgreSQL refuses it', async () => {
      const write = UnitOfWork.run(async (uow) => {
        uow.em.create(Sample, { ...sample(), notes: 'a\u0000b', starts_at: new Date() } as never);
      });
      if (ctx.dbName === 'postgresql') {
        await expect(write).rejects.toThrow(/0x00|invalid byte sequence/);
        return;
      }
      await write;
      const list = await ctx.request({ method: 'GET', url: '/samples/' });
      expect(list.json().data.map((s: Json) => s.notes)).toEqual(['a\u0000b']);
    });
  });

  describe('text', () => {
    it('every code point from U+0001 to U+FFFF and surrogate pairs round-trip through create, PUT, PATCH, view, list and search', async () => {
      const text = EVERY_BMP + ASTRAL;
      const created = await ctx.create('/samples/', sample({ notes: text }));
      expect(created.notes).toBe(text);
      const id = created.id as string;
      expect((await get(ctx, `/samples/${id}`)).notes).toBe(text);

      const reversed = [...text].reverse().join('');
      const put = await ctx.request({
        method: 'PUT',
        url: `/samples/${id}`,
        payload: sample({ code: created.code, notes: reversed }),
      });
      expect(put.statusCode, put.body).toBe(200);
      expect(put.json().data.notes).toBe(reversed);
      expect((await get(ctx, `/samples/${id}`)).notes).toBe(reversed);

      const patch = await ctx.request({
        method: 'PATCH',
        url: `/samples/${id}`,
        payload: { notes: SQL_TEXT + ASTRAL },
      });
      expect(patch.statusCode, patch.body).toBe(200);
      expect(patch.json().data.notes).toBe(SQL_TEXT + ASTRAL);
      const list = await ctx.request({ method: 'GET', url: '/samples/' });
      expect(list.json().data.map((s: Json) => s.notes)).toEqual([SQL_TEXT + ASTRAL]);

      // The same characters as a search value find the row: bound, not written into the SQL.
      for (const op of ['eq', 'contains', 'startswith'] as const) {
        const found = await ctx.request({
          method: 'POST',
          url: '/samples/search',
          payload: { filters: [{ field: 'notes', op, value: SQL_TEXT }] },
        });
        expect(found.statusCode, found.body).toBe(200);
        expect(
          found.json().data.map((s: Json) => s.id),
          op,
        ).toEqual(op === 'eq' ? [] : [id]);
      }
    });

    it('every code point round-trips inside a JSON value, as strings and as object keys', async () => {
      const settings = {
        every: EVERY_BMP,
        [EVERY_BMP.slice(0, 200)]: ASTRAL,
        [ASTRAL]: [SQL_TEXT, { [SQL_TEXT]: '\u007f', '': '' }],
      };
      const created = await ctx.create('/samples/', sample({ settings }));
      expect(created.settings).toEqual(settings);
      expect((await get(ctx, `/samples/${created.id as string}`)).settings).toEqual(settings);
      const patched = await ctx.request({
        method: 'PATCH',
        url: `/samples/${created.id as string}`,
        payload: { settings: [settings, settings] },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json().data.settings).toEqual([settings, settings]);
    });

    it('a string of nearly 1 MiB round-trips; a body over 1 MiB is 413', async () => {
      const big = 'é'.repeat(100_000) + 'x'.repeat(1024 * 1024 - 200_000 - 300);
      const created = await ctx.create('/samples/', sample({ notes: big }));
      expect(created.notes).toBe(big);
      expect((await get(ctx, `/samples/${created.id as string}`)).notes).toBe(big);
      const tooBig = await ctx.request({
        method: 'POST',
        url: '/samples/',
        payload: sample({ notes: 'x'.repeat(1024 * 1024) }),
      });
      expect(tooBig.statusCode).toBe(413);
      expect(tooBig.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it.each(REFUSED_TEXT)(
      '%s: 422 on create, PUT and PATCH, naming the field; the record is unchanged',
      async (_name, bad) => {
        expectRefused(
          await ctx.request({ method: 'POST', url: '/samples/', payload: sample({ notes: bad }) }),
          'notes',
        );
        expectRefused(await ctx.request({ method: 'POST', url: '/measures/', payload: { label: bad } }), 'label');
        const created = await ctx.create('/samples/', sample({ notes: 'kept' }));
        const id = created.id as string;
        expectRefused(
          await ctx.request({
            method: 'PUT',
            url: `/samples/${id}`,
            payload: sample({ code: created.code, notes: bad }),
          }),
          'notes',
        );
        expectRefused(await ctx.request({ method: 'PATCH', url: `/samples/${id}`, payload: { notes: bad } }), 'notes');
        expectRefused(
          await ctx.request({ method: 'PATCH', url: `/samples/${id}`, payload: { code: `ab${bad}cd` } }),
          'code',
        );
        expect(await get(ctx, `/samples/${id}`)).toEqual(created);
        const count = await ctx.request({ method: 'GET', url: '/samples/' });
        expect(count.json().data).toHaveLength(1);
      },
    );

    it.each(REFUSED_TEXT)('%s inside a JSON value or key: 422 naming where', async (_name, bad) => {
      expectRefused(
        await ctx.request({ method: 'POST', url: '/samples/', payload: sample({ settings: bad }) }),
        'settings',
      );
      expectRefused(
        await ctx.request({ method: 'POST', url: '/samples/', payload: sample({ settings: { a: [1, { b: bad }] } }) }),
        'settings.a[1].b',
      );
      expectRefused(
        await ctx.request({ method: 'POST', url: '/samples/', payload: sample({ settings: { a: { [bad]: 1 } } }) }),
        'settings.a',
      );
      const created = await ctx.create('/samples/', sample({ settings: { ok: true } }));
      expectRefused(
        await ctx.request({ method: 'PATCH', url: `/samples/${created.id as string}`, payload: { settings: [bad] } }),
        'settings[0]',
      );
      expect((await get(ctx, `/samples/${created.id as string}`)).settings).toEqual({ ok: true });
    });

    it.each(REFUSED_TEXT)('%s as a search value: 422 naming the filter', async (_name, bad) => {
      for (const op of ['eq', 'like', 'contains', 'ilike'] as const) {
        const res = await ctx.request({
          method: 'POST',
          url: '/samples/search',
          payload: { filters: [{ field: 'notes', op, value: bad }] },
        });
        expectRefused(res, 'filters[0].value');
      }
      const listed = await ctx.request({
        method: 'POST',
        url: '/samples/search',
        payload: { filters: [{ field: 'code', op: 'in', value: ['a', bad] }] },
      });
      expectRefused(listed, 'filters[0].value[1]');
    });
  });

  describe('integers', () => {
    it('an integer column holds 32 bits: both ends round-trip, one past them is 422, never a wrap or a 500', async () => {
      for (const count of [2147483647, -2147483648, 0]) {
        const created = await ctx.create('/measures/', { label: 'n', count });
        expect(created.count).toBe(count);
        expect((await get(ctx, `/measures/${created.id as string}`)).count).toBe(count);
      }
      const kept = await ctx.create('/measures/', { label: 'kept', count: 7 });
      for (const count of [2147483648, -2147483649, 1e15, 2 ** 53 + 2, 1e300]) {
        expectRefused(
          await ctx.request({ method: 'POST', url: '/measures/', payload: { label: 'x', count } }),
          'count',
          'out_of_range',
        );
        expectRefused(
          await ctx.request({ method: 'PATCH', url: `/measures/${kept.id as string}`, payload: { count } }),
          'count',
          'out_of_range',
        );
        const search = await ctx.request({
          method: 'POST',
          url: '/measures/search',
          payload: { filters: [{ field: 'count', op: 'lt', value: count }] },
        });
        expectRefused(search, 'filters[0].value', 'out_of_range');
      }
      expect((await get(ctx, `/measures/${kept.id as string}`)).count).toBe(7);
    });

    it('a bigint keeps every digit, also past 2^53 (SQLite reads it as a number otherwise), and searches by it exactly', async () => {
      const values = [
        '999999999999999999',
        '-999999999999999999',
        '9007199254740993',
        '9007199254740992',
        '-9007199254740993',
      ];
      const ids = new Map<string, string>();
      for (const big_count of values) {
        const created = await ctx.create('/samples/', sample({ big_count }));
        expect(created.big_count).toBe(big_count);
        expect((await get(ctx, `/samples/${created.id as string}`)).big_count).toBe(big_count);
        ids.set(big_count, created.id as string);
      }
      const list = await ctx.request({ method: 'GET', url: '/samples/?limit=2' });
      const all: Json[] = [...list.json().data];
      let cursor = list.json().meta.next_cursor as string | null;
      while (cursor) {
        const next = await ctx.request({
          method: 'GET',
          url: `/samples/?limit=2&cursor=${encodeURIComponent(cursor)}`,
        });
        all.push(...next.json().data);
        cursor = next.json().meta.next_cursor;
      }
      expect(all.map((s) => s.big_count).sort()).toEqual([...values].sort());

      const eq = await ctx.request({
        method: 'POST',
        url: '/samples/search',
        payload: { filters: [{ field: 'big_count', op: 'eq', value: '9007199254740993' }] },
      });
      expect(eq.json().data.map((s: Json) => s.id)).toEqual([ids.get('9007199254740993')]);
      const sorted = await ctx.request({
        method: 'POST',
        url: '/samples/search',
        payload: { sort: [{ field: 'big_count', order: 'desc' }], limit: 2 },
      });
      expect(sorted.json().data.map((s: Json) => s.big_count)).toEqual(['999999999999999999', '9007199254740993']);
      const page2 = await ctx.request({
        method: 'POST',
        url: '/samples/search',
        payload: { sort: [{ field: 'big_count', order: 'desc' }], limit: 2, cursor: sorted.json().meta.next_cursor },
      });
      expect(page2.json().data.map((s: Json) => s.big_count)).toEqual(['9007199254740992', '-9007199254740993']);

      const id = ids.get('9007199254740993')!;
      const patched = await ctx.request({
        method: 'PATCH',
        url: `/samples/${id}`,
        payload: { big_count: '9007199254740995' },
      });
      expect(patched.json().data.big_count).toBe('9007199254740995');
    });

    it('a bigint past 64 bits is 422: in a body (19 digits and more) and in a search value', async () => {
      expectRefused(
        await ctx.request({ method: 'POST', url: '/samples/', payload: sample({ big_count: '9223372036854775808' }) }),
        'big_count',
        'pattern',
      );
      for (const value of ['9223372036854775808', '-9223372036854775809', '1'.repeat(40)]) {
        const res = await ctx.request({
          method: 'POST',
          url: '/samples/search',
          payload: { filters: [{ field: 'big_count', op: 'gt', value }] },
        });
        expectRefused(res, 'filters[0].value', 'out_of_range');
      }
      const max = await ctx.request({
        method: 'POST',
        url: '/samples/search',
        payload: { filters: [{ field: 'big_count', op: 'lte', value: '9223372036854775807' }] },
      });
      expect(max.statusCode, max.body).toBe(200);
    });

    it('floats round-trip as the same double', async () => {
      // biome-ignore lint/correctness/noPrecisionLoss: the last literal is rounded on purpose, as a client's would be
      for (const ratio of [0.1 + 0.2, 1 / 3, 1.7976931348623157e308, -2.2250738585072014e-308, 123456789.123456789]) {
        const created = await ctx.create('/samples/', sample({ ratio: null }));
        const res = await ctx.request({ method: 'PATCH', url: `/samples/${created.id as string}`, payload: { ratio } });
        // The manifest bounds ratio to [0, 1]; values outside are the schema's 422, the rest round-trip.
        if (ratio < 0 || ratio > 1) {
          expect(res.statusCode).toBe(422);
          continue;
        }
        expect(res.json().data.ratio).toBe(ratio);
        expect((await get(ctx, `/samples/${created.id as string}`)).ratio).toBe(ratio);
      }
    });
  });
});

describeFixtureApp('values through the compiled insert', (ctx) => {
  it('every code point from U+0001 to U+FFFF round-trips through the one-statement create as through the flush', async () => {
    for (let i = 0; i < EVERY_BMP.length; i += 1000) {
      const description = EVERY_BMP.slice(i, i + 1000);
      const task = await ctx.createTask({ title: `${ASTRAL}${i}`, description });
      expect([task.title, task.description]).toEqual([`${ASTRAL}${i}`, description]);
      expect(await ctx.readTask(task.id)).toEqual(task);
    }
  });

  it.each(REFUSED_TEXT)('%s: 422 on create and PATCH of a task, and nothing is written', async (_name, bad) => {
    expectRefused(await ctx.request('admin', { method: 'POST', url: '/tasks/', payload: { title: bad } }), 'title');
    expect(await ctx.countTasks()).toBe(0);
    const task = await ctx.createTask({ title: 'kept' });
    expectRefused(
      await ctx.request('admin', { method: 'PATCH', url: `/tasks/${task.id}`, payload: { description: bad } }),
      'description',
    );
    expect(await ctx.readTask(task.id)).toEqual(task);
  });
});
