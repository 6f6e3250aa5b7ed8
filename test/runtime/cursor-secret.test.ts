/**
 * Which key signs pagination cursors when `dbManager.initApp` is not given one (as in every
 * `src/main.ts` generated so far): the `SECRET_KEY` setting, so every process with the same settings
 * accepts the others' cursors (test/e2e/cursor-restart.test.ts proves it with real servers). Only in
 * development without a `SECRET_KEY` is it a random key of the process, with a warning; outside
 * development the database refuses to open without one, as the settings do.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SettingsError, type Logger } from '@core/runtime';
import { DatabaseManager } from '../../runtime/src/db/database.js';

const SECRET = 's'.repeat(40);

function recorder(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (_obj, msg) => void warnings.push(String(msg)) };
}

async function secretOf(options: { cursorSecret?: string; logger?: Logger } = {}): Promise<string> {
  const manager = new DatabaseManager();
  try {
    return (await manager.initApp('sqlite::memory:', false, { entities: [], ...options })).cursorSecret;
  } finally {
    await manager.close();
  }
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the cursor key of initApp without a cursorSecret', () => {
  it('is SECRET_KEY, whatever the environment, so every instance agrees', async () => {
    for (const environment of ['production', 'development']) {
      vi.stubEnv('ENVIRONMENT', environment);
      vi.stubEnv('SECRET_KEY', SECRET);
      const logger = recorder();
      expect(await secretOf({ logger })).toBe(SECRET);
      expect(await secretOf()).toBe(SECRET);
      expect(logger.warnings).toEqual([]);
    }
  });

  it('an explicit cursorSecret wins', async () => {
    vi.stubEnv('SECRET_KEY', SECRET);
    expect(await secretOf({ cursorSecret: 'mine' })).toBe('mine');
  });

  it('in development without SECRET_KEY: a random key of this process (the same for every database it opens), and a warning', async () => {
    vi.stubEnv('ENVIRONMENT', 'development');
    vi.stubEnv('SECRET_KEY', '');
    const logger = recorder();
    const first = await secretOf({ logger });
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await secretOf({ logger })).toBe(first);
    expect(logger.warnings).toHaveLength(2);
    expect(logger.warnings[0]).toMatch(/SECRET_KEY is not set: pagination cursors .* stop working on restart/);
  });

  it('outside development without SECRET_KEY, or with a short one: the database does not open', async () => {
    vi.stubEnv('ENVIRONMENT', 'production');
    vi.stubEnv('SECRET_KEY', '');
    await expect(secretOf()).rejects.toThrow(SettingsError);
    await expect(secretOf()).rejects.toThrow(/SECRET_KEY is not set \(ENVIRONMENT=production\)/);
    vi.stubEnv('SECRET_KEY', 'short');
    await expect(secretOf()).rejects.toThrow(/SECRET_KEY is too short/);
    // An explicit key needs no setting.
    expect(await secretOf({ cursorSecret: 'given' })).toBe('given');
  });
});
