/**
 * Runs the real `core` command (generator/bin/core.js) as a child process, the way a user does, and
 * makes throwaway folders for it. Colour and debug output are off so assertions see plain text.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CORE_BIN = fileURLToPath(new URL('../../generator/bin/core.js', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  /** Added to (or, with `undefined`, removed from) the environment. */
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

export function core(args: readonly string[], options: CliOptions): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CORE_DEBUG: undefined };
  for (const [key, value] of Object.entries(options.env ?? {})) env[key] = value;
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return new Promise((resolve, reject) => {
    // stdin is not a terminal: `startapp` writes a minimal manifest instead of prompting.
    const child = spawn(process.execPath, [CORE_BIN, ...args], {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

export function tempDir(prefix = 'core-cli-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Every file under `dir` (relative, `/`-separated, sorted) with its content and mtime: to prove nothing changed. */
export function snapshot(dir: string): Map<string, { content: string; mtimeMs: number }> {
  const files = new Map<string, { content: string; mtimeMs: number }>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(path);
      } else {
        files.set(relative(dir, path).split('\\').join('/'), {
          content: readFileSync(path, 'latin1'),
          mtimeMs: statSync(path).mtimeMs,
        });
      }
    }
  };
  walk(dir);
  return new Map([...files.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/** The non-empty lines of a command's output. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

/**
 * What a tool run through npm or npx printed, without npm's own notices (`npm warn …`): npm 11 warns
 * about settings it does not know, such as a machine's `nodedir` in ~/.npmrc, on every call.
 */
export function withoutNpmNotices(output: string): string {
  return output
    .split('\n')
    .filter((line) => !/^npm (warn|notice) /i.test(line))
    .join('\n');
}
