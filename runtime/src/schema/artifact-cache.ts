import type { SchemaInfo } from './schema-info.js';

/**
 * Compiled artifacts of one kind, per schema and per key (the restriction scope's key, plus a mode
 * where one applies). Built on first use and kept for the process: keys come from the policy's
 * finite set of restriction entries, so the cache is bounded by the roles in use, not by requests.
 */
export class ArtifactCache<T> {
  private readonly bySchema = new WeakMap<SchemaInfo, Map<string, T>>();

  get(info: SchemaInfo, key: string, build: () => T): T {
    let perSchema = this.bySchema.get(info);
    if (!perSchema) {
      perSchema = new Map();
      this.bySchema.set(info, perSchema);
    }
    let artifact = perSchema.get(key);
    if (artifact === undefined) {
      artifact = build();
      perSchema.set(key, artifact);
    }
    return artifact;
  }
}
