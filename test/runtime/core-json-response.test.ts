/**
 * The success envelope as clients receive it: `data` and `meta` through Core's JSON encoding, which
 * turns bigints into decimal strings and Sets into arrays wherever they are, flat or nested.
 */
import { describe, expect, it } from 'vitest';
import { CoreJSONResponse } from '@core/runtime';

const body = (response: CoreJSONResponse): unknown => JSON.parse(response.render());

describe('CoreJSONResponse', () => {
  it('renders the envelope with a flat meta as JSON.stringify would', () => {
    const meta = { limit: 20, offset: 0, next_cursor: 'abc"\u2028', has_more: true, skipped: undefined };
    expect(new CoreJSONResponse([{ id: 1 }], { meta }).render()).toBe(
      `{"success":true,"message":"Success","data":[{"id":1}],"meta":${JSON.stringify(meta)}}`,
    );
    expect(body(new CoreJSONResponse(null))).toEqual({ success: true, message: 'Success', data: null, meta: null });
  });

  it('writes bigints as decimal strings and Sets as arrays, in data and meta, flat or nested', () => {
    const big = 2n ** 63n - 1n;
    const response = new CoreJSONResponse(
      { total: big, tags: new Set(['a', 'b']), nested: { n: big } },
      { meta: { total: big }, message: 'Done "now"' },
    );
    expect(body(response)).toEqual({
      success: true,
      message: 'Done "now"',
      data: { total: '9223372036854775807', tags: ['a', 'b'], nested: { n: '9223372036854775807' } },
      meta: { total: '9223372036854775807' },
    });
    expect(body(new CoreJSONResponse([], { meta: { at: new Date(0), ids: new Set([1n]) } }))).toMatchObject({
      meta: { at: '1970-01-01T00:00:00.000Z', ids: ['1'] },
    });
  });

  it('keeps a class instance with toJSON on the encoder that handles what toJSON returns', () => {
    class Money {
      toJSON(): unknown {
        return { cents: 1n };
      }
    }
    expect(body(new CoreJSONResponse(null, { meta: new Money() }))).toMatchObject({ meta: { cents: '1' } });
  });
});
