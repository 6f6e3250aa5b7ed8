/**
 * `--profile` and `--instructions` name each JavaScript frame by its source file, through the bundle's
 * source map. The baselines are ES modules (`file://` URLs); the Core server's start script compiles
 * its CommonJS bundle with `vm.Script`, whose frames carry a plain path. Both must map back.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../bench/lib/config.js';
import { SourceResolver } from '../../bench/lib/cpu-profile.js';

// In the bench's own (ignored) build folder, under the repository: the answer is relative to it.
mkdirSync(join(ROOT, 'bench/.build'), { recursive: true });
const dir = mkdtempSync(join(ROOT, 'bench/.build/resolver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SourceResolver', () => {
  it('maps a frame of a bundle to its source, by file:// URL and by plain path', async () => {
    const source = join(dir, 'layer.ts');
    writeFileSync(source, 'export function layer(n: number): number {\n  return n * 2;\n}\n');
    const bundle = join(dir, 'bundle.cjs');
    await build({
      entryPoints: [source],
      outfile: bundle,
      bundle: true,
      format: 'cjs',
      sourcemap: true,
      logLevel: 'error',
    });
    const text = readFileSync(bundle, 'utf8').split('\n');
    const line = text.findIndex((l) => l.includes('n * 2'));
    expect(line).toBeGreaterThan(0);
    const frame = { functionName: 'layer', lineNumber: line, columnNumber: text[line]!.indexOf('n * 2') };
    const expected = relative(ROOT, source);
    const resolver = new SourceResolver();
    expect(resolver.resolve({ ...frame, url: bundle })).toBe(expected);
    expect(resolver.resolve({ ...frame, url: pathToFileURL(bundle).href })).toBe(expected);
    expect(resolver.resolve({ ...frame, url: 'node:internal/streams/readable' })).toBe(
      'node:internal/streams/readable',
    );
  });
});
