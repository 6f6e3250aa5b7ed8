/**
 * What commands print. Results go to stdout (one line per file: `CREATE src/main.ts`), progress and
 * warnings to stderr, so `core token` and `--dry-run` output can be piped. Colour only on a terminal
 * and never with `NO_COLOR`.
 */
import type { Change, ChangeKind } from '../engine/tree.js';

const useColor = (stream: NodeJS.WriteStream): boolean => stream.isTTY === true && !process.env.NO_COLOR;

const COLORS: Record<ChangeKind, number> = { CREATE: 32, UPDATE: 36, UNCHANGED: 90, SKIP: 33, CONFLICT: 31 };

function paint(stream: NodeJS.WriteStream, code: number, text: string): string {
  return useColor(stream) ? `\u001b[${code}m${text}\u001b[0m` : text;
}

export function info(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Progress and hints: stderr, so stdout stays machine-readable. */
export function step(line: string): void {
  process.stderr.write(`${paint(process.stderr, 2, line)}\n`);
}

export function warn(line: string): void {
  process.stderr.write(`${paint(process.stderr, 33, `warning: ${line}`)}\n`);
}

/** `CREATE    src/apps/tasks/plugin.ts`, plus `: <reason>` for SKIP and CONFLICT. */
export function printChange(change: Change, prefix = ''): void {
  const label = change.kind.padEnd(9);
  const reason = change.reason ? `: ${change.reason}` : '';
  info(`${paint(process.stdout, COLORS[change.kind], label)} ${prefix}${change.path}${reason}`);
}

export function printChanges(changes: readonly Change[], prefix = ''): void {
  for (const change of changes) printChange(change, prefix);
}

/** `3 created, 1 updated, 2 unchanged` — only the kinds that occur. */
export function summarize(changes: readonly Change[]): string {
  const words: Record<ChangeKind, string> = {
    CREATE: 'created',
    UPDATE: 'updated',
    UNCHANGED: 'unchanged',
    SKIP: 'skipped',
    CONFLICT: 'in conflict',
  };
  const counts = new Map<ChangeKind, number>();
  for (const change of changes) counts.set(change.kind, (counts.get(change.kind) ?? 0) + 1);
  const parts = (Object.keys(words) as ChangeKind[])
    .filter((k) => counts.has(k))
    .map((k) => `${counts.get(k)} ${words[k]}`);
  return parts.length ? parts.join(', ') : 'no files';
}
