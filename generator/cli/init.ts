/**
 * `core init <project_name> [--db sqlite|postgres] [--no-install]`
 *
 * Everything is checked and rendered first; the project is assembled in a hidden sibling folder and
 * renamed into place at the end, so a failure leaves nothing behind. `npm install` runs afterwards: if
 * it fails, the project stays (it is complete) and the message says how to finish the install.
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { CliError } from './errors.js';
import { info, printChanges, step } from './output.js';
import { projectNameProblem } from '../project/names.js';

interface InitOptions {
  db: 'sqlite' | 'postgres';
  install: boolean;
}

export function initCommand(): Command {
  return new Command('init')
    .description('create a new project in ./<project_name> and install its dependencies')
    .argument(
      '<project_name>',
      'folder and package name: lower case letters, digits, "-" or "_", starting with a letter',
    )
    .addOption(new Option('--db <kind>', 'database of the project').choices(['sqlite', 'postgres']).default('sqlite'))
    .option('--no-install', 'write the files only; run `npm install` in the project later')
    .addHelpText(
      'after',
      `
Creates src/main.ts, .env (with a fresh SECRET_KEY), .env.example, package.json, tsconfig.json,
src/policies.json, test/smoke.test.ts, scripts/build.mjs (the production build), README.md,
biome.json and .editorconfig (the formatter's settings, which generated code follows),
dev.db (SQLite) and vendor/ (the Core runtime package, and this CLI: \`npx core\` in the project).
Refuses a folder that exists and is not empty.

Examples:
  core init blog
  core init shop --db postgres --no-install`,
    )
    .action(async (name: string, options: InitOptions) => runInit(name, options));
}

async function runInit(name: string, options: InitOptions): Promise<void> {
  const problem = projectNameProblem(name);
  if (problem) throw new CliError(problem);
  const target = resolve(name);
  const shown = relative(process.cwd(), target) || '.';
  if (existsSync(target)) {
    if (!statSync(target).isDirectory())
      throw new CliError(`./${shown} exists and is a file; choose another project name`);
    if (readdirSync(target).length > 0)
      throw new CliError(`./${shown} already exists and is not empty; choose another name or remove that folder`);
  }

  const [{ runtimeTarball }, { cliTarball }, { VendorBuildError }, { Tree }, { generateProject }] = await Promise.all([
    import('../project/runtime-tarball.js'),
    import('../project/cli-tarball.js'),
    import('../project/vendor-tarball.js'),
    import('../engine/tree.js'),
    import('../generators/project/index.js'),
  ]);
  let tarballs: readonly [Awaited<ReturnType<typeof runtimeTarball>>, Awaited<ReturnType<typeof cliTarball>>];
  try {
    const runtime = await runtimeTarball(step);
    tarballs = [runtime, await cliTarball(runtime, step)] as const;
  } catch (error) {
    if (error instanceof VendorBuildError) throw new CliError(error.message, 1, { cause: error });
    throw error;
  }
  const [runtime, cli] = tarballs;

  // Assemble next to the target (same file system, so the final rename is atomic).
  const staging = mkdtempSync(join(dirname(target), `.${basename(target)}.core-init-`));
  let changes: ReturnType<InstanceType<typeof Tree>['commit']>;
  try {
    const tree = new Tree(staging);
    generateProject(tree, {
      name,
      db: options.db,
      secretKey: randomBytes(32).toString('hex'),
      runtimeTarball: runtime.fileName,
      cliTarball: cli.fileName,
    });
    changes = tree.commit();
    mkdirSync(join(staging, 'vendor'));
    for (const tarball of tarballs) {
      copyFileSync(tarball.path, join(staging, 'vendor', tarball.fileName));
      changes.push({ path: `vendor/${tarball.fileName}`, kind: 'CREATE' });
    }
    changes.sort((a, b) => a.path.localeCompare(b.path));
    chmodSync(join(staging, '.env'), 0o600); // it holds the secret
    chmodSync(staging, 0o777 & ~process.umask()); // mkdtemp makes it private; a project folder is not
    if (existsSync(target)) rmdirSync(target); // empty (checked above); rmdir fails if that changed meanwhile
    renameSync(staging, target);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw new CliError(`could not create ./${shown}: ${(error as Error).message}`, 1, { cause: error });
  }
  printChanges(changes, `${shown}/`);

  if (options.install) await install(target, shown);

  info('');
  info(`Project ${name} is ready. Next:`);
  info(`  cd ${shown}`);
  if (!options.install) info('  npm install');
  if (options.db === 'postgres') info(`  createdb ${name}            # see README.md > Database`);
  info('  npx core startapp tasks --template');
  info('  npx core run');
}

async function install(target: string, shown: string): Promise<void> {
  const { stream } = await import('../project/process.js');
  step(`Installing dependencies (npm install in ./${shown}; compiling better-sqlite3 can take a minute or two)…`);
  const started = Date.now();
  // npm draws its own progress on a terminal; elsewhere (CI, pipes) say that it is still working.
  const heartbeat = process.stderr.isTTY
    ? undefined
    : setInterval(() => step(`  …still installing (${Math.round((Date.now() - started) / 1000)} s)`), 20_000);
  let code: number;
  try {
    code = await stream('npm', ['install', '--no-audit', '--no-fund'], { cwd: target });
  } finally {
    clearInterval(heartbeat);
  }
  if (code !== 0) {
    // Offline, npm reports confusing resolution errors (ERESOLVE "@mikro-orm/core@undefined"): say so plainly.
    const { capture } = await import('../project/process.js');
    const ping = await capture('npm', ['ping'], { cwd: target, timeout: 15_000 }).catch(() => ({ code: 1 }));
    const cause =
      ping.code === 0
        ? 'fix the cause shown above'
        : 'the npm registry could not be reached (network? proxy? `npm config get registry`); fix that';
    throw new CliError(
      `npm install failed (exit code ${code}); the project files are in ./${shown}: ${cause} and run \`npm install\` there`,
      code,
    );
  }
  step(`Dependencies installed in ${Math.round((Date.now() - started) / 1000)} s.`);
}
