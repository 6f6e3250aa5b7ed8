import { createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '@core/runtime';

describe('CursorCodec', () => {
  const secret = 'cursor-test-secret-0123456789abcdef';
  const codec = CursorCodec.forSecret(secret);
  const payload = { model: 'Task', binding: 'b1', values: ['2026-01-01', 'id-1'] };
  const bytesOf = (cursor: string): Buffer => Buffer.from(cursor, 'base64url');
  const withByte = (cursor: string, index: number, value: number): string => {
    const bytes = bytesOf(cursor);
    bytes[index] = value;
    return bytes.toString('base64url');
  };

  describe('signed (the default)', () => {
    const cursor = codec.encode(payload);

    it('opens to the payload, which is readable JSON after the version byte and a 16-byte MAC', () => {
      expect(codec.decode(cursor, 'cursor')).toEqual(payload);
      expect(bytesOf(cursor)[0]).toBe(2);
      expect(JSON.parse(bytesOf(cursor).subarray(17).toString('utf8'))).toEqual({ m: 'Task', b: 'b1', k: ['2026-01-01', 'id-1'] });
    });

    it('carries HMAC-SHA256 of the version byte and the JSON, under a key derived from the secret', () => {
      const key = Buffer.from(hkdfSync('sha256', secret, 'core-cursor-salt', 'core/search-cursor/hmac-sha256', 32));
      const bytes = bytesOf(cursor);
      const mac = createHmac('sha256', key).update(bytes.subarray(0, 1)).update(bytes.subarray(17)).digest();
      expect(bytes.subarray(1, 17).equals(mac.subarray(0, 16))).toBe(true);
    });

    it('refuses any changed byte: version, MAC or payload', () => {
      const length = bytesOf(cursor).length;
      for (const index of [0, 1, 8, 16, 17, 30, length - 1]) {
        const bytes = bytesOf(cursor);
        const changed = withByte(cursor, index, bytes[index]! ^ 0x01);
        expect(() => codec.decode(changed, 'cursor'), `byte ${index}`).toThrow(/not valid/);
      }
      expect(() => codec.decode(bytesOf(cursor).subarray(0, length - 1).toString('base64url'), 'cursor')).toThrow(/not valid/);
    });

    it('refuses a cursor signed with another secret', () => {
      const other = CursorCodec.forSecret('another-secret-0123456789abcdefghij').encode(payload);
      expect(() => codec.decode(other, 'cursor')).toThrow(/not valid/);
    });
  });

  describe('sealed', () => {
    it('hides the payload, and never repeats an IV: the same payload sealed 1,000 times gives 1,000 different cursors that all open', () => {
      const cursors = Array.from({ length: 1000 }, () => codec.encode(payload, { seal: true }));
      expect(new Set(cursors).size).toBe(1000);
      // The IV is bytes 1..12 of the decoded token.
      const ivs = cursors.map((c) => bytesOf(c).subarray(1, 13).toString('hex'));
      expect(new Set(ivs).size).toBe(1000);
      for (const cursor of cursors.slice(0, 20)) {
        expect(codec.decode(cursor, 'cursor')).toEqual(payload);
        expect(bytesOf(cursor)[0]).toBe(1);
        for (const hidden of ['Task', 'b1', '2026-01-01', 'id-1']) expect(bytesOf(cursor).toString('latin1')).not.toContain(hidden);
      }
    });

    it('refuses a cursor sealed with another secret, and a sealed cursor relabelled as signed', () => {
      const sealed = codec.encode(payload, { seal: true });
      expect(() => codec.decode(CursorCodec.forSecret('another-secret-0123456789abcdefghij').encode(payload, { seal: true }), 'cursor')).toThrow(/not valid/);
      expect(() => codec.decode(withByte(sealed, 0, 2), 'cursor')).toThrow(/not valid/);
      expect(() => codec.decode(withByte(codec.encode(payload), 0, 1), 'cursor')).toThrow(/not valid/);
    });
  });
});
