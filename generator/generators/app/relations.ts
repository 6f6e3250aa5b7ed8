/**
 * Relations of one resource, as its model and schemas need them, resolved across every manifest of
 * the project (see README.md in this folder for the pairing rules). A relation is declared once —
 * on either side — and the other side follows: `tasks.project` (many-to-one, `inverse: "tasks"`)
 * gives projects a `tasks` collection without a word in projects' manifest.
 *
 * Problems are reported as manifest issues of the resource being generated, with JSON paths.
 */
import type { Manifest, RelationKind, RelationSpec } from '../../manifest/schema.js';
import type { ManifestIssue } from '../../manifest/validate.js';
import { singular } from '../../engine/names.js';

export type DeleteRule = 'restrict' | 'cascade' | 'set null';

/** The resource at the other end of a relation. */
export interface RelatedResource {
  /** Table / manifest name, e.g. `projects`. */
  readonly table: string;
  readonly entity: string;
  /** Folder under `src/apps/` (imports: `../<module>/models.js`). */
  readonly module: string;
  /** Primary key name and type. */
  readonly pk: { readonly name: string; readonly type: string };
}

export interface ResolvedRelation {
  /** Property name on this model (and relation name in the Out schema). */
  readonly name: string;
  readonly kind: RelationKind;
  readonly target: RelatedResource;
  /**
   * This side holds the foreign key (many-to-one, owning one-to-one: `<name>_id`) or the pivot table
   * (owning many-to-many: `<singular>_ids`), so the key is writable here.
   */
  readonly owner: boolean;
  /** Inverse sides: the owning property on the target. */
  readonly mappedBy?: string;
  /** Owning one-to-one / many-to-many with a named inverse: the inverse property on the target. */
  readonly inversedBy?: string;
  /** To-one: may be empty. */
  readonly nullable: boolean;
  /** Owning to-one: what deleting the target does to this row. */
  readonly onDelete?: DeleteRule;
  /** The wire key of an owning side: `project_id`, `label_ids` (or the manifest's `ids_field`). */
  readonly key?: string;
  /** Owning many-to-many with an `ids_field` that differs from the default (the repository's `relationKeys`). */
  readonly customKey: boolean;
  /** Declared in this manifest (false: implied by the target's declaration of its inverse). */
  readonly declared: boolean;
  /** Where it is declared, for comments: `tasks.project`. */
  readonly origin: string;
}

export interface RelationResolution {
  readonly relations: ResolvedRelation[];
  readonly issues: ManifestIssue[];
}

/** Resolves the relations of `manifest` (one of `manifests`); `modules` maps names to app folders. */
export function resolveRelations(
  manifest: Manifest,
  manifests: ReadonlyMap<string, Manifest>,
  modules: ReadonlyMap<string, string>,
): RelationResolution {
  const issues: ManifestIssue[] = [];
  const relations: ResolvedRelation[] = [];
  const here = manifest.name;
  const resource = (table: string): RelatedResource | undefined => {
    const target = table === here ? manifest : manifests.get(table);
    if (!target) return undefined;
    const [pkName, pk] = Object.entries(target.fields).find(([, f]) => f.primary) ?? ['id', { type: 'uuid' }];
    return { table, entity: target.entity, module: modules.get(table) ?? table, pk: { name: pkName, type: pk.type } };
  };
  const declaredOn = (table: string): Readonly<Record<string, RelationSpec>> =>
    (table === here ? manifest.relations : manifests.get(table)?.relations) ?? {};

  for (const [name, spec] of Object.entries(manifest.relations ?? {})) {
    const at = `$.relations.${name}`;
    const target = resource(spec.target);
    if (!target) {
      issues.push({
        path: `${at}.target`,
        message: `no resource named "${spec.target}" (known: ${[...manifests.keys()].sort().join(', ')})`,
      });
      continue;
    }
    const other = declaredOn(spec.target);
    const counterpart = findCounterpart(other, here, name, spec);
    const base = {
      name,
      kind: spec.kind,
      target,
      declared: true,
      origin: `${here}.${name}`,
      customKey: false,
    } as const;

    switch (spec.kind) {
      case 'many-to-one': {
        if (counterpart && counterpart.spec.kind !== 'one-to-many') {
          issues.push({
            path: `${at}.inverse`,
            message: `${spec.target}.${counterpart.name} is a ${counterpart.spec.kind} relation; the inverse of a many-to-one is a one-to-many`,
          });
        }
        const nullable = spec.nullable ?? false;
        relations.push({
          ...base,
          owner: true,
          nullable,
          onDelete: spec.on_delete ?? defaultDeleteRule(nullable),
          key: `${name}_id`,
        });
        break;
      }
      case 'one-to-many': {
        const back = spec.inverse === undefined ? undefined : other[spec.inverse];
        if (back?.kind !== 'many-to-one' || back.target !== here) {
          issues.push({
            path: `${at}.inverse`,
            message: `${spec.target} has no many-to-one relation "${spec.inverse}" to ${here}; add "${spec.inverse}": { "kind": "many-to-one", "target": "${here}" } to the ${spec.target} manifest`,
          });
          continue;
        }
        if (back.inverse !== undefined && back.inverse !== name) {
          issues.push({
            path: `${at}.inverse`,
            message: `${spec.target}.${spec.inverse} names its inverse "${back.inverse}", not "${name}"; make them agree`,
          });
          continue;
        }
        relations.push({ ...base, owner: false, nullable: true, mappedBy: spec.inverse! });
        break;
      }
      case 'one-to-one':
      case 'many-to-many': {
        const owner = ownsSide(spec, counterpart?.spec);
        if (owner === 'both' || owner === 'neither') {
          issues.push({
            path: `${at}.owner`,
            message:
              owner === 'both'
                ? `both ${here}.${name} and ${spec.target}.${counterpart!.name} claim to own the ${spec.kind} relation; set "owner": true on one side only`
                : `${here}.${name} is not the owner and ${spec.target} declares no owning side; remove "owner": false or declare the relation on ${spec.target} with "owner": true`,
          });
          continue;
        }
        if (counterpart && counterpart.spec.kind !== spec.kind) {
          issues.push({
            path: `${at}.inverse`,
            message: `${spec.target}.${counterpart.name} is a ${counterpart.spec.kind} relation, this one is ${spec.kind}`,
          });
          continue;
        }
        const inverse = spec.inverse ?? counterpart?.name;
        if (owner === 'this') {
          const many = spec.kind === 'many-to-many';
          const defaultKey = many ? `${singular(name)}_ids` : `${name}_id`;
          const key = many ? (spec.ids_field ?? defaultKey) : defaultKey;
          relations.push({
            ...base,
            owner: true,
            nullable: many ? true : (spec.nullable ?? false),
            ...(many ? {} : { onDelete: spec.on_delete ?? defaultDeleteRule(spec.nullable ?? false) }),
            ...(inverse === undefined ? {} : { inversedBy: inverse }),
            key,
            customKey: key !== defaultKey,
          });
        } else {
          if (spec.ids_field !== undefined)
            issues.push({
              path: `${at}.ids_field`,
              message: `only the owning side of a many-to-many takes ids; ${spec.target}.${counterpart!.name} owns this one`,
            });
          relations.push({ ...base, owner: false, nullable: true, mappedBy: counterpart!.name });
        }
        break;
      }
    }
    if (spec.inverse !== undefined) {
      const clash =
        spec.target === here ? manifest.fields[spec.inverse] : manifests.get(spec.target)?.fields[spec.inverse];
      if (clash)
        issues.push({
          path: `${at}.inverse`,
          message: `"${spec.inverse}" is already a field of ${spec.target}; choose another inverse name`,
        });
    }
  }

  relations.push(...impliedRelations(manifest, manifests, resource, issues));
  return { relations, issues };
}

/**
 * Without `on_delete`: a nullable key is cleared (`set null`); a required one blocks the delete
 * (`restrict`, a 409 CONFLICT) rather than deleting rows nobody asked to delete.
 */
function defaultDeleteRule(nullable: boolean): DeleteRule {
  return nullable ? 'set null' : 'restrict';
}

/** The target's relation that pairs with `here.name`: the one named by `inverse`, or one whose `inverse` is `name`. */
function findCounterpart(
  other: Readonly<Record<string, RelationSpec>>,
  here: string,
  name: string,
  spec: RelationSpec,
): { name: string; spec: RelationSpec } | undefined {
  if (spec.inverse !== undefined) {
    const named = other[spec.inverse];
    if (named && named.target === here) return { name: spec.inverse, spec: named };
    return undefined;
  }
  const pointing = Object.entries(other).find(
    ([n, r]) => r.target === here && r.inverse === name && !(n === name && spec === r),
  );
  return pointing ? { name: pointing[0], spec: pointing[1] } : undefined;
}

/** Who owns a one-to-one / many-to-many: `owner: true` wins; otherwise the side that is declared alone. */
function ownsSide(spec: RelationSpec, counterpart: RelationSpec | undefined): 'this' | 'other' | 'both' | 'neither' {
  if (!counterpart) return spec.owner === false ? 'neither' : 'this';
  const mine = spec.owner === true;
  const theirs = counterpart.owner === true;
  if (mine && theirs) return 'both';
  if (mine) return 'this';
  if (theirs) return 'other';
  if (spec.owner === false && counterpart.owner === false) return 'neither';
  if (spec.owner === false) return 'other';
  if (counterpart.owner === false) return 'this';
  return 'both'; // both declared, neither says: ambiguous
}

/**
 * The inverse sides other manifests (or this one, for self-references) declare for this resource
 * with `inverse`, unless this manifest declares that relation itself. Sorted by declaring table and
 * relation, so the output does not depend on the order manifests were loaded in.
 */
function impliedRelations(
  manifest: Manifest,
  manifests: ReadonlyMap<string, Manifest>,
  resource: (table: string) => RelatedResource | undefined,
  issues: ManifestIssue[],
): ResolvedRelation[] {
  const here = manifest.name;
  const all = new Map(manifests).set(here, manifest);
  const implied: ResolvedRelation[] = [];
  const tables = [...all.keys()].sort();
  for (const table of tables) {
    const other = all.get(table)!;
    for (const [name, spec] of Object.entries(other.relations ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (spec.target !== here || spec.inverse === undefined || spec.kind === 'one-to-many') continue;
      const inverse = spec.inverse;
      const mine = manifest.relations?.[inverse];
      if (mine) continue; // declared here: paired (and checked) from this side
      // An owning side that says it is not the owner has no partner to own it (reported on its own manifest).
      if ((spec.kind === 'one-to-one' || spec.kind === 'many-to-many') && spec.owner === false) continue;
      const origin = `${table}.${name}`;
      if (manifest.fields[inverse]) {
        issues.push({
          path: `$.fields.${inverse}`,
          message: `collides with the relation "${inverse}" that ${origin} declares as its inverse; rename one of them`,
        });
        continue;
      }
      if (implied.some((r) => r.name === inverse)) {
        issues.push({
          path: '$.relations',
          message: `two relations name "${inverse}" as their inverse on ${here} (${implied.find((r) => r.name === inverse)!.origin} and ${origin}); rename one`,
        });
        continue;
      }
      const target = resource(table)!;
      const kind: RelationKind = spec.kind === 'many-to-one' ? 'one-to-many' : spec.kind;
      implied.push({
        name: inverse,
        kind,
        target,
        owner: false,
        nullable: true,
        mappedBy: name,
        customKey: false,
        declared: false,
        origin,
      });
    }
  }
  return implied;
}
