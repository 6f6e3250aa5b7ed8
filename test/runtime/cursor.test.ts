import { createCipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../runtime/src/search/cursor.js';

describe('CursorCodec', () => {
  const secret = 'cursor-test-secret-0123456789abcdef';
  const codec = CursorCodec.forSecret(secret);
  const payload = { binding: 'b1', values: ['2026-01-01', 'id-1'] };
  const macKey = Buffer.from(hkdfSync('sha256', secret, 'core-cursor-salt', 'core/search-cursor/hmac-sha256', 32));
  const aesKey = Buffer.from(hkdfSync('sha256', secret, 'core-cursor-salt', 'core/search-cursor/aes-256-gcm', 32));
  const bytesOf = (cursor: string): Buffer => Buffer.from(cursor, 'base64url');
  const withByte = (cursor: string, index: number, value: number): string => {
    const bytes = bytesOf(cursor);
    bytes[index] = value;
    return bytes.toString('base64url');
  };

  describe('signed (the default)', () => {
    const cursor = codec.encode(payload);

    it('opens to the payload: after the version byte and a 16-byte MAC, the binding and the values as a JSON array', () => {
      expect(codec.decode(cursor, 'cursor')).toEqual(payload);
      const bytes = bytesOf(cursor);
      expect(bytes[0]).toBe(3);
      expect(bytes[17]).toBe(2);
      expect(bytes.subarray(18, 20).toString('latin1')).toBe('b1');
      expect(JSON.parse(bytes.subarray(20).toString('utf8'))).toEqual(['2026-01-01', 'id-1']);
    });

    it('carries HMAC-SHA256 of the version byte and the body, under a key derived from the secret', () => {
      const bytes = bytesOf(cursor);
      const mac = createHmac('sha256', macKey).update(bytes.subarray(0, 1)).update(bytes.subarray(17)).digest();
      expect(bytes.subarray(1, 17).equals(mac.subarray(0, 16))).toBe(true);
    });

    it('signs long values as it signs short ones, and short ones after them', () => {
      // Sort values of a few KB (a long text column) outgrow the MAC's reused input buffer.
      const long = { binding: 'b1', values: ['é'.repeat(3000), 'id-1'] };
      for (const p of [long, payload, long]) {
        const bytes = bytesOf(codec.encode(p));
        const mac = createHmac('sha256', macKey).update(bytes.subarray(0, 1)).update(bytes.subarray(17)).digest();
        expect(bytes.subarray(1, 17).equals(mac.subarray(0, 16))).toBe(true);
        expect(codec.decode(codec.encode(p), 'cursor')).toEqual(p);
      }
      expect(codec.decode(cursor, 'cursor')).toEqual(payload);
    });

    it('keeps a page request short: a binding and one uuid give a cursor of under 100 characters', () => {
      const uuid = '041c5a6f-baef-40f7-a35b-48af75d12abe';
      const short = codec.encode({ binding: 'x'.repeat(16), values: [uuid] });
      expect(short.length).toBeLessThan(100);
      expect(codec.decode(short, 'cursor')).toEqual({ binding: 'x'.repeat(16), values: [uuid] });
    });

    it('refuses to issue a cursor whose binding is not short ASCII', () => {
      expect(() => codec.encode({ binding: 'é', values: [] })).toThrow(/ASCII/);
      expect(() => codec.encode({ binding: 'x'.repeat(256), values: [] })).toThrow(/ASCII/);
    });

    it('refuses any changed byte: version, MAC or payload', () => {
      const length = bytesOf(cursor).length;
      for (const index of [0, 1, 8, 16, 17, 30, length - 1]) {
        const bytes = bytesOf(cursor);
        const changed = withByte(cursor, index, bytes[index]! ^ 0x01);
        expect(() => codec.decode(changed, 'cursor'), `byte ${index}`).toThrow(/not valid/);
      }
      expect(() =>
        codec.decode(
          bytesOf(cursor)
            .subarray(0, length - 1)
            .toString('base64url'),
          'cursor',
        ),
      ).toThrow(/not valid/);
    });

    it('refuses every other spelling of the same bytes', () => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      // Cursors of each length mod 4 that bytes can have: 0, 2 and 3 (1, 2 or no unused low bits).
      const cursors = [0, 1, 2].map((extra) => codec.encode({ binding: 'b1', values: ['x'.repeat(extra)] }));
      expect(new Set(cursors.map((c) => c.length % 4))).toEqual(new Set([0, 2, 3]));
      for (const good of cursors) {
        expect(codec.decode(good, 'cursor').binding).toBe('b1');
        const spellings = [
          `${good}=`,
          `${good}==`,
          ` ${good}`,
          `${good.slice(0, 5)}!${good.slice(5)}`,
          `${good.slice(0, 5)}+${good.slice(6)}`,
          `${good}A`,
        ];
        // A last character that differs only in bits the decoder ignores gives the same bytes.
        const last = alphabet.indexOf(good.at(-1)!);
        for (let bits = 1; bits < 16; bits++) {
          const other = alphabet[last ^ bits]!;
          const spelled = good.slice(0, -1) + other;
          if (Buffer.from(spelled, 'base64url').equals(bytesOf(good))) spellings.push(spelled);
        }
        if (good.length % 4 !== 0) expect(spellings.length).toBeGreaterThan(6);
        for (const spelled of spellings)
          expect(() => codec.decode(spelled, 'cursor'), JSON.stringify(spelled)).toThrow(/not valid/);
      }
    });

    it('accepts no other string one character away: every substitution, insertion and deletion is refused', () => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const strays = '=+/ .%\n\u00e9\u0100';
      for (const good of [
        cursor,
        codec.encode({ binding: 'b1', values: ['x'] }),
        codec.encode({ binding: 'b1', values: ['xy'] }),
      ]) {
        const near = new Set<string>();
        for (let i = 0; i <= good.length; i++) {
          for (const char of alphabet + strays) {
            if (i < good.length) near.add(good.slice(0, i) + char + good.slice(i + 1));
            near.add(good.slice(0, i) + char + good.slice(i));
          }
          if (i < good.length) near.add(good.slice(0, i) + good.slice(i + 1));
        }
        near.delete(good);
        let refused = 0;
        for (const token of near) {
          expect(() => codec.decode(token, 'cursor'), JSON.stringify(token)).toThrow(/not valid/);
          refused++;
        }
        expect(refused).toBeGreaterThan(good.length * 70);
        expect(codec.decode(good, 'cursor').binding).toBe('b1');
      }
    });

    it('refuses a cursor signed with another secret', () => {
      const other = CursorCodec.forSecret('another-secret-0123456789abcdefghij').encode(payload);
      expect(() => codec.decode(other, 'cursor')).toThrow(/not valid/);
    });
  });

  describe('sealed', () => {
    it('hides the payload, and never repeats an IV: the same payload sealed 1,000 times gives 1,000 different cursors that all open', () => {
      // Values of ten characters or more: a shorter one (`b1`) turns up by chance in random
      // ciphertext often enough to fail a run now and then, and would prove nothing when it did.
      const secretPayload = { binding: 'binding-one', values: ['2026-01-01', 'record-id-1'] };
      const cursors = Array.from({ length: 1000 }, () => codec.encode(secretPayload, { seal: true }));
      expect(new Set(cursors).size).toBe(1000);
      // The IV is bytes 1..12 of the decoded token.
      const ivs = cursors.map((c) => bytesOf(c).subarray(1, 13).toString('hex'));
      expect(new Set(ivs).size).toBe(1000);
      for (const cursor of cursors.slice(0, 20)) {
        expect(codec.decode(cursor, 'cursor')).toEqual(secretPayload);
        expect(bytesOf(cursor)[0]).toBe(4);
        for (const hidden of ['binding-one', '2026-01-01', 'record-id-1'])
          expect(bytesOf(cursor).toString('latin1')).not.toContain(hidden);
      }
    });

    it('refuses a cursor sealed with another secret, and a sealed cursor relabelled as signed', () => {
      const sealed = codec.encode(payload, { seal: true });
      expect(() =>
        codec.decode(
          CursorCodec.forSecret('another-secret-0123456789abcdefghij').encode(payload, { seal: true }),
          'cursor',
        ),
      ).toThrow(/not valid/);
      for (const version of [1, 2, 3])
        expect(() => codec.decode(withByte(sealed, 0, version), 'cursor'), `as ${version}`).toThrow(/not valid/);
      for (const version of [1, 2, 4])
        expect(() => codec.decode(withByte(codec.encode(payload), 0, version), 'cursor'), `as ${version}`).toThrow(
          /not valid/,
        );
    });
  });

  // Forms 1 and 2 carried `{ m, b, k }` JSON and a 22-character binding; cursors issued before an upgrade still page.
  describe('earlier forms', () => {
    const binding = 'abcdefghijklmnopqrstuv';
    const json = Buffer.from(JSON.stringify({ m: 'Task', b: binding, k: ['2026-01-01', 'id-1'] }));
    const opened = { binding: binding.slice(0, 16), values: ['2026-01-01', 'id-1'] };

    it("opens a signed cursor of form 2, its binding cut to today's 16 characters", () => {
      const mac = createHmac('sha256', macKey)
        .update(Buffer.from([2]))
        .update(json)
        .digest()
        .subarray(0, 16);
      const cursor = Buffer.concat([Buffer.from([2]), mac, json]).toString('base64url');
      expect(codec.decode(cursor, 'cursor')).toEqual(opened);
      expect(() => codec.decode(withByte(cursor, 30, bytesOf(cursor)[30]! ^ 1), 'cursor')).toThrow(/not valid/);
    });

    it('opens a sealed cursor of form 1', () => {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', aesKey, iv).setAAD(Buffer.from('core/search-cursor/v1'));
      const body = Buffer.concat([cipher.update(json), cipher.final()]);
      const cursor = Buffer.concat([Buffer.from([1]), iv, cipher.getAuthTag(), body]).toString('base64url');
      expect(codec.decode(cursor, 'cursor')).toEqual(opened);
      expect(() => codec.decode(withByte(cursor, 0, 4), 'cursor')).toThrow(/not valid/);
    });
  });
});
