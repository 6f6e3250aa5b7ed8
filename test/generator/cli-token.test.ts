import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { core, lines, tempDir } from '../helpers/cli.js';
import { createTokenVerifier } from '../../runtime/src/auth/jwt.js';

const dir = tempDir('core-token-');
let project: string;
let secret: string;

beforeAll(async () => {
  expect((await core(['init', 'api', '--no-install'], { cwd: dir.path })).code).toBe(0);
  project = join(dir.path, 'api');
  secret = parseEnv(readFileSync(join(project, '.env'), 'utf8')).SECRET_KEY!;
}, 180_000);
afterAll(() => dir.remove());

/** The token's claims, undecoded by any verifier. */
function claims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

// SECRET_KEY from the test runner's own environment must not stand in for the project's.
const env = { SECRET_KEY: undefined, ENVIRONMENT: undefined };

describe('core token', () => {
  it.each([
    { args: ['--role', 'admin'], roles: ['admin'], sub: null, seconds: 3600 },
    {
      args: ['--role', 'viewer,admin', '--sub', 'alice', '--expires', '30m'],
      roles: ['viewer', 'admin'],
      sub: 'alice',
      seconds: 1800,
    },
    { args: ['--role', ' viewer ', '--expires', '7d'], roles: ['viewer'], sub: null, seconds: 7 * 86_400 },
  ])('$args → a token the app verifies with the project secret', async ({ args, roles, sub, seconds }) => {
    const result = await core(['token', ...args], { cwd: project, env });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const token = result.stdout.trim();
    expect(lines(result.stdout)).toEqual([token]); // only the token on stdout
    expect(createTokenVerifier(secret)(token)).toMatchObject({ roles, sub });
    const { exp, iat } = claims(token) as { exp: number; iat: number };
    expect(exp - iat).toBe(seconds);
    expect(() => createTokenVerifier('another-secret-of-at-least-32-characters')(token)).toThrow();
  });

  it('warns about a role the policies do not know, and still prints the token', async () => {
    const result = await core(['token', '--role', 'ghost'], { cwd: project, env });
    expect(result.code).toBe(0);
    expect(lines(result.stderr)).toEqual(['warning: role "ghost" is not in src/policies.json: it grants nothing']);
    expect(createTokenVerifier(secret)(result.stdout.trim()).roles).toEqual(['ghost']);
  });

  it('uses SECRET_KEY from the environment over .env, as the app does', async () => {
    const fromEnv = 'e'.repeat(64);
    const result = await core(['token', '--role', 'admin'], { cwd: project, env: { SECRET_KEY: fromEnv } });
    expect(result.code).toBe(0);
    expect(createTokenVerifier(fromEnv)(result.stdout.trim()).roles).toEqual(['admin']);
  });

  it.each([
    { name: 'no role', args: [], message: "error: required option '--role <roles>' not specified" },
    {
      name: 'an empty role',
      args: ['--role', 'admin,'],
      message: 'core: --role needs role names separated by commas, got "admin,"',
    },
    {
      name: 'a bad duration',
      args: ['--role', 'admin', '--expires', 'soon'],
      message: 'core: --expires must be seconds or a duration such as 30m, 12h, 7d; got "soon"',
    },
  ])('refuses $name with one line', async ({ args, message }) => {
    const result = await core(['token', ...args], { cwd: project, env });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual([message]);
  });

  it('refuses when the project has no SECRET_KEY', async () => {
    const file = join(project, '.env');
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, original.replace(/^SECRET_KEY=.*$/m, 'SECRET_KEY='));
    try {
      const result = await core(['token', '--role', 'admin'], { cwd: project, env });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(lines(result.stderr)).toEqual([
        expect.stringMatching(
          /^core: the project has no SECRET_KEY \(not in the environment nor in .*\.env\); add SECRET_KEY=/,
        ),
      ]);
    } finally {
      writeFileSync(file, original);
    }
  });

  it('refuses outside a project', async () => {
    const result = await core(['token', '--role', 'admin'], { cwd: dir.path, env });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([expect.stringMatching(/^core: not inside a Core project/)]);
  });
});
