/**
 * User-owned files are the user's: after a change of every manifest value that reaches them (`prefix`,
 * `tags`, `expose_schemas`, `pagination`, `ids_field`) and of the fields, `core generate` leaves
 * routers.ts, repositories.ts, services.ts and plugin.ts byte for byte as they were and carries the
 * change through the generated config.ts. Run over the expected tree of every golden case (the
 * relation graph's is also what test/relations serves), as `core generate` runs.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GOLDEN_DIR, listCases, readCase, readTree, runGoldenCase } from './golden-runner.js';

const USER_FILES = /^src\/apps\/[\w-]+\/(routers|repositories|services|plugin)\.ts$/;

/** Every manifest value the router and repository read, changed; plus a new field. */
function changeManifest(manifest: Record<string, unknown>): void {
  const name = manifest.name as string;
  manifest.prefix = `/changed-${name}`;
  manifest.tags = [name, 'changed'];
  manifest.expose_schemas = manifest.expose_schemas !== true;
  manifest.pagination = { default_limit: 7, max_limit: 70 };
  (manifest.fields as Record<string, unknown>).extra_note = { type: 'text', nullable: true };
  for (const relation of Object.values((manifest.relations ?? {}) as Record<string, Record<string, unknown>>))
    if (relation.kind === 'many-to-many' && relation.ids_field !== undefined) relation.ids_field = 'changed_ids';
}

describe.each(listCases())('golden case %s, generated, then its manifests changed', (name) => {
  it('core generate leaves every user-owned file byte-identical; config.ts follows the manifest', async () => {
    const spec = readCase(name);
    const root = mkdtempSync(join(tmpdir(), `core-user-files-${name}-`));
    try {
      cpSync(join(GOLDEN_DIR, name, 'expected'), root, { recursive: true });
      for (const app of spec.apps) {
        const path = join(root, 'src/apps', app, `${app}.resource.json`);
        const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
        changeManifest(manifest);
        writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
      }
      const before = readTree(root);

      const changes = await runGoldenCase(root, { ...spec, command: 'generate' });

      const after = readTree(root);
      const userFiles = [...before.keys()].filter((path) => USER_FILES.test(path));
      expect(userFiles).toHaveLength(spec.apps.length * 4);
      for (const path of userFiles) {
        expect(after.get(path), path).toBe(before.get(path));
        expect(changes.find((c) => c.path === path)?.kind, path).toBe('UNCHANGED');
      }
      for (const app of spec.apps) {
        const config = after.get(`src/apps/${app}/config.ts`)!;
        expect(config).toContain(`prefix: '/changed-${app}'`);
        expect(config).toContain(`tags: ['${app}', 'changed']`);
        expect(config).toContain('reader: { defaultLimit: 7, maxLimit: 70 }');
        expect(after.get(`src/apps/${app}/models.ts`)).toContain('declare extra_note: string | null;');
      }
      if (name === 'relation-graph')
        expect(after.get('src/apps/tasks/config.ts')).toContain("relationKeys: { labels: 'changed_ids' }");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
