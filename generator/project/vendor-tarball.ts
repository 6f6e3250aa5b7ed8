/**
 * The packages a project installs from its own `vendor/` folder (`@core/runtime`, `@core/cli`), as
 * `npm pack` tarballs named after a hash of what they are built from
 * (`core-runtime-0.1.0-<hash>.tgz`): npm's cache and lock files match a tarball by integrity, and a
 * re-packed tarball under an unchanged name would be silently replaced by stale cached content.
 *
 * Building and packing take seconds, so tarballs are cached by that name in
 * `node_modules/.cache/<package>/` of the repository, and written there atomically, so concurrent
 * runs never see half a file.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { capture } from './process.js';
import { REPO_ROOT } from './repo.js';

export interface VendorTarball {
  /** Absolute path of the tarball. */
  path: string;
  /** `core-runtime-0.1.0-1a2b3c4d5e6f.tgz` */
  fileName: string;
  /** `@core/runtime` */
  packageName: string;
  version: string;
}

/** A vendored package could not be built or packed; the message says which and why. */
export class VendorBuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VendorBuildError';
  }
}

const KEEP_CACHED = 5;

export interface PackOptions {
  packageName: string;
  version: string;
  /** What the package is built from, hashed (12 hex characters). */
  hash: string;
  /** Writes the package's files (package.json included) into the folder it is given. */
  fill: (packageDir: string) => Promise<void>;
  onStep?: (line: string) => void;
}

/** `@core/runtime` → `core-runtime`: the stem of its tarball's name and of its cache folder. */
export function tarballStem(packageName: string): string {
  return packageName.replace(/^@/, '').replace('/', '-');
}

/** The tarball for this hash: from the cache, or built and packed now. */
export async function cachedPack(options: PackOptions): Promise<VendorTarball> {
  const stem = tarballStem(options.packageName);
  const fileName = `${stem}-${options.version}-${options.hash}.tgz`;
  const cache = join(REPO_ROOT, 'node_modules', '.cache', stem);
  const cached = join(cache, fileName);
  const result = { path: cached, fileName, packageName: options.packageName, version: options.version };
  if (existsSync(cached)) {
    utimesSync(cached, new Date(), new Date()); // recently used: kept by `prune`
    return result;
  }
  options.onStep?.(`Packing ${options.packageName}@${options.version} (once per change of its sources)…`);
  const staging = mkdtempSync(join(tmpdir(), `${stem}-pack-`));
  try {
    await options.fill(join(staging, 'package'));
    const tgz = await pack(join(staging, 'package'), staging, options.packageName);
    mkdirSync(cache, { recursive: true });
    const tmp = `${cached}.${process.pid}.tmp`;
    copyFileSync(tgz, tmp);
    renameSync(tmp, cached); // atomic: a concurrent run sees the whole file or none
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  prune(cache);
  return result;
}

/** `npm pack` of a folder into `destination`; returns the tarball's path. */
export async function pack(packageDir: string, destination: string, packageName: string): Promise<string> {
  // --ignore-scripts: a `prepack` script would rebuild from sources that are not in the folder.
  const { code, stdout, stderr } = await capture(
    'npm',
    ['pack', packageDir, '--pack-destination', destination, '--ignore-scripts', '--json'],
    {
      cwd: destination,
    },
  );
  if (code !== 0)
    throw new VendorBuildError(
      `npm pack of ${packageName} failed (exit ${code}): ${stderr.trim().split('\n').pop() ?? ''}`,
    );
  const [entry] = JSON.parse(stdout) as { filename: string }[];
  if (!entry) throw new VendorBuildError(`npm pack of ${packageName} printed no file name`);
  return join(destination, entry.filename);
}

/**
 * sha256 over the files' repository paths and contents (a missing file counts as empty) and over
 * `also` (other inputs, such as the name of a tarball the package carries), 12 hex characters.
 */
export function hashFiles(files: readonly string[], also: readonly string[] = []): string {
  const hash = createHash('sha256');
  for (const text of also) hash.update(text).update('\0');
  for (const file of files) {
    hash.update(relative(REPO_ROOT, file).split(sep).join('/')).update('\0');
    hash.update(existsSync(file) ? readFileSync(file) : '').update('\0');
  }
  return hash.digest('hex').slice(0, 12);
}

/** Every file under `dir`, sorted, but tests and what `skip` rejects (a folder or file name). */
export function listFiles(dir: string, skip: (name: string) => boolean = () => false): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (skip(entry.name) || entry.name.endsWith('.test.ts')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(path, skip));
    else out.push(path);
  }
  return out;
}

/** Keeps the most recent tarballs; older ones belong to sources that no longer exist. */
function prune(cache: string): void {
  const tarballs = readdirSync(cache)
    .filter((name) => name.endsWith('.tgz'))
    .map((name) => ({ name, time: statSync(join(cache, name), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
    .sort((a, b) => b.time - a.time);
  for (const old of tarballs.slice(KEEP_CACHED)) rmSync(join(cache, old.name), { force: true });
}
