import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { manifestReference } from '../../generator/manifest/reference.js';
import { FieldSchema, RelationSchema } from '../../generator/manifest/schema.js';
import { validateManifest } from '../../generator/manifest/validate.js';

const committed = readFileSync(new URL('../../docs/manifest.md', import.meta.url), 'utf8');

describe('docs/manifest.md', () => {
  it('is what the manifest schema renders today (run `npm run docs:manifest` after a schema change)', () => {
    expect(committed).toBe(manifestReference());
  });

  it('documents every field flag and relation key the validator accepts', () => {
    for (const key of [...Object.keys(FieldSchema.properties), ...Object.keys(RelationSchema.properties)]) {
      expect(committed, key).toContain(`| \`${key}\` |`);
    }
  });

  it('shows an example manifest that the validator accepts', () => {
    const example = /```json\n([\s\S]*?)\n```/.exec(committed)?.[1];
    expect(example).toBeDefined();
    expect(() => validateManifest(JSON.parse(example!), 'docs/manifest.md')).not.toThrow();
  });
});
