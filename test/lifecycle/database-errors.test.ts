/**
 * Which database failures answer 503 with `Retry-After` (the client may retry) rather than 500, in
 * every wrapping they reach the error handler in: the drivers' own errors (Core's read path), MikroORM's
 * `DriverException` (writes), and either as the `cause` of another error. Through `toErrorResponse`,
 * the error handler's mapping; the real failures are produced in `database-limits.test.ts`.
 */
import { DriverException } from '@mikro-orm/core';
import { describe, expect, it } from 'vitest';
import { toErrorResponse } from '@core/runtime';

function driverError(message: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), fields);
}

function knexTimeout(): Error {
  const error = new Error(
    'Knex: Timeout acquiring a connection. The pool is probably full. Are you missing a .transacting(trx) call?',
  );
  error.name = 'KnexTimeoutError';
  return error;
}

describe('database failures in the error envelope', () => {
  it.each([
    ['knex pool timeout', knexTimeout(), 'database_busy', '1'],
    ['knex pool timeout wrapped by MikroORM', new DriverException(knexTimeout()), 'database_busy', '1'],
    ['pg pool timeout', driverError('timeout exceeded when trying to connect'), 'database_busy', '1'],
    ['pg connection timeout', driverError('Connection terminated due to connection timeout'), 'database_busy', '1'],
    [
      'statement timeout',
      driverError('canceling statement due to statement timeout', { code: '57014', severity: 'ERROR' }),
      'database_timeout',
      '1',
    ],
    [
      'statement timeout wrapped by MikroORM',
      new DriverException(driverError('canceling statement due to statement timeout', { code: '57014' })),
      'database_timeout',
      '1',
    ],
    [
      'server refusing connections',
      driverError('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' }),
      'database_unreachable',
      '5',
    ],
    [
      'server shutting down',
      driverError('terminating connection due to administrator command', { code: '57P01' }),
      'database_unreachable',
      '5',
    ],
    ['connection lost', driverError('Connection terminated unexpectedly'), 'database_unreachable', '5'],
    [
      'as the cause of another error',
      new Error('loading the page failed', { cause: knexTimeout() }),
      'database_busy',
      '1',
    ],
    ['SQLite file locked', driverError('database is locked', { code: 'SQLITE_BUSY' }), 'database_busy', '1'],
    ['deadlock', driverError('deadlock detected', { code: '40P01' }), 'database_conflict', '1'],
    [
      'serialization failure wrapped by MikroORM',
      new DriverException(driverError('could not serialize access due to concurrent update', { code: '40001' })),
      'database_conflict',
      '1',
    ],
    ['lock not available', driverError('could not obtain lock on row', { code: '55P03' }), 'database_conflict', '1'],
  ])('%s: 503 with Retry-After', (_, error, reason, retryAfter) => {
    const response = toErrorResponse(error);
    expect(response.status).toBe(503);
    expect(response.headers).toEqual({ 'retry-after': retryAfter });
    expect(response.body).toMatchObject({
      success: false,
      data: null,
      error: { code: 'SERVICE_UNAVAILABLE', details: [{ path: '', reason }] },
    });
    // Nothing of the driver's message reaches the client.
    expect(JSON.stringify(response.body)).not.toMatch(/knex|ECONNREFUSED|5432|canceling/i);
  });

  it.each([
    ['a syntax error', driverError('syntax error at or near "selec"', { code: '42601' })],
    ['an unknown table', new DriverException(driverError('relation "nope" does not exist', { code: '42P01' }))],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ])('%s stays a 500', (_, error) => {
    expect(toErrorResponse(error).status).toBe(500);
  });
});
