import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { SettingsError, loadSettings, type Settings } from '@core/runtime';

const root = mkdtempSync(join(tmpdir(), 'core-settings-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
/** A fresh project folder, optionally with a `.env`. */
function project(dotenv?: string): string {
  const dir = join(root, `proj-${++counter}`);
  mkdirSync(dir);
  if (dotenv !== undefined) writeFileSync(join(dir, '.env'), dotenv);
  return dir;
}

const KEY = 'k'.repeat(64);
const recorder = () => {
  const warnings: string[] = [];
  return { warnings, logger: { warn: (_obj: unknown, msg?: string) => void warnings.push(msg ?? '') } };
};

describe('loadSettings: sources and defaults', () => {
  it('defaults in development, with a warned random key', () => {
    const cwd = project();
    const { warnings, logger } = recorder();
    const s = loadSettings({ cwd, env: {}, logger });
    expect(s).toMatchObject({
      databaseUrl: 'sqlite:./dev.db',
      environment: 'development',
      isDevelopment: true,
      projectName: basename(cwd),
      host: '127.0.0.1',
      port: 8000,
      logLevel: undefined,
      secretKeyIsEphemeral: true,
    });
    expect(s.secretKey).toMatch(/^[0-9a-f]{64}$/);
    expect(warnings).toEqual([expect.stringContaining('SECRET_KEY is not set')]);
    // One random key per process, so every part of the app agrees on it.
    expect(loadSettings({ cwd, env: {}, logger }).secretKey).toBe(s.secretKey);
  });

  it('reads .env (util.parseEnv: quotes, comments, export-less lines)', () => {
    const cwd = project(
      [
        '# comment',
        'DATABASE_URL="postgresql://user:pass@localhost:5432/app"',
        "PROJECT_NAME='My API'",
        `SECRET_KEY=${KEY} # trailing comment`,
        'ENVIRONMENT=production',
        'HOST=0.0.0.0',
        'PORT=9000',
        'LOG_LEVEL=debug',
      ].join('\n'),
    );
    const s = loadSettings({ cwd, env: {} });
    expect(s).toMatchObject({
      databaseUrl: 'postgresql://user:pass@localhost:5432/app',
      projectName: 'My API',
      secretKey: KEY,
      environment: 'production',
      isDevelopment: false,
      secretKeyIsEphemeral: false,
      host: '0.0.0.0',
      port: 9000,
      logLevel: 'debug',
    });
  });

  it.each([
    { name: 'real environment wins over .env', env: { PORT: '7000' }, port: 7000 },
    { name: 'an empty variable falls back to .env', env: { PORT: '' }, port: 9000 },
    { name: '.env used when the variable is unset', env: {}, port: 9000 },
  ])('$name', ({ env, port }) => {
    const cwd = project('PORT=9000\n');
    expect(loadSettings({ cwd, env, logger: recorder().logger }).port).toBe(port);
  });

  it('defaults to process.env and process.cwd()', () => {
    const s = loadSettings({ logger: recorder().logger });
    expect(typeof s.port).toBe('number');
    expect(s.projectName.length).toBeGreaterThan(0);
  });
});

describe('loadSettings: validation (one-line messages that never contain the secret)', () => {
  const prod = { ENVIRONMENT: 'production', SECRET_KEY: KEY };
  it.each([
    {
      name: 'PORT not a number',
      env: { ...prod, PORT: 'eighty' },
      error: /^PORT must be an integer from 0 to 65535; received "eighty"\.$/,
    },
    { name: 'PORT not an integer', env: { ...prod, PORT: '80.5' }, error: /PORT must be an integer/ },
    { name: 'PORT negative', env: { ...prod, PORT: '-1' }, error: /PORT must be an integer/ },
    { name: 'PORT too large', env: { ...prod, PORT: '65536' }, error: /PORT must be an integer/ },
    {
      name: 'LOG_LEVEL unknown',
      env: { ...prod, LOG_LEVEL: 'verbose' },
      error: /^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; received "verbose"\.$/,
    },
    {
      name: 'no SECRET_KEY in production',
      env: { ENVIRONMENT: 'production' },
      error: /^SECRET_KEY is not set \(ENVIRONMENT=production\); set it to at least 32/,
    },
    {
      name: 'no SECRET_KEY in staging',
      env: { ENVIRONMENT: 'staging' },
      error: /SECRET_KEY is not set \(ENVIRONMENT=staging\)/,
    },
    {
      name: 'short SECRET_KEY in production',
      env: { ENVIRONMENT: 'production', SECRET_KEY: 'hunter2-short-key' },
      error: /^SECRET_KEY is too short \(17 characters/,
    },
  ])('$name', ({ env, error }) => {
    let caught: unknown;
    try {
      loadSettings({ cwd: project(), env });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(SettingsError);
    const message = (caught as Error).message;
    expect(message).toMatch(error);
    expect(message).not.toContain('\n');
    if (env.SECRET_KEY) expect(message).not.toContain(env.SECRET_KEY);
  });

  it.each([
    {
      name: 'a 32-character key is enough in production',
      env: { ENVIRONMENT: 'production', SECRET_KEY: 'x'.repeat(32) },
      warnings: 0,
    },
    { name: 'a short key is tolerated in development, with a warning', env: { SECRET_KEY: 'Zq9-dev' }, warnings: 1 },
    { name: 'PORT 0 (pick a free port) is valid', env: { ...prod, PORT: '0' }, warnings: 0 },
  ])('$name', ({ env, warnings }) => {
    const rec = recorder();
    expect(() => loadSettings({ cwd: project(), env, logger: rec.logger })).not.toThrow();
    expect(rec.warnings).toHaveLength(warnings);
    for (const warning of rec.warnings) expect(warning).not.toContain(env.SECRET_KEY);
  });

  it('an unreadable .env is an error, a missing one is not', () => {
    const cwd = project();
    mkdirSync(join(cwd, '.env'));
    expect(() => loadSettings({ cwd, env: prod })).toThrow(/Cannot read .*\.env \(EISDIR\)/);
  });
});

describe('loadSettings: the returned object', () => {
  const load = (): Settings => loadSettings({ cwd: project(), env: { ENVIRONMENT: 'production', SECRET_KEY: KEY } });

  it('is frozen', () => {
    const s = load();
    expect(Object.isFrozen(s)).toBe(true);
    expect(Reflect.set(s, 'port', 1)).toBe(false);
    expect(s.port).toBe(8000);
  });

  it('keeps the secret out of JSON and console output, but readable as a property', () => {
    const s = load();
    expect(s.secretKey).toBe(KEY);
    expect(JSON.stringify(s)).not.toContain(KEY);
    expect(JSON.parse(JSON.stringify(s))).toMatchObject({ port: 8000, secretKey: '[hidden]' });
    expect(inspect(s)).not.toContain(KEY);
    expect(inspect(s)).toContain('databaseUrl');
  });
});
