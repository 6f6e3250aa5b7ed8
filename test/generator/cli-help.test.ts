import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { core, lines, tempDir } from '../helpers/cli.js';

const dir = tempDir('core-help-');
afterAll(() => dir.remove());

describe('core --help', () => {
  it('lists every command', async () => {
    const result = await core(['--help'], { cwd: dir.path });
    expect(result.code).toBe(0);
    for (const command of ['init', 'startapp', 'generate', 'makemigrations', 'migrate', 'run', 'token', 'client']) {
      expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
    expect(result.stdout).toContain('core startapp tasks --template');
  });

  it.each([
    ['init', ['<project_name>', '--db <kind>', '(choices: "sqlite", "postgres"', '--no-install', 'core init blog']],
    ['startapp', ['<module_name>', '--template', '--no-register', 'core startapp tasks --template']],
    ['generate', ['[module_name]', '--dry-run', 'CONFLICT', 'core generate tasks --dry-run']],
    ['makemigrations', ['--name <name>', 'migrations/<dialect>/']],
    ['migrate', ['npm run migrate']],
    ['run', ['--host <host>', '--port <port>', '--no-migrate']],
    ['token', ['--role <roles>', '--sub <id>', '--expires <duration>', 'default: "1h"']],
    ['client', ['--out <dir>', 'src/client/', 'openapi.json', 'createApiClient']],
  ])('core %s --help explains the command', async (command, fragments) => {
    const result = await core([command, '--help'], { cwd: dir.path });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: core ${command} `));
    for (const fragment of fragments) expect(result.stdout).toContain(fragment);
  });

  it('prints the version', async () => {
    const result = await core(['--version'], { cwd: dir.path });
    expect(result).toMatchObject({ code: 0, stdout: '0.1.0\n' });
  });
});

describe('errors: non-zero exit and one line', () => {
  it.each([
    ['an unknown command', ['initt'], /^error: unknown command 'initt' \(Did you mean init\?\)$/],
    ['a missing argument', ['init'], /^error: missing required argument 'project_name'/],
    ['an unknown option', ['generate', '--fast'], /^error: unknown option '--fast'$/],
    ['a mistyped option', ['generate', '--dry-rn'], /^error: unknown option '--dry-rn' \(Did you mean --dry-run\?\)$/],
    ['a bad port', ['run', '--port', 'http'], /^core: --port must be a number from 0 to 65535, got "http"/],
  ])('%s', async (_case, args, message) => {
    const result = await core(args, { cwd: dir.path });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([expect.stringMatching(message)]);
  });

  it('CORE_DEBUG=1 adds the stack', async () => {
    const quiet = await core(['init', 'Bad'], { cwd: dir.path });
    const debug = await core(['init', 'Bad'], { cwd: dir.path, env: { CORE_DEBUG: '1' } });
    expect(lines(quiet.stderr)).toHaveLength(1);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^CliError: invalid project name "Bad"/m);
    expect(debug.stderr).toMatch(/^\s+at .*init\.ts/m); // source-mapped to the TypeScript
  });
});

describe('commands that need an installed project say so', () => {
  let project: string;
  beforeAll(async () => {
    expect((await core(['init', 'bare', '--no-install'], { cwd: dir.path })).code).toBe(0);
    project = join(dir.path, 'bare');
  }, 180_000);

  it.each([['migrate'], ['makemigrations'], ['run'], ['client']])('core %s', async (command) => {
    const result = await core([command], { cwd: project });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      `core: the project's dependencies are not installed (no node_modules); run \`npm install\` in ${project}`,
    ]);
  });
});
