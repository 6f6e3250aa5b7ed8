/**
 * Child processes of the CLI (tsc, npm, tsx). Two flavours: `capture` collects the output (for tools
 * whose output we summarise), `stream` lets the child write straight to the terminal (npm install,
 * the dev server) and forwards Ctrl+C / SIGTERM to it, so no child outlives the CLI.
 */
import { spawn, type SpawnOptions } from 'node:child_process';

export interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

export class SpawnError extends Error {
  constructor(
    readonly command: string,
    cause: unknown,
  ) {
    const code = (cause as NodeJS.ErrnoException).code;
    super(
      code === 'ENOENT'
        ? `${command} was not found on PATH; install it (it comes with Node.js) and try again`
        : `could not start ${command}: ${(cause as Error).message}`,
      { cause },
    );
    this.name = 'SpawnError';
  }
}

/** The environment for child tools, minus what an enclosing `npm exec`/`npm run` set for its own project. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // `npx core …` run from another package exports that package's prefix, workspace and lifecycle
    // state; inherited by `npm install` in the new project they would point npm at the wrong folder.
    if (/^npm_(package|lifecycle)_/i.test(key)) continue;
    if (/^npm_config_(local_prefix|prefix|global|workspaces?|include_workspace_root)$/i.test(key)) continue;
    if (key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

export function capture(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<Captured> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: childEnv(), ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', (error) => reject(new SpawnError(command, error)));
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
  });
}

/**
 * Runs a child with the terminal attached and resolves with its exit code. SIGINT/SIGTERM received
 * by the CLI are passed on, and the child is killed if the CLI exits first.
 */
export function stream(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: childEnv(), ...options, stdio: 'inherit' });
    const alive = () => child.exitCode === null && child.signalCode === null;
    // Ctrl+C in a terminal already reaches the child (same process group); sending a second SIGINT
    // would make tools like tsx force-quit. So only make sure it ends: SIGTERM if it is still running
    // a moment later (the case of a `kill -INT` aimed at the CLI alone).
    const onInt = () => {
      setTimeout(() => alive() && child.kill('SIGTERM'), 2000).unref();
    };
    const onTerm = () => child.kill('SIGTERM');
    const onExit = () => alive() && child.kill('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    process.on('exit', onExit);
    const cleanup = () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      process.off('exit', onExit);
    };
    child.once('error', (error) => {
      cleanup();
      reject(new SpawnError(command, error));
    });
    child.once('close', (code, signal) => {
      cleanup();
      resolve(code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1));
    });
  });
}
