import { isPathRestricted, type PathHop } from '../context/restrictions.js';
import { forbidden, invalid } from './issues.js';
import type { ColumnInfo, ModelInfo, RelationInfo } from './model-info.js';

/** A dot-path (`comments.author.name`) resolved against the model graph. */
export interface FieldPath {
  /** Relations walked, in order; empty for a column of the root model. */
  readonly relations: readonly RelationInfo[];
  /** The column at the end of the path, on `owner`. */
  readonly column: ColumnInfo;
  readonly owner: ModelInfo;
  /**
   * Set when `project.id` was read as the foreign key `project_id`: the path as written, through the
   * join. A relation path must take it when the related row may be hidden from the caller.
   */
  readonly joined?: FieldPath;
}

export interface RelationPath {
  readonly relations: readonly RelationInfo[];
  /** The model at the start of each hop, plus the final target: `models.length === relations.length + 1`. */
  readonly models: readonly ModelInfo[];
}

function listNames(names: Iterable<string>): string {
  const all = [...names];
  return all.length === 0 ? '(none)' : all.join(', ');
}

function checkDepth(segments: readonly string[], hops: number, maxHops: number, jsonPath: string): void {
  if (segments.some((s) => s === '')) {
    throw invalid(
      jsonPath,
      `'${segments.join('.')}' has an empty segment; write names separated by single dots`,
      'unknown_field',
    );
  }
  if (hops > maxHops) {
    throw invalid(
      jsonPath,
      `'${segments.join('.')}' crosses ${hops} relations; the limit is ${maxHops}`,
      'path_too_deep',
    );
  }
}

/** Walks `segments` as relations from `root`, naming the first unknown one. */
function walkRelations(root: ModelInfo, segments: readonly string[], jsonPath: string): RelationPath {
  const relations: RelationInfo[] = [];
  const models: ModelInfo[] = [root];
  let model = root;
  for (const name of segments) {
    const rel = model.relations.get(name);
    if (!rel) {
      throw invalid(
        jsonPath,
        `'${name}' is not a relation of ${model.namespace}; relations: ${listNames(model.relations.keys())}`,
        'unknown_relation',
      );
    }
    relations.push(rel);
    model = rel.target();
    models.push(model);
  }
  return { relations, models };
}

/**
 * Resolves a filter or sort field. `project.id` is rewritten to the foreign key `project_id` (no join
 * needed). Throws ValidationError for unknown names and ForbiddenError when any hop is restricted —
 * including a restricted relation hiding its foreign key, and `<target>.<field>` entries.
 */
export function resolveFieldPath(
  root: ModelInfo,
  path: string,
  jsonPath: string,
  maxHops: number,
  restricted: ReadonlySet<string>,
): FieldPath {
  const segments = path.split('.');
  checkDepth(segments, segments.length - 1, maxHops, jsonPath);
  const { relations, models } = walkRelations(root, segments.slice(0, -1), jsonPath);
  const owner = models[models.length - 1]!;
  const name = segments[segments.length - 1]!;
  const column = owner.fields.get(name);
  if (!column) {
    const hint = owner.relations.has(name)
      ? `'${name}' is a relation of ${owner.namespace}: name one of its fields (e.g. '${[...segments.slice(0, -1), name, 'id'].join('.')}')`
      : `'${name}' is not a field of ${owner.namespace}; fields: ${listNames(owner.fields.keys())}`;
    throw invalid(jsonPath, hint, 'unknown_field');
  }
  const hops = relationHops(relations, models);
  const candidates: PathHop[][] = [[...hops, { namespace: owner.namespace, name: column.key }]];
  if (column.relation) candidates.push([...hops, { namespace: owner.namespace, name: column.relation }]);

  let resolved: FieldPath = { relations, column, owner };
  const last = relations[relations.length - 1];
  if (last && last.join.type === 'local' && column.primary) {
    // `project.id` is `project_id`: use the key on the previous model and skip the join.
    const prev = models[models.length - 2]!;
    const fk = prev.fields.get(`${last.name}_id`);
    if (fk) {
      resolved = { relations: relations.slice(0, -1), column: fk, owner: prev, joined: resolved };
      candidates.push([...hops.slice(0, -1), { namespace: prev.namespace, name: fk.key }]);
    }
  }
  if (restricted.size > 0 && candidates.some((hopsOf) => isPathRestricted(restricted, hopsOf))) {
    throw forbidden(jsonPath, path);
  }
  return resolved;
}

/** Resolves an include path: every segment must be a relation. */
export function resolveRelationPath(
  root: ModelInfo,
  path: string,
  jsonPath: string,
  maxHops: number,
  restricted: ReadonlySet<string>,
): RelationPath {
  const segments = path.split('.');
  checkDepth(segments, segments.length, maxHops, jsonPath);
  const resolved = walkRelations(root, segments, jsonPath);
  if (restricted.size > 0 && isPathRestricted(restricted, relationHops(resolved.relations, resolved.models))) {
    throw forbidden(jsonPath, path);
  }
  return resolved;
}

/** The restriction hops of a relation chain: (namespace of the model at that point, relation name). */
export function relationHops(relations: readonly RelationInfo[], models: readonly ModelInfo[]): PathHop[] {
  return relations.map((rel, i) => ({ namespace: models[i]!.namespace, name: rel.name }));
}

/** Whether `column` of the model reached through `hops` is restricted (its own entry or, for a key, its relation's). */
export function isColumnRestricted(
  restricted: ReadonlySet<string>,
  hops: readonly PathHop[],
  namespace: string,
  column: ColumnInfo,
): boolean {
  if (restricted.size === 0) return false;
  if (isPathRestricted(restricted, [...hops, { namespace, name: column.key }])) return true;
  return column.relation !== undefined && isPathRestricted(restricted, [...hops, { namespace, name: column.relation }]);
}
