/**
 * `npm run docs:manifest`: writes docs/manifest.md from the manifest schema. Run it after changing
 * generator/manifest/schema.ts; the test suite fails while the committed page is stale.
 */
import { writeFileSync } from 'node:fs';
import { manifestReference } from '../manifest/reference.js';

const target = new URL('../../docs/manifest.md', import.meta.url);
writeFileSync(target, manifestReference());
process.stdout.write('docs/manifest.md written\n');
