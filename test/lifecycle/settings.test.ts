/**
 * The lifecycle's settings as `loadSettings` reads them: `SHUTDOWN_*` and the database limits
 * (`DATABASE_POOL_*`, `DATABASE_STATEMENT_TIMEOUT_MS`), their defaults, and the one-line errors.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadSettings, SettingsError } from '@core/runtime';
import { tempDir } from '../helpers/cli.js';

const dir = tempDir('core-lifecycle-settings-');
afterAll(() => dir.remove());
const SECRET = 's'.repeat(40);
const load = (env: Record<string, string>) =>
  loadSettings({ cwd: dir.path, env: { SECRET_KEY: SECRET, ...env }, logger: { warn: () => undefined } });

describe('lifecycle settings', () => {
  it('default: a short drain delay outside development, none in development; a 10 s grace; bounded database waits', () => {
    expect(load({ ENVIRONMENT: 'production' })).toMatchObject({
      shutdown: { delayMs: 2000, graceMs: 10_000 },
      database: { poolMax: 10, poolTimeoutMs: 5000, statementTimeoutMs: 30_000 },
    });
    expect(load({ ENVIRONMENT: 'development' }).shutdown).toEqual({ delayMs: 0, graceMs: 10_000 });
  });

  it('reads each from the environment', () => {
    const settings = load({
      ENVIRONMENT: 'production',
      SHUTDOWN_DELAY_MS: '0',
      SHUTDOWN_GRACE_MS: '25000',
      DATABASE_POOL_MAX: '4',
      DATABASE_POOL_TIMEOUT_MS: ' 750 ',
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
    });
    expect(settings.shutdown).toEqual({ delayMs: 0, graceMs: 25_000 });
    expect(settings.database).toEqual({ poolMax: 4, poolTimeoutMs: 750, statementTimeoutMs: 0 });
  });

  it.each([
    [
      'SHUTDOWN_DELAY_MS',
      '-1',
      'SHUTDOWN_DELAY_MS must be a whole number from 0 to 86400000 (default 2000); received "-1".',
    ],
    [
      'SHUTDOWN_GRACE_MS',
      '10s',
      'SHUTDOWN_GRACE_MS must be a whole number from 0 to 86400000 (default 10000); received "10s".',
    ],
    ['DATABASE_POOL_MAX', '0', 'DATABASE_POOL_MAX must be a whole number from 1 to 1000 (default 10); received "0".'],
    [
      'DATABASE_POOL_TIMEOUT_MS',
      '0',
      'DATABASE_POOL_TIMEOUT_MS must be a whole number from 1 to 86400000 (default 5000); received "0".',
    ],
    [
      'DATABASE_STATEMENT_TIMEOUT_MS',
      '1.5',
      'DATABASE_STATEMENT_TIMEOUT_MS must be a whole number from 0 to 86400000 (default 30000); received "1.5".',
    ],
  ])('%s=%s is refused with a message that says what to set', (name, value, message) => {
    expect(() => load({ ENVIRONMENT: 'production', [name]: value })).toThrow(new SettingsError(message));
  });
});
