/**
 * Marks a project as being changed by a `core` command (`generate`, `startapp`, `makemigrations`,
 * `migrate`), so that a running `core run` waits for the whole change — code, migration, database —
 * before it reloads, instead of restarting on the first file written.
 *
 * A marker is a file `busy-<pid>.json` in `node_modules/.cache/core/` (tool state, never committed).
 * One file per process: two commands at once each hold their own, and a marker whose process is gone
 * (killed mid-way) is ignored and removed. Removing a marker is also how `core run` learns that a
 * command has finished.
 *
 * `migrated` in the same folder is touched whenever a command has applied the pending migrations, so
 * that `core run` does not run the migration runner a second time for the same change.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface BusyHolder {
  pid: number;
  /** `generate`, `startapp`… */
  command: string;
}

const MARKER = /^busy-(\d+)\.json$/;

export function busyDir(root: string): string {
  return join(root, 'node_modules', '.cache', 'core');
}

/**
 * Marks the project busy until the returned function is called (also on exit). Without node_modules
 * nothing can serve the project, so nothing is marked.
 */
export function holdBusy(root: string, command: string): () => void {
  if (!existsSync(join(root, 'node_modules'))) return () => {};
  const dir = busyDir(root);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `busy-${process.pid}.json`);
  writeFileSync(file, JSON.stringify({ pid: process.pid, command } satisfies BusyHolder));
  const release = () => {
    process.off('exit', release);
    rmSync(file, { force: true });
  };
  process.on('exit', release);
  return release;
}

/** The commands changing the project right now (stale markers removed). */
export function busyHolders(root: string): BusyHolder[] {
  const dir = busyDir(root);
  if (!existsSync(dir)) return [];
  const holders: BusyHolder[] = [];
  for (const name of readdirSync(dir)) {
    const match = MARKER.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    if (!isAlive(pid)) {
      rmSync(join(dir, name), { force: true });
      continue;
    }
    try {
      holders.push(JSON.parse(readFileSync(join(dir, name), 'utf8')) as BusyHolder);
    } catch {
      holders.push({ pid, command: 'a core command' }); // being written right now
    }
  }
  return holders;
}

/** Records that the database has every migration on disk now (see above). */
export function markMigrated(root: string): void {
  if (!existsSync(join(root, 'node_modules'))) return;
  mkdirSync(busyDir(root), { recursive: true });
  writeFileSync(join(busyDir(root), 'migrated'), `${new Date().toISOString()}\n`);
}

/** When the database last had every migration on disk applied by a command (ms since the epoch; 0: unknown). */
export function migratedAt(root: string): number {
  return statSync(join(busyDir(root), 'migrated'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
