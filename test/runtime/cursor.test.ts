import { describe, expect, it } from 'vitest';
import { CursorCodec } from '@core/runtime';

describe('CursorCodec', () => {
  const codec = CursorCodec.forSecret('cursor-test-secret-0123456789abcdef');
  const payload = { model: 'Task', binding: 'b1', values: ['2026-01-01', 'id-1'] };

  it('never repeats an IV: the same payload sealed 1,000 times gives 1,000 different cursors that all open', () => {
    const cursors = Array.from({ length: 1000 }, () => codec.encode(payload));
    expect(new Set(cursors).size).toBe(1000);
    // The IV is bytes 1..12 of the decoded token.
    const ivs = cursors.map((c) => Buffer.from(c, 'base64url').subarray(1, 13).toString('hex'));
    expect(new Set(ivs).size).toBe(1000);
    for (const cursor of cursors.slice(0, 20)) expect(codec.decode(cursor, 'cursor')).toEqual(payload);
  });

  it('refuses a cursor sealed with another secret', () => {
    const other = CursorCodec.forSecret('another-secret-0123456789abcdefghij').encode(payload);
    expect(() => codec.decode(other, 'cursor')).toThrow(/not valid/);
  });
});
