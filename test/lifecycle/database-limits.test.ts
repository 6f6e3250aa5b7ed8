/**
 * A busy or slow PostgreSQL answers 503 with `Retry-After` within a bound, never a hang: both of the
 * app's pools (Core's read pool and the ORM's pool for writes) give up after
 * `DATABASE_POOL_TIMEOUT_MS`, and `DATABASE_STATEMENT_TIMEOUT_MS` cancels a statement on either.
 * The fixture app runs as a real process with small limits. (SQLite has one connection and reads
 * without waiting for it, so these limits are PostgreSQL's.)
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describePerDatabase } from '../helpers/databases.js';
import { ADMIN, get, killAll, prepareDatabase, sleep, startInstance, type Instance, type Response } from './helpers.js';

const LIMITS = { DATABASE_POOL_MAX: '2', DATABASE_POOL_TIMEOUT_MS: '500', DATABASE_STATEMENT_TIMEOUT_MS: '3000' };

describePerDatabase('database limits', ({ name, url }) => {
  if (name !== 'postgresql') {
    it.skip('apply to PostgreSQL only', () => undefined);
    return;
  }
  let app: Instance;

  beforeAll(async () => {
    await prepareDatabase(url());
    app = await startInstance({ DATABASE_URL: url(), ...LIMITS });
  }, 120_000);
  afterEach(async () => {
    // Whatever a test did, the app serves again once the database is free.
    expect((await get(app.port, '/ready')).status).toBe(200);
  });
  afterAll(async () => {
    app?.signal('SIGTERM');
    await app?.exited;
    killAll();
  });

  /** The 503 envelope for a database that is busy or slow, with its `Retry-After`. */
  function expectUnavailable(res: Response, reason: string): void {
    expect(res.status, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toEqual({
      success: false,
      message: expect.any(String),
      data: null,
      error: { code: 'SERVICE_UNAVAILABLE', details: [{ path: '', message: expect.any(String), reason }] },
    });
  }

  async function timed(request: Promise<Response>): Promise<{ res: Response; ms: number }> {
    const started = Date.now();
    const res = await request;
    return { res, ms: Date.now() - started };
  }

  it('a statement longer than DATABASE_STATEMENT_TIMEOUT_MS is cancelled: 503, on reads and on writes', async () => {
    for (const path of ['/_probe/sleep-read?s=30', '/_probe/sleep-write?s=30']) {
      const { res, ms } = await timed(get(app.port, path));
      expectUnavailable(res, 'database_timeout');
      expect(ms).toBeGreaterThanOrEqual(2900);
      expect(ms).toBeLessThan(8000);
    }
  }, 60_000);

  it('every connection of the read pool busy: a read answers 503 after DATABASE_POOL_TIMEOUT_MS, long before one is free', async () => {
    const holders = [get(app.port, '/_probe/sleep-read?s=2.5'), get(app.port, '/_probe/sleep-read?s=2.5')];
    await sleep(400);
    const { res, ms } = await timed(get(app.port, '/tasks/', { headers: ADMIN }));
    expectUnavailable(res, 'database_busy');
    expect(ms).toBeGreaterThanOrEqual(450);
    expect(ms).toBeLessThan(2000);
    expect((await Promise.all(holders)).map((held) => held.status)).toEqual([200, 200]);
  }, 60_000);

  it("every connection of the ORM's pool busy: a write answers 503 after DATABASE_POOL_TIMEOUT_MS, long before one is free", async () => {
    const holders = [get(app.port, '/_probe/sleep-write?s=2.5'), get(app.port, '/_probe/sleep-write?s=2.5')];
    await sleep(400);
    const create = get(app.port, '/tasks/', {
      method: 'POST',
      headers: { ...ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'waits' }),
    });
    const { res, ms } = await timed(create);
    expectUnavailable(res, 'database_busy');
    expect(ms).toBeGreaterThanOrEqual(450);
    expect(ms).toBeLessThan(2000);
    expect((await Promise.all(holders)).map((held) => held.status)).toEqual([200, 200]);
  }, 60_000);
});
