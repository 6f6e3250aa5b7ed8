import type { PathHop } from '../context/restrictions.js';
import type { Database } from '../db/database.js';
import type { Decoder } from '../model/codecs.js';
import { type RelatedScoping, scoperOf, type WherePiece } from './filter-compiler.js';
import { JoinGraph, qualified, toManySource } from './joins.js';
import type { SearchLimits } from './limits.js';
import type { ModelInfo, RelationInfo } from '../model/model-info.js';
import { isColumnRestricted, resolveRelationPath } from '../model/paths.js';
import type { IncludeRef } from './request-shape.js';
import { AliasAllocator } from './sql-text.js';

/** One selected column: where its raw value is in a fetched row and how it becomes output. */
export interface SelectedColumn {
  readonly alias: string;
  /** The column, quoted, as the table names it (`"title"`). */
  readonly column: string;
  readonly key: string;
  readonly decode: Decoder | undefined;
  /** Selected for internal use only (a restricted primary key): never put into the output. */
  readonly hidden: boolean;
}

/** A selected column whose raw value needs its decoder. */
export type DecodedColumn = SelectedColumn & { readonly decode: Decoder };

/**
 * How to build one output object from a fetched row: its columns, its joined to-one relations (nested
 * objects from the same row) and its to-many relations (filled afterwards by select-in loaders).
 */
export interface ObjectPlan {
  readonly columns: readonly SelectedColumn[];
  /** The columns with a decoder: all that decoding a row in place has to visit. */
  readonly decoded: readonly DecodedColumn[];
  /** Alias of the primary key's raw value: null means a joined relation is absent; it keys loaders. */
  readonly pkAlias: string;
  readonly joined: readonly JoinedPlan[];
  readonly loaders: readonly LoaderPlan[];
}

export interface JoinedPlan {
  readonly key: string;
  readonly plan: ObjectPlan;
}

/**
 * A select-in loader: `head + (?, ?, …) + tail` reads the related rows of many parents in one
 * statement, each row carrying its parent's key as `__p`. Parameters: those of `headSlots` (scoped
 * joins), the parent keys, those of `tailSlots` (the related table's row scope), then a row cap.
 */
export interface LoaderPlan {
  readonly key: string;
  /** The include path, for error messages. */
  readonly path: string;
  readonly jsonPath: string;
  readonly head: string;
  readonly headSlots: readonly WherePiece[] | null;
  readonly tail: string;
  readonly tailSlots: readonly WherePiece[] | null;
  readonly plan: ObjectPlan;
}

export const PARENT_KEY = '__p';

export interface IncludeNode {
  readonly jsonPath: string;
  readonly path: string;
  readonly children: Map<string, IncludeNode>;
}
export type IncludeTree = Map<string, IncludeNode>;

export interface IncludeScope {
  readonly db: Database;
  readonly restricted: ReadonlySet<string>;
  readonly limits: Readonly<SearchLimits>;
  /** Row scopes of the included tables: hidden rows are left out (to-many) or read as null (to-one). */
  readonly scoping?: RelatedScoping;
}

/** Validates include paths (unknown → ValidationError, restricted → ForbiddenError) and merges them into a tree. */
export function buildIncludeTree(scope: IncludeScope, root: ModelInfo, refs: readonly IncludeRef[]): IncludeTree {
  const tree: IncludeTree = new Map();
  for (const ref of refs) {
    resolveRelationPath(root, ref.path, ref.jsonPath, scope.limits.maxPathDepth, scope.restricted);
    let level = tree;
    let path = '';
    for (const segment of ref.path.split('.')) {
      path = path ? `${path}.${segment}` : segment;
      let node = level.get(segment);
      if (!node) level.set(segment, (node = { jsonPath: ref.jsonPath, path, children: new Map() }));
      level = node.children;
    }
  }
  return tree;
}

export interface PlanTarget {
  readonly model: ModelInfo;
  /** Restriction hops from the searched model to this object. */
  readonly hops: readonly PathHop[];
  readonly alias: string;
  readonly graph: JoinGraph;
  readonly tree: IncludeTree;
  /** Top-level object of its statement: select aliases are the output keys themselves. */
  readonly top: boolean;
}

/**
 * Plans one object and, recursively, its includes, appending its select items to `select`. Columns
 * restricted for the context are left out of the SELECT (a restricted primary key is still read,
 * hidden, because loaders and cursors need it).
 */
export function planObject(scope: IncludeScope, target: PlanTarget, select: string[]): ObjectPlan {
  const { db, restricted } = scope;
  const { model, hops, alias } = target;
  const columns: SelectedColumn[] = [];
  let pkAlias = '';
  model.columns.forEach((col, i) => {
    const hidden = isColumnRestricted(restricted, hops, model.namespace, col);
    if (hidden && !col.primary) return;
    const as = target.top ? col.key : `${alias}_${i}`;
    select.push(`${qualified(alias, col.quoted)} as ${db.quote(as)}`);
    columns.push({ alias: as, column: col.quoted, key: col.key, decode: col.decode, hidden });
    if (col.primary) pkAlias = as;
  });
  const joined: JoinedPlan[] = [];
  const loaders: LoaderPlan[] = [];
  for (const [name, node] of target.tree) {
    const rel = model.relations.get(name)!;
    const childHops = [...hops, { namespace: model.namespace, name }];
    if (rel.toMany) {
      loaders.push(planLoader(scope, model, rel, childHops, node));
      continue;
    }
    const childAlias = target.graph.toOne(alias, [rel]);
    const child = {
      model: rel.target(),
      hops: childHops,
      alias: childAlias,
      graph: target.graph,
      tree: node.children,
      top: false,
    };
    joined.push({ key: name, plan: planObject(scope, child, select) });
  }
  const decoded = columns.filter((c): c is DecodedColumn => c.decode !== undefined);
  return { columns, decoded, pkAlias, joined, loaders };
}

/** One statement for a to-many relation of many parents, its own nested to-one includes joined into it. */
function planLoader(
  scope: IncludeScope,
  parent: ModelInfo,
  rel: RelationInfo,
  hops: readonly PathHop[],
  node: IncludeNode,
): LoaderPlan {
  const { db, scoping } = scope;
  const aliases = new AliasAllocator();
  const graph = new JoinGraph(db, aliases, 'j', scoping && scoperOf(scoping));
  const source = toManySource(db, rel, parent, aliases, 'l');
  if (source.sourceColumn !== parent.pk.column) {
    throw new Error(
      `${parent.className}.${rel.name} refers to ${source.sourceColumn}, not the primary key; Core's loaders need the primary key`,
    );
  }
  const target = rel.target();
  const select: string[] = [];
  const plan = planObject(
    scope,
    { model: target, hops, alias: source.alias, graph, tree: node.children, top: true },
    select,
  );
  select.push(`${source.parentKey} as ${db.quote(PARENT_KEY)}`);
  const visible = scoping?.related(target, source.alias, aliases);
  const joins = slotted(graph.pieces);
  const own = visible ? slotted([' and (', ...visible, ')']) : { text: '', slots: null };
  return {
    key: rel.name,
    path: node.path,
    jsonPath: node.jsonPath,
    head: `select ${select.join(', ')} from ${source.from}${joins.text} where ${source.parentKey} in `,
    headSlots: joins.slots,
    tail: `${own.text} order by ${qualified(source.alias, target.pk.quoted)} limit ${db.limitPlaceholder}`,
    tailSlots: own.slots,
    plan,
  };
}

/** The text of SQL pieces, and the pieces themselves when some hold bind slots (null otherwise). */
function slotted(pieces: readonly WherePiece[]): { text: string; slots: readonly WherePiece[] | null } {
  let text = '';
  let slots = false;
  for (const piece of pieces) {
    if (typeof piece === 'string') text += piece;
    else if (piece.kind === 'bind') {
      text += piece.text;
      slots = true;
    }
  }
  return { text, slots: slots ? pieces : null };
}
