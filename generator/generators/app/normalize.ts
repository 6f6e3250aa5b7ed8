/**
 * Everything the app's files are rendered from, computed once from the manifest and the project's
 * other manifests: name variants, field roles, resolved relations, router and reader settings. The
 * file builders and templates only read this; none of them re-derives a name or a rule.
 *
 * Also the generator's own manifest checks — what the manifest validator cannot know because it needs
 * the generator's choices or the other manifests — thrown as a `ManifestError` naming JSON paths.
 */
import type { Manifest } from '../../manifest/schema.js';
import { ManifestError, type ManifestIssue } from '../../manifest/validate.js';
import { nameVariants, type NameVariants } from '../../engine/names.js';
import { fieldInfo, type FieldInfo } from './fields.js';
import { resolveRelations, type ResolvedRelation } from './relations.js';

export interface GenerateAppOptions {
  module: string;
  dir: string;
  manifestPath: string;
  manifests: ReadonlyMap<string, Manifest>;
  /** `core startapp --template`: the service gets the starter task resource's business rules. */
  template?: boolean;
  /** Resource name → app folder, when a manifest's `name` differs from its folder. */
  modules?: ReadonlyMap<string, string>;
}

export interface ReaderLimits {
  readonly defaultLimit?: number;
  readonly maxLimit?: number;
}

export interface AppModel {
  readonly module: string;
  readonly dir: string;
  readonly manifestPath: string;
  /** The manifest's file name, for banners: `tasks.resource.json`. */
  readonly manifestFile: string;
  readonly template: boolean;
  readonly names: NameVariants;
  readonly manifest: Manifest;
  /** In manifest order. */
  readonly fields: readonly FieldInfo[];
  readonly primary: FieldInfo;
  /** Declared relations in manifest order, then the inverse sides other manifests imply. */
  readonly relations: readonly ResolvedRelation[];
  readonly prefix: string;
  readonly tags: readonly string[];
  readonly exposeSchemas: boolean;
  /** The manifest's `pagination`, as the repository's reader options (undefined: runtime defaults). */
  readonly reader: ReaderLimits | undefined;
  /** Every manifest (this one included) and the app folder of each, for relation targets. */
  readonly manifests: ReadonlyMap<string, Manifest>;
  readonly modules: ReadonlyMap<string, string>;
}

export function normalizeApp(manifest: Manifest, options: GenerateAppOptions): AppModel {
  const manifests = new Map(options.manifests).set(manifest.name, manifest);
  const modules = new Map([...manifests.keys()].map((name) => [name, options.modules?.get(name) ?? name]));
  modules.set(manifest.name, options.module);

  const fields = Object.entries(manifest.fields).map(([name, spec]) => fieldInfo(name, spec));
  const { relations, issues } = resolveRelations(manifest, manifests, modules);
  issues.unshift(...fieldIssues(fields));
  if (issues.length > 0) throw new ManifestError(options.manifestPath, issues);

  const { default_limit: defaultLimit, max_limit: maxLimit } = manifest.pagination ?? {};
  const reader =
    defaultLimit === undefined && maxLimit === undefined
      ? undefined
      : { ...(defaultLimit === undefined ? {} : { defaultLimit }), ...(maxLimit === undefined ? {} : { maxLimit }) };

  return {
    module: options.module,
    dir: options.dir,
    manifestPath: options.manifestPath,
    manifestFile: options.manifestPath.split('/').pop()!,
    template: options.template === true,
    names: nameVariants(manifest.entity, manifest.name, options.module),
    manifest,
    fields,
    primary: fields.find((f) => f.primary)!, // the validator guarantees exactly one
    relations,
    prefix: manifest.prefix ?? `/${manifest.name}`,
    tags: manifest.tags ?? [manifest.name],
    exposeSchemas: manifest.expose_schemas ?? false,
    reader,
    manifests,
    modules,
  };
}

const NUMERIC = new Set(['integer', 'float']);
const TEXTUAL = new Set(['string', 'text']);

/** Field rules that depend on how the generator maps fields (see the table in generator/README.md). */
function fieldIssues(fields: readonly FieldInfo[]): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  for (const f of fields) {
    const at = `$.fields.${f.name}`;
    const s = f.spec;
    if (s.auto !== undefined && f.type !== 'datetime')
      add(`${at}.auto`, `"auto" sets a timestamp and applies to datetime fields, this one is "${f.type}"`);
    if (s.min_length !== undefined && !TEXTUAL.has(f.type))
      add(`${at}.min_length`, `"min_length" applies to string and text fields, this one is "${f.type}"`);
    for (const bound of ['minimum', 'maximum'] as const) {
      if (s[bound] === undefined || NUMERIC.has(f.type)) continue;
      const hint = f.type === 'decimal' ? ' (decimals travel as strings, so JSON Schema bounds cannot check them)' : '';
      add(`${at}.${bound}`, `"${bound}" applies to integer and float fields, this one is "${f.type}"${hint}`);
    }
    if (f.primary && s.output === false)
      add(`${at}.output`, 'the primary key is always returned (it is in every URL); remove "output": false');
    const setBySomeone = f.inCreate || f.generated || f.nullable || s.default !== undefined;
    if (!setBySomeone) {
      const why = s.readonly ? '"readonly"' : '"create": false';
      add(
        at,
        `is ${why}, not nullable, and has no default or "auto": nothing could set it when a record is created; add a "default", "nullable": true or "auto"`,
      );
    }
  }
  return issues;

  function add(path: string, message: string): void {
    issues.push({ path, message });
  }
}
