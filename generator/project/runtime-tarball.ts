/**
 * The runtime package (`@core/runtime`) travels with every project as an `npm pack` tarball under
 * `vendor/`, installed as `file:vendor/<name>.tgz` (`vendor-tarball.ts`: naming and cache). A
 * `file:../runtime` link is not an option: Node would resolve the runtime's imports from the
 * repository and load a second `@mikro-orm/core`, whose metadata the app's entities would not be registered in.
 *
 * The build goes to a private folder (tsc), so the runtime's own `dist/` is never touched and
 * concurrent runs and other engineers' builds do not collide. The packed CLI (`cli-tarball.ts`)
 * carries the tarball it was packed with instead of the runtime's sources.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { capture } from './process.js';
import { PACKAGED, PACKAGED_MARKER, REPO_ROOT } from './repo.js';
import { cachedPack, hashFiles, listFiles, VendorBuildError, type VendorTarball } from './vendor-tarball.js';

export type RuntimeTarball = VendorTarball;

const RUNTIME = join(REPO_ROOT, 'runtime');
/** Everything the built package depends on besides `runtime/src`. */
const CONFIG_FILES = [
  'runtime/package.json',
  'runtime/tsconfig.json',
  'runtime/tsconfig.build.json',
  'tsconfig.base.json',
];

interface RuntimeManifest {
  name: string;
  version: string;
}

/** The tarball for the runtime's current sources: from the cache, or built and packed now. */
export async function runtimeTarball(onStep: (line: string) => void = () => {}): Promise<RuntimeTarball> {
  if (PACKAGED) {
    const carried = JSON.parse(readFileSync(join(REPO_ROOT, PACKAGED_MARKER), 'utf8')) as Omit<VendorTarball, 'path'>;
    return { ...carried, path: join(REPO_ROOT, 'runtime', carried.fileName) };
  }
  const manifest = JSON.parse(readFileSync(join(RUNTIME, 'package.json'), 'utf8')) as RuntimeManifest;
  return cachedPack({ packageName: manifest.name, version: manifest.version, hash: sourceHash(), fill: build, onStep });
}

/** Hash of the runtime's sources and build configuration. */
export function sourceHash(): string {
  return hashFiles([...CONFIG_FILES.map((f) => join(REPO_ROOT, f)), ...listFiles(join(RUNTIME, 'src'))]);
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
    throw new VendorBuildError(
      `could not build the runtime package (tsc exited with ${code}): ${first.trim() || 'no output'}`,
    );
  }
  writeFileSync(join(packageDir, 'package.json'), readFileSync(join(RUNTIME, 'package.json')));
  for (const extra of ['README.md', 'LICENSE']) {
    if (existsSync(join(RUNTIME, extra))) copyFileSync(join(RUNTIME, extra), join(packageDir, extra));
  }
}
