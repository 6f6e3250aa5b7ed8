/**
 * How the CLI fails: a `CliError` carries a message written for the user (what happened, what to do)
 * and an exit code. Anything else that escapes a command is a bug or an environment problem; it is
 * shown as one line too, and `CORE_DEBUG=1` prints the stack.
 */
import type { ManifestError } from '../manifest/validate.js';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** True when the user asked for stacks (`CORE_DEBUG=1`). */
export function debugEnabled(): boolean {
  const value = process.env.CORE_DEBUG;
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

/**
 * Prints an error the way every command does and returns the exit code. A manifest error prints one
 * line per problem (`file $.json.path: what was expected`); everything else prints one line.
 */
export function reportError(
  error: unknown,
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): number {
  if (debugEnabled() && error instanceof Error && error.stack) write(error.stack);
  const manifestErrors = manifestErrorsOf(error);
  if (manifestErrors.length > 0) {
    for (const { file, issues } of manifestErrors)
      for (const issue of issues) write(`core: ${file} ${issue.path}: ${issue.message}`);
    const count = manifestErrors.length;
    write(`core: ${count === 1 ? 'the manifest is' : `${count} manifests are`} invalid: nothing was written`);
    return 1;
  }
  if (error instanceof CliError) {
    // An empty message: a child process (npm, the migration runner) already said why on the terminal.
    if (error.message) write(`core: ${firstLine(error.message)}`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  write(`core: ${firstLine(message)}${debugEnabled() ? '' : ' (set CORE_DEBUG=1 for details)'}`);
  return 1;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return line.trim();
}

/**
 * The manifest errors inside `error` (a `ManifestError`, or `ManifestErrors` holding several). Matched
 * by name rather than `instanceof` so that printing an error does not load the manifest validator.
 */
function manifestErrorsOf(error: unknown): ManifestError[] {
  if (!(error instanceof Error)) return [];
  if (error.name === 'ManifestError') return [error as ManifestError];
  if (error.name === 'ManifestErrors') return [...(error as Error & { errors: ManifestError[] }).errors];
  return [];
}
