/**
 * Whole-file writes that the `Tree`'s overwrite rules do not cover: an edit of a user-owned file
 * computed from its current content (`core startapp` adding a plugin to `src/main.ts`), and files the
 * CLI rewrites whenever they differ (`src/apps/resource.schema.json`, a JSON file that cannot carry
 * the generated-file header). Like the tree, nothing touches the disk before `commit`; each write
 * goes through a temporary file and a rename. A file that changed on disk after it was read is not
 * overwritten but reported as a CONFLICT.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Change } from './tree.js';

interface Pending {
  /** The content the new one was computed from (null: the file did not exist). */
  base: string | null;
  content: string;
}

export class ManagedFiles {
  private readonly pending = new Map<string, Pending>();

  constructor(readonly root: string) {}

  read(path: string): string | null {
    const abs = join(this.root, path);
    return existsSync(abs) ? readFileSync(abs, 'utf8') : null;
  }

  /** Sets the new content of `path`, computed from `base` (what `read` returned). */
  write(path: string, content: string, base: string | null = this.read(path)): void {
    this.pending.set(path, { base, content });
  }

  changes(): Change[] {
    return [...this.pending.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([path, pending]) => this.classify(path, pending));
  }

  private classify(path: string, { base, content }: Pending): Change {
    const current = this.read(path);
    if (current !== base)
      return { path, kind: 'CONFLICT', reason: 'changed on disk while core was running; run the command again' };
    if (current === null) return { path, kind: 'CREATE' };
    return current === content ? { path, kind: 'UNCHANGED' } : { path, kind: 'UPDATE' };
  }

  commit(): Change[] {
    const changes = this.changes();
    for (const change of changes) {
      if (change.kind !== 'CREATE' && change.kind !== 'UPDATE') continue;
      const abs = join(this.root, change.path);
      mkdirSync(dirname(abs), { recursive: true });
      const tmp = `${abs}.core-tmp-${process.pid}`;
      writeFileSync(tmp, this.pending.get(change.path)!.content);
      renameSync(tmp, abs);
    }
    return changes;
  }
}
