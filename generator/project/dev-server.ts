/**
 * The development server behind `core run`: the app (`src/main.ts` under tsx) as a child process,
 * restarted when the project changes, with the database brought up to date first.
 *
 * Why not `tsx watch`: it restarts on the first file written, so after `core generate` the new code
 * would answer before its migration exists, let alone is applied, and every create or search on a
 * new column fails. Here:
 *  - while a `core` command marks the project busy (`busy.ts`), the server is stopped: code,
 *    migration and database change as one step, and no request meets half of it;
 *  - a reload applies pending migrations first when the change can have brought some (a file under
 *    `migrations/`, or `.env`) and no command has applied them since, in development only — unless
 *    they would lose data: then the server keeps the code it had, and the terminal says what to do;
 *  - then it stops the running server and starts the new code.
 * A server that exits on its own (a syntax error, a crash) is started again on the next change.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, watch, type FSWatcher } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { busyDir, busyHolders, migratedAt } from './busy.js';
import { applyPendingMigrations } from './migrations.js';
import { childEnv } from './process.js';
import { MAIN_FILE } from './root.js';

export interface DevServerOptions {
  root: string;
  /** Extra environment for the app (HOST, PORT). */
  env: Record<string, string>;
  /** Apply pending migrations before each start that may need it. */
  migrate: boolean;
  /** Progress lines (stderr). */
  say: (line: string) => void;
  /** Called when migrations would lose data (the runner listed the risks). */
  onDataLoss: () => void;
}

/** Events closer than this are one change (an editor's save, a generator writing ten files). */
const SETTLE_MS = 150;
/** How often a reload that waits for a `core` command looks again (a killed command leaves its marker). */
const STALE_CHECK_MS = 1000;
/** Time the server gets to close its connections before it is killed. */
const STOP_TIMEOUT_MS = 5000;
/** Files at the project's top level whose change reloads the server. */
const TOP_LEVEL = new Set(['.env', 'package.json', 'tsconfig.json']);
/**
 * Files the app never reads (manifests, the manifest schema), the migration snapshot (written with
 * every new migration, and rewritten by MikroORM when migrations are applied), editors' and the
 * generator's temporary files.
 */
const IGNORED = /(\.resource\.json|\/resource\.schema\.json|\/\.snapshot\.json|\.core-tmp-\d+|\.swp|\.swx|~|\/4913)$/;

export class DevServer {
  private child: ChildProcess | null = null;
  private readonly watchers: FSWatcher[] = [];
  private readonly changed = new Set<string>();
  /** When a file under `migrations/` or `.env` last changed (ms since the epoch). */
  private schemaChangedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private reloading = false;
  private again = false;
  private waitingFor = '';
  private stopped = false;

  constructor(private readonly options: DevServerOptions) {}

  /**
   * Applies pending migrations (when asked), starts the app and watches the project. Resolves with
   * `data-loss` or the runner's exit code when the first migration step fails (nothing was started).
   */
  async start(): Promise<'started' | 'data-loss' | number> {
    if (this.options.migrate) {
      this.options.say('Applying pending migrations…');
      const outcome = await applyPendingMigrations(this.options.root);
      if (outcome !== 'applied') return outcome;
    }
    this.spawnApp();
    this.watch();
    return 'started';
  }

  /** Stops watching and stops the app; resolves once it has exited. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const watcher of this.watchers) watcher.close();
    await this.stopApp();
  }

  private spawnApp(): void {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN_FILE], {
      cwd: this.options.root,
      env: childEnv(this.options.env),
      stdio: 'inherit',
    });
    this.child = child;
    // Never left behind, even when the CLI ends abruptly.
    const kill = () => child.kill('SIGTERM');
    process.once('exit', kill);
    child.once('exit', (code, signal) => {
      process.off('exit', kill);
      if (this.child !== child) return; // stopped on purpose
      this.child = null;
      if (!this.stopped)
        this.options.say(`The server exited (${signal ?? `code ${code}`}); it starts again when a file changes.`);
    });
  }

  private async stopApp(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  private watch(): void {
    const { root } = this.options;
    const project = (path: string) => relative(root, path).split(sep).join('/');
    const watchTree = (dir: string): boolean => {
      const path = join(root, dir);
      if (!existsSync(path)) return false;
      this.watchers.push(
        watch(path, { recursive: true }, (_event, file) => this.onChange(project(join(path, file?.toString() ?? '')))),
      );
      return true;
    };
    watchTree('src');
    let migrations = watchTree('migrations');
    this.watchers.push(
      watch(root, (_event, file) => {
        const name = file?.toString() ?? '';
        if (TOP_LEVEL.has(name)) this.onChange(name);
        // `migrations/` appears with the first migration: watched from then on.
        if (name === 'migrations' && !migrations) {
          migrations = watchTree('migrations');
          this.onChange('migrations/');
        }
      }),
    );
    // A marker created or removed: a `core` command started or finished changing the project.
    const busy = busyDir(root);
    mkdirSync(busy, { recursive: true });
    this.watchers.push(watch(busy, (_event, file) => this.onChange(project(join(busy, file?.toString() ?? '')))));
  }

  private onChange(path: string): void {
    if (this.stopped || IGNORED.test(path)) return;
    if (path.startsWith('migrations/') || path === '.env') this.schemaChangedAt = Date.now();
    this.changed.add(path);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload(), SETTLE_MS);
  }

  private async reload(): Promise<void> {
    if (this.stopped) return;
    if (this.reloading) {
      this.again = true;
      return;
    }
    this.reloading = true;
    try {
      const holders = busyHolders(this.options.root);
      if (holders.length > 0) {
        const waitingFor = holders.map((h) => `core ${h.command}`).join(', ');
        if (waitingFor !== this.waitingFor)
          this.options.say(`Waiting for ${waitingFor} to finish (the server is stopped meanwhile)…`);
        this.waitingFor = waitingFor;
        await this.stopApp();
        // The marker's removal calls reload again; a command killed before it could remove its
        // marker is noticed by looking again now and then.
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.reload(), STALE_CHECK_MS);
        return;
      }
      this.waitingFor = '';
      const files = [...this.changed].filter((path) => !path.startsWith('node_modules/'));
      const commandFinished = files.length < this.changed.size;
      this.changed.clear();
      if (files.length === 0 && !commandFinished) return;
      if (this.options.migrate && this.schemaChangedAt > migratedAt(this.options.root)) {
        this.options.say('Applying pending migrations before the reload…');
        const outcome = await applyPendingMigrations(this.options.root);
        if (outcome !== 'applied') {
          if (outcome === 'data-loss') this.options.onDataLoss();
          else this.options.say('The migration step failed (see above).');
          this.options.say(
            `${this.child ? 'The server keeps running the code it had' : 'The server stays stopped'}; save a file or run \`core migrate\` to try again.`,
          );
          return;
        }
      }
      const what =
        files.length === 0
          ? 'a core command changed the project'
          : `${files[0]}${files.length > 1 ? ` and ${files.length - 1} more` : ''} changed`;
      this.options.say(`Reloading (${what})…`);
      await this.stopApp();
      if (!this.stopped) this.spawnApp();
    } finally {
      this.reloading = false;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.reload();
      }
    }
  }
}
