#!/usr/bin/env node
// The `core` command. The CLI is TypeScript (generator/cli/main.ts and what it imports); esbuild
// bundles it into generator/dist/<build>/ (npm packages stay external; each lazily imported command
// module becomes its own chunk, so `core --help` never loads ts-morph or the manifest validator), and
// rebuilds it (about 0.2 s) whenever one of its source files is newer than the build.
//
// Why not run the sources through a TypeScript loader such as tsx: Node 20's loader hooks cost a
// round trip per imported file, and the manifest validator's dependency (typebox, ~700 files) alone
// would add half a second to every command.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`core: Node.js >= 20.19.0 is required; this is ${process.version}. Install a newer Node.js.\n`);
  process.exit(1);
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = fileURLToPath(new URL('../cli/main.ts', import.meta.url));
const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
/** `{ entry: "<build>/core.mjs", builtAt, inputs: [repo-relative source files] }` of the current build. */
const CURRENT = join(DIST, 'current.json');
/** Old builds are removed only when this old: a `core` still running may lazily load their chunks. */
const KEEP_OLD_BUILDS_MS = 10 * 60_000;

function currentBuild() {
  if (!existsSync(CURRENT)) return null;
  const build = JSON.parse(readFileSync(CURRENT, 'utf8'));
  if (!existsSync(join(DIST, build.entry))) return null;
  const changed = build.inputs.some(
    (file) => !existsSync(join(ROOT, file)) || statSync(join(ROOT, file)).mtimeMs > build.builtAt,
  );
  return changed ? null : build;
}

async function build() {
  const esbuild = await import('esbuild');
  const id = `build-${Date.now()}-${process.pid}`;
  const builtAt = Date.now();
  let result;
  try {
    result = await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: { core: ENTRY },
      outdir: join(DIST, id),
      outExtension: { '.js': '.mjs' },
      chunkNames: '[name]-[hash]',
      bundle: true,
      splitting: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node20.19',
      sourcemap: 'inline',
      metafile: true,
      logLevel: 'silent',
    });
  } finally {
    // esbuild's service process must not outlive the build: `core run` keeps this process for hours.
    await esbuild.stop();
  }
  const current = { entry: `${id}/core.mjs`, builtAt, inputs: Object.keys(result.metafile.inputs) };
  // Renamed into place: a concurrent `core` reads the old description or the new one, never half.
  writeFileSync(`${CURRENT}.${process.pid}.tmp`, JSON.stringify(current));
  renameSync(`${CURRENT}.${process.pid}.tmp`, CURRENT);
  for (const entry of readdirSync(DIST, { withFileTypes: true })) {
    const path = join(DIST, entry.name);
    if (entry.isDirectory() && entry.name !== id && Date.now() - statSync(path).mtimeMs > KEEP_OLD_BUILDS_MS)
      rmSync(path, { recursive: true, force: true });
  }
  return current;
}

if (process.env.CORE_DEBUG && process.env.CORE_DEBUG !== '0') process.setSourceMapsEnabled(true);

let current = currentBuild();
if (!current) {
  try {
    current = await build();
  } catch (error) {
    const first = error?.errors?.[0];
    const where = first?.location ? `${first.location.file}:${first.location.line}: ` : '';
    process.stderr.write(`core: could not build the CLI: ${where}${first?.text ?? error?.message ?? error}\n`);
    process.exit(1);
  }
}
await import(pathToFileURL(join(DIST, current.entry)).href);
