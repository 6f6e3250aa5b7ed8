/**
 * `src/apps/resource.schema.json`: the manifest JSON Schema, which every manifest names in its
 * `$schema` ("../resource.schema.json") so editors complete and check manifests. Written from the
 * CLI's own schema by `core startapp` and `core generate`, so it follows the CLI's version.
 */
import { jsonText } from '../engine/json.js';
import { ManifestSchema } from '../manifest/schema.js';
import { MANIFEST_SCHEMA_FILE } from './root.js';

export function manifestSchemaFile(): { path: string; content: string } {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $comment: 'Written by `core startapp` and `core generate`; edits are overwritten.',
    title: 'Core resource manifest',
    ...ManifestSchema,
  };
  return { path: MANIFEST_SCHEMA_FILE, content: jsonText(schema) };
}
