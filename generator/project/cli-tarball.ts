/**
 * The `core` CLI travels with every project too, as `@core/cli` under `vendor/`, a devDependency
 * whose `core` bin `npx core …` finds: a project needs nothing from the Core repository to generate,
 * migrate and serve, on any machine that reaches the npm registry.
 *
 * The package holds what the CLI reads at run time, laid out as in the repository so `repo.ts` finds
 * it the same way: the bundle (`dist/`, built by esbuild like `bin/core.js` does, npm packages left
 * external), `templates/`, `fixtures/specs/tasks.resource.json` (`startapp --template`), and the
 * runtime tarball it was packed with under `runtime/` (`core init` from inside a project). Its
 * dependencies are the packages the bundle imports, at the versions this repository pins, so npm
 * installs the same copies the project already has. Named and cached by a hash of its sources
 * (`vendor-tarball.ts`).
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PACKAGED, PACKAGED_MARKER, REPO_ROOT } from './repo.js';
import type { RuntimeTarball } from './runtime-tarball.js';
import {
  cachedPack,
  hashFiles,
  listFiles,
  pack,
  tarballStem,
  VendorBuildError,
  type VendorTarball,
} from './vendor-tarball.js';

export const CLI_PACKAGE = '@core/cli';
const ENTRY = 'generator/cli/main.ts';
const TEMPLATE_MANIFEST = 'fixtures/specs/tasks.resource.json';
/** Loaded with `require` at run time (`ast/ts-morph.ts`), so the bundle's imports do not name it. */
const REQUIRED_AT_RUN_TIME = ['ts-morph'];

/** The CLI package for the current sources and the given runtime tarball. */
export async function cliTarball(
  runtime: RuntimeTarball,
  onStep: (line: string) => void = () => {},
): Promise<VendorTarball> {
  if (PACKAGED) return repack();
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const sources = [
    ...listFiles(join(REPO_ROOT, 'generator'), (name) => name === 'dist' || name === 'scripts'),
    ...listFiles(join(REPO_ROOT, 'templates')),
    join(REPO_ROOT, TEMPLATE_MANIFEST),
    join(REPO_ROOT, 'package.json'),
  ];
  // The runtime tarball's name is a hash of the runtime's sources, some of which the bundle holds too.
  const hash = hashFiles(sources, [runtime.fileName]);
  return cachedPack({ packageName: CLI_PACKAGE, version, hash, onStep, fill: (dir) => fill(dir, version, runtime) });
}

async function fill(dir: string, version: string, runtime: RuntimeTarball): Promise<void> {
  const esbuild = await import('esbuild');
  let metafile: import('esbuild').Metafile;
  try {
    ({ metafile } = await esbuild.build({
      absWorkingDir: REPO_ROOT,
      entryPoints: { core: ENTRY },
      outdir: join(dir, 'dist'),
      outExtension: { '.js': '.mjs' },
      chunkNames: '[name]-[hash]',
      bundle: true,
      splitting: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20.19',
      metafile: true,
      logLevel: 'silent',
    }));
  } catch (error) {
    const first = (error as { errors?: { text: string }[] }).errors?.[0]?.text ?? (error as Error).message;
    throw new VendorBuildError(`could not bundle the CLI: ${first}`);
  } finally {
    await esbuild.stop();
  }
  const imported = Object.values(metafile.outputs).flatMap((output) =>
    output.imports.filter((i) => i.external).map((i) => i.path),
  );
  const dependencies = pinned([...imported, ...REQUIRED_AT_RUN_TIME]);

  cpSync(join(REPO_ROOT, 'templates'), join(dir, 'templates'), { recursive: true });
  mkdirSync(dirname(join(dir, TEMPLATE_MANIFEST)), { recursive: true });
  cpSync(join(REPO_ROOT, TEMPLATE_MANIFEST), join(dir, TEMPLATE_MANIFEST));
  mkdirSync(join(dir, 'runtime'));
  cpSync(runtime.path, join(dir, 'runtime', runtime.fileName));
  const { path: _path, ...carried } = runtime;
  writeFileSync(join(dir, PACKAGED_MARKER), `${JSON.stringify(carried, null, 2)}\n`);
  mkdirSync(join(dir, 'bin'));
  writeFileSync(join(dir, 'bin', 'core.js'), BIN, { mode: 0o755 });
  const manifest = {
    name: CLI_PACKAGE,
    version,
    description: 'The core command: generate apps from manifests, migrate, serve (vendored from the Core repository).',
    type: 'module',
    engines: { node: '>=20.19.0' },
    bin: { core: 'bin/core.js' },
    dependencies,
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The launcher: the same Node check as the repository's `bin/core.js`, then the prebuilt bundle. */
const BIN = `#!/usr/bin/env node
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(\`core: Node.js >= 20.19.0 is required; this is \${process.version}. Install a newer Node.js.\\n\`);
  process.exit(1);
}
if (process.env.CORE_DEBUG && process.env.CORE_DEBUG !== '0') process.setSourceMapsEnabled(true);
await import('../dist/core.mjs');
`;

/** Package names of the bundle's imports (`typebox/compile` → `typebox`), at this repository's pinned versions. */
function pinned(imports: readonly string[]): Record<string, string> {
  const read = (file: string) =>
    JSON.parse(readFileSync(join(REPO_ROOT, file), 'utf8')) as Record<string, Record<string, string> | undefined>;
  const root = read('package.json');
  const runtime = read('runtime/package.json');
  const versions = { ...runtime.dependencies, ...root.devDependencies, ...root.dependencies };
  const out: Record<string, string> = {};
  for (const spec of imports) {
    if (spec.startsWith('node:')) continue;
    const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
    const version = versions[name];
    if (!version)
      throw new VendorBuildError(
        `the CLI imports ${name}, which neither package.json of the repository pins; add it there`,
      );
    out[name] = version;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Inside a project, the running CLI is the installed package itself: packed again for a new project
 * (`npm pack` is deterministic, so the content matches the original) and named by its own hash.
 */
async function repack(): Promise<VendorTarball> {
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const staging = mkdtempSync(join(tmpdir(), 'core-cli-repack-'));
  const tgz = await pack(REPO_ROOT, staging, CLI_PACKAGE);
  const fileName = `${tarballStem(CLI_PACKAGE)}-${version}-${createHash('sha256').update(readFileSync(tgz)).digest('hex').slice(0, 12)}.tgz`;
  renameSync(tgz, join(staging, fileName));
  process.once('exit', () => rmSync(staging, { recursive: true, force: true }));
  return { path: join(staging, fileName), fileName, packageName: CLI_PACKAGE, version };
}
