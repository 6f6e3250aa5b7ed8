/**
 * The pieces of optimistic concurrency below HTTP: the keyed tag (checked against `createHash`), the
 * `If-Match` grammar, the version option of `defineModel`, and SQLite under a second process: a unit
 * holds the write lock from its first statement (nothing commits between its check and its write), and
 * a database still busy after the timeout answers 503, never 500.
 */
import { createHash, hkdfSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { p } from '@mikro-orm/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  Base,
  BaseRepository,
  BaseService,
  defineModel,
  PreconditionFailedError,
  toErrorResponse,
  type Database,
} from '@core/runtime';
import { DatabaseManager } from '../../runtime/src/db/database.js';
import { canonicalValue, ETagSigner, parseIfMatch } from '../../runtime/src/data/etag.js';
import { describeEachDatabase } from '../helpers/databases.js';

class Counter extends Base {
  static override readonly tableName = 'etag_counters';
  declare id: number;
  declare name: string;
  declare version: number;
}
const CounterSchema = defineModel(
  Counter,
  { id: p.integer().primary().autoincrement(), name: p.string().length(100), version: p.integer().default(1) },
  { version: 'version' },
);

class Note extends Base {
  static override readonly tableName = 'etag_notes';
  declare id: number;
  declare name: string;
}
const NoteSchema = defineModel(Note, { id: p.integer().primary().autoincrement(), name: p.string().length(100) });

describe('ETagSigner', () => {
  it('is SHA-256 of a key derived from the secret, a NUL and the message; the tag is its first 22 base64url characters, quoted', () => {
    const secret = 'etag-test-secret-0123456789abcdef';
    const key = Buffer.from(hkdfSync('sha256', secret, 'core-etag-salt', 'core/etag/sha256-keyed', 32));
    const signer = ETagSigner.forSecret(secret);
    for (const message of ['', 'v\u0000tasks\u0000"a"\u0000#1', 'é✓'.repeat(300)]) {
      const expected = createHash('sha256')
        .update(key.toString('base64url'))
        .update(Buffer.from([0]))
        .update(message, 'utf8')
        .digest('base64url');
      expect(signer.mac(message)).toBe(expected);
      expect(signer.tag(message)).toBe(`"${expected.slice(0, 22)}"`);
      // Keyed: not the digest of the message alone.
      expect(signer.mac(message)).not.toBe(createHash('sha256').update(message, 'utf8').digest('base64url'));
    }
  });

  it('gives other tags under another secret: nobody without the key can compute one', () => {
    const message = 's\u0000tasks\u0000"b2f1…"\u0000"alice@example.com"';
    expect(ETagSigner.forSecret('one-secret-0123456789abcdef0123456').tag(message)).not.toBe(
      ETagSigner.forSecret('another-secret-0123456789abcdef01').tag(message),
    );
  });
});

describe('canonicalValue', () => {
  // A record's tag hashes its columns' forms joined with NUL: two different states must never give
  // one message, nor one UTF-8 text (what the hash reads).
  const tagOf = (state: readonly unknown[]): string =>
    ETagSigner.forSecret('canonical-test').tag(`s\u0000t${state.map((v) => `\u0000${canonicalValue(v)}`).join('')}`);

  it('tells every state apart: text holding NUL or another form, other types, a lone surrogate', () => {
    const states: unknown[][] = [
      ['x\u0000S1:y', 'z'],
      ['x', 'y\u0000S1:z'],
      ['x', 'y'],
      ['x\u0000', 'y'],
      ['', 'x'],
      [null, 'x'],
      ['N', 'x'],
      [1, 'x'],
      ['1', 'x'],
      ['#1', 'x'],
      [true, 'x'],
      ['T', 'x'],
      ['\uD800', 'x'],
      ['\uFFFD', 'x'],
      ['"\\ud800"', 'x'],
      ['é✓', 'x'],
      [new Date(0), 'x'],
      ['@0', 'x'],
      [{ a: 1 }, 'x'],
      ['J{"a":1}', 'x'],
    ];
    const tags = states.map(tagOf);
    expect(new Set(tags).size).toBe(states.length);
    // …and equal states give equal tags.
    expect(tagOf(['x\u0000S1:y', 'z'])).toBe(tags[0]);
    expect(tagOf(['\uD800', 'x'])).toBe(tags[12]);
  });
});

describe('parseIfMatch', () => {
  it.each([
    ['*', { any: true, tags: [], malformed: false }],
    [' * ', { any: true, tags: [], malformed: false }],
    ['"abc"', { any: false, tags: ['"abc"'], malformed: false }],
    ['"a", "b",,"c" ', { any: false, tags: ['"a"', '"b"', '"c"'], malformed: false }],
    ['""', { any: false, tags: ['""'], malformed: false }],
    // Weak tags never match under strong comparison: dropped, the header stays valid.
    ['W/"a", "b"', { any: false, tags: ['"b"'], malformed: false }],
    ['W/"a"', { any: false, tags: [], malformed: false }],
  ])('%s', (header, expected) => {
    expect(parseIfMatch(header)).toEqual(expected);
  });

  it.each(['', ' ', ',', 'abc', '"abc', 'abc"', '"a" "b"', '"a"x', '*, "a"', '"a", *', 'w/"a"', '"a\u0001"', '"a b"'])(
    '%j is malformed',
    (header) => {
      expect(parseIfMatch(header).malformed).toBe(true);
    },
  );

  it('joins repeated headers into one list', () => {
    expect(parseIfMatch(['"a"', '"b"'])).toEqual({ any: false, tags: ['"a"', '"b"'], malformed: false });
  });
});

describe('defineModel({ version })', () => {
  it('refuses a version property the model does not have', () => {
    class Broken extends Base {
      static override readonly tableName = 'broken';
    }
    expect(() => defineModel(Broken, { id: p.integer().primary() }, { version: 'version' as never })).toThrow(
      /version property "version" is not among its properties/,
    );
  });
});

describeEachDatabase('repository ETags and versions', { entities: [CounterSchema, NoteSchema] }, (suite) => {
  const counters = () => new BaseRepository({ model: Counter, db: suite.db });
  const notes = () => new BaseRepository({ model: Note, db: suite.db });

  it('a versioned record: 1 on create, +1 per update (never from input), a new tag each time', async () => {
    const repo = counters();
    const created = await repo.create({ name: 'c', version: 50 });
    expect(created.version).toBe(1);
    const tag1 = await repo.etag(created.id);
    const updated = await repo.update(created.id, { name: 'd', version: 9 }, { replace: true });
    expect(updated.version).toBe(2);
    const tag2 = await repo.etag(created.id);
    expect(tag2).not.toBe(tag1);
    await expect(repo.update(created.id, { name: 'e' }, { ifMatch: tag1! })).rejects.toBeInstanceOf(
      PreconditionFailedError,
    );
    expect((await repo.get(created.id))?.version).toBe(2);
    expect(await repo.etag(999_999)).toBeNull();
  });

  it('a record without a version: the tag follows the stored row, and returns when the row does', async () => {
    const repo = notes();
    const note = await repo.create({ name: 'same' });
    const first = await repo.etag(note.id);
    await repo.update(note.id, { name: 'other' });
    expect(await repo.etag(note.id)).not.toBe(first);
    await repo.update(note.id, { name: 'same' });
    expect(await repo.etag(note.id)).toBe(first);
  });
});

describe('SQLite with a second process on the same file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'core-etag-'));
  const file = join(dir, 'app.db');
  const manager = new DatabaseManager();
  let db: Database;
  // Another process's connection: better-sqlite3 straight, as a second server would have it.
  const BetterSqlite = createRequire(import.meta.url)('better-sqlite3') as new (
    file: string,
    options?: { timeout?: number },
  ) => {
    prepare(sql: string): { run(...params: unknown[]): unknown };
    exec(sql: string): unknown;
    close(): unknown;
  };
  let other: InstanceType<typeof BetterSqlite>;

  beforeAll(async () => {
    // Core's own connection set-up, plus a short busy timeout to keep the test quick (the default is 5 s).
    const afterCreate = (
      conn: { pragma(source: string): unknown },
      done: (err: Error | null, conn: unknown) => void,
    ) => {
      conn.pragma('journal_mode = WAL');
      conn.pragma('foreign_keys = ON');
      conn.pragma('busy_timeout = 100');
      done(null, conn);
    };
    db = await manager.initApp(`sqlite:${file}`, false, {
      entities: [CounterSchema, NoteSchema],
      cursorSecret: 'test-cursor-secret-0123456789abcdef',
      orm: { pool: { afterCreate } as never },
    });
    await db.resetSchema();
    other = new BetterSqlite(file, { timeout: 0 });
  });

  afterAll(async () => {
    other?.close();
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    other.exec('delete from etag_notes; delete from etag_counters');
  });

  it("holds the write lock from the unit's first statement: another process cannot commit between the If-Match check and the write", async () => {
    const service = new BaseService({ model: Note, repository: notes() });
    const note = await service.create({ name: 'ours?' });
    const tag = (await service.etag(note.id))!;
    let theirs: string | undefined;
    const off = db.onQuery((q) => {
      // Right before our UPDATE, after our check read the row: the other process tries to write.
      if (theirs !== undefined || !/^update/i.test(q.sql)) return;
      try {
        other.prepare('update etag_notes set name = ? where id = ?').run('theirs', note.id);
        theirs = 'committed';
      } catch (err) {
        theirs = (err as { code?: string }).code;
      }
    });
    try {
      await service.update(note.id, { name: 'ours' }, { ifMatch: tag });
    } finally {
      off();
    }
    expect(theirs).toBe('SQLITE_BUSY');
    expect((await service.get(note.id)).name).toBe('ours');
  });

  it('a database still locked by another process after the busy timeout answers 503 with Retry-After, and nothing is written', async () => {
    const service = new BaseService({ model: Counter, repository: counters() });
    const counter = await service.create({ name: 'locked' });
    const tag = (await service.etag(counter.id))!;
    other.exec('begin immediate');
    try {
      for (const write of [
        () => service.update(counter.id, { name: 'x' }, { ifMatch: tag }),
        () => service.update(counter.id, { name: 'x' }),
        () => service.delete(counter.id),
      ]) {
        const error = await write().then(
          () => undefined,
          (err: unknown) => err,
        );
        // What the error handler answers for it.
        expect(toErrorResponse(error)).toMatchObject({
          status: 503,
          body: { error: { code: 'SERVICE_UNAVAILABLE' } },
          headers: { 'retry-after': '1' },
        });
      }
    } finally {
      other.exec('rollback');
    }
    expect(await service.get(counter.id)).toMatchObject({ name: 'locked', version: 1 });
    expect((await service.update(counter.id, { name: 'free' }, { ifMatch: tag })).version).toBe(2);
  });

  function counters(): BaseRepository<Counter> {
    return new BaseRepository({ model: Counter, db });
  }

  function notes(): BaseRepository<Note> {
    return new BaseRepository({ model: Note, db });
  }
});
