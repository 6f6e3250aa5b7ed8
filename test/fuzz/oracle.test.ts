/**
 * The fuzzer is only as good as its oracle: here the answers of a healthy app are broken on their
 * way to the oracle — a server error, an envelope without details, a wrong status, a value that is
 * not what was written — and each kind must be reported. The oracle does not depend on the
 * database, so one (SQLite) is enough.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fuzzed, HttpResponse } from './harness.js';
import { runFuzz, SEED, startFuzzed } from './runner.js';
import { TASKS_TARGET } from './targets.js';

describe('the fuzzer’s oracle', () => {
  let fz: Fuzzed;
  beforeAll(async () => {
    fz = await startFuzzed(TASKS_TARGET, 'sqlite', 'sqlite::memory:');
  });
  afterAll(async () => {
    await fz?.close();
  });

  it('reports server errors, broken envelopes, wrong statuses and values that were not written', async () => {
    let n = 0;
    type Body = {
      success: boolean;
      data: Record<string, unknown> | null;
      error?: { code: string; details: unknown[] };
    };
    const withBody = (res: HttpResponse, edit: (body: Body) => void, status = res.status): HttpResponse => {
      const body = JSON.parse(res.text) as Body;
      edit(body);
      return { ...res, status, text: JSON.stringify(body) };
    };
    fz.tamper = (request, res) => {
      n += 1;
      if (request.method === 'GET' && res.status === 200 && n % 5 === 0) {
        return withBody(
          res,
          (b) =>
            Object.assign(b, {
              success: false,
              data: null,
              error: { code: 'INTERNAL_ERROR', details: [{ path: '', message: 'x' }] },
            }),
          500,
        );
      }
      if (res.status === 404) return withBody(res, (b) => void (b.error!.details = []));
      if (res.status === 422 && n % 2 === 0) return withBody(res, (b) => void (b.error!.code = 'BAD_REQUEST'), 400);
      if (res.status === 201) return withBody(res, (b) => void (b.data!.title = `${String(b.data!.title)}!`));
      return res;
    };
    const log = await runFuzz(fz, 200, SEED);
    fz.tamper = undefined;
    const rules = new Set([...log.groups.keys()].map((key) => key.split(' | ')[0]));
    expect([...rules]).toEqual(expect.arrayContaining(['5xx', 'envelope', 'status', 'verify']));
    const report = log.report();
    expect(report).toMatch(/data\.title: expected .*, got .*!/);
    expect(report).toMatch(/not the error envelope \(\/error\/details/);
  });
});
