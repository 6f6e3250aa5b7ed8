/**
 * The runtime package (`@core/runtime`) travels with every project as an `npm pack` tarball under
 * `vendor/`, installed as `file:vendor/<name>.tgz`. A `file:../runtime` link is not an option: Node
 * would resolve the runtime's imports from the repository and load a second `@mikro-orm/core`
 * (STACK-NOTES §8).
 *
 * The tarball's file name carries a hash of the runtime's sources
 * (`core-runtime-0.1.0-<hash>.tgz`): npm's cache and lock files match a tarball by integrity, and a
 * re-packed tarball under an unchanged name would be silently replaced by stale cached content.
 *
 * Building (tsc) and packing take a few seconds, so the result is cached by that hash in
 * `node_modules/.cache/core-runtime/` of this repository; the runtime's own `dist/` is never touched
 * (the build goes to a private folder), so concurrent runs and other engineers' builds do not collide.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { capture } from './process.js';
import { REPO_ROOT } from './repo.js';

export interface RuntimeTarball {
  /** Absolute path of the cached tarball. */
  path: string;
  /** `core-runtime-0.1.0-1a2b3c4d5e6f.tgz` */
  fileName: string;
  /** `@core/runtime` */
  packageName: string;
  version: string;
}

export class RuntimeBuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RuntimeBuildError';
  }
}

const RUNTIME = join(REPO_ROOT, 'runtime');
const CACHE = join(REPO_ROOT, 'node_modules', '.cache', 'core-runtime');
/** Everything the built package depends on besides `runtime/src`. */
const CONFIG_FILES = ['runtime/package.json', 'runtime/tsconfig.json', 'runtime/tsconfig.build.json', 'tsconfig.base.json'];
const KEEP_CACHED = 5;

interface RuntimeManifest {
  name: string;
  version: string;
}

/** The tarball for the runtime's current sources: from the cache, or built and packed now. */
export async function runtimeTarball(onStep: (line: string) => void = () => {}): Promise<RuntimeTarball> {
  const manifest = JSON.parse(readFileSync(join(RUNTIME, 'package.json'), 'utf8')) as RuntimeManifest;
  const base = manifest.name.replace(/^@/, '').replace('/', '-');
  const fileName = `${base}-${manifest.version}-${sourceHash()}.tgz`;
  const cached = join(CACHE, fileName);
  const result = { path: cached, fileName, packageName: manifest.name, version: manifest.version };
  if (existsSync(cached)) {
    utimesSync(cached, new Date(), new Date()); // recently used: kept by `prune`
    return result;
  }

  onStep(`Packing the runtime package ${manifest.name}@${manifest.version} (tsc + npm pack, once per runtime change)…`);
  const staging = mkdtempSync(join(tmpdir(), 'core-runtime-pack-'));
  try {
    await build(join(staging, 'package'));
    const tgz = await pack(join(staging, 'package'), staging);
    mkdirSync(CACHE, { recursive: true });
    const tmp = `${cached}.${process.pid}.tmp`;
    copyFileSync(tgz, tmp);
    renameSync(tmp, cached); // atomic: a concurrent run sees the whole file or none
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  prune();
  return result;
}

/** sha256 over the runtime's sources and build configuration, 12 hex characters. */
export function sourceHash(): string {
  const hash = createHash('sha256');
  const files = [...CONFIG_FILES.map((f) => join(REPO_ROOT, f)), ...listSources(join(RUNTIME, 'src'))];
  for (const file of files) {
    hash.update(relative(REPO_ROOT, file).split(sep).join('/')).update('\0');
    hash.update(existsSync(file) ? readFileSync(file) : '').update('\0');
  }
  return hash.digest('hex').slice(0, 12);
}

function listSources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listSources(path));
    else if (!entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

async function build(packageDir: string): Promise<void> {
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const { code, stdout, stderr } = await capture(
    process.execPath,
    [tsc, '-p', join(RUNTIME, 'tsconfig.build.json'), '--outDir', join(packageDir, 'dist'), '--sourceMap', 'false'],
    { cwd: REPO_ROOT },
  );
  if (code !== 0) {
    const first = `${stdout}\n${stderr}`.split('\n').find((line) => /error TS\d+/.test(line)) ?? stderr.trim();
    throw new RuntimeBuildError(`could not build the runtime package (tsc exited with ${code}): ${first.trim() || 'no output'}`);
  }
  writeFileSync(join(packageDir, 'package.json'), readFileSync(join(RUNTIME, 'package.json')));
  for (const extra of ['README.md', 'LICENSE']) {
    if (existsSync(join(RUNTIME, extra))) copyFileSync(join(RUNTIME, extra), join(packageDir, extra));
  }
}

async function pack(packageDir: string, destination: string): Promise<string> {
  // --ignore-scripts: `prepack` would rebuild from sources that are not in the staging folder.
  const { code, stdout, stderr } = await capture('npm', ['pack', packageDir, '--pack-destination', destination, '--ignore-scripts', '--json'], {
    cwd: destination,
  });
  if (code !== 0) throw new RuntimeBuildError(`npm pack of the runtime package failed (exit ${code}): ${stderr.trim().split('\n').pop() ?? ''}`);
  const [entry] = JSON.parse(stdout) as { filename: string }[];
  if (!entry) throw new RuntimeBuildError('npm pack of the runtime package printed no file name');
  return join(destination, entry.filename);
}

/** Keeps the most recent tarballs; older ones belong to runtime sources that no longer exist. */
function prune(): void {
  const tarballs = readdirSync(CACHE)
    .filter((name) => name.endsWith('.tgz'))
    .map((name) => ({ name, time: statSync(join(CACHE, name), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
    .sort((a, b) => b.time - a.time);
  for (const old of tarballs.slice(KEEP_CACHED)) rmSync(join(CACHE, old.name), { force: true });
}
