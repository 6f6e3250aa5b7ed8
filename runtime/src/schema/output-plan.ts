import type { PathHop } from '../context/restrictions.js';
import { toJsonSchema, valueKindOf, type ValueKind } from './json-schema.js';
import { relevantHops, visibility, type RestrictionScope } from './restriction-scope.js';
import type { SchemaInfo } from './schema-info.js';
import type { JsonSchemaFragment } from './types.js';

export interface FieldPlan {
  readonly name: string;
  readonly kind: ValueKind;
  readonly fragment: JsonSchemaFragment;
}

export interface RelationPlan {
  readonly name: string;
  readonly many: boolean;
  readonly node: OutputNode;
}

/**
 * One schema at one position of a response, with what the caller may see there. The same schema can
 * appear as several nodes (ProjectOut at the top level and under `tasks.project` differ when
 * `tasks.project.budget` is restricted); the same position reached again (a cycle) is the same node.
 */
export interface OutputNode {
  /** Unique within one plan; also the fast-json-stringify definition name (`ProjectOut@tasks.project`). */
  readonly id: string;
  readonly info: SchemaInfo;
  readonly fields: readonly FieldPlan[];
  readonly relations: RelationPlan[];
}

export interface OutputPlan {
  readonly root: OutputNode;
  readonly nodes: readonly OutputNode[];
}

/**
 * Builds the node graph for `root` under `scope`. Nodes are memoized by (schema, relevant hops); see
 * `relevantHops` for why that set is finite. Cost: one `isPathRestricted` call per field and relation
 * per node, paid once per (schema, restriction scope) — never per request.
 */
export function planOutput(root: SchemaInfo, scope: RestrictionScope): OutputPlan {
  const byKey = new Map<string, OutputNode>();
  const nodes: OutputNode[] = [];
  const usedIds = new Set<string>();

  const visit = (info: SchemaInfo, hops: readonly PathHop[]): OutputNode => {
    const kept = relevantHops(hops, scope);
    const key = `${info.id}|${kept.map((h) => `${h.namespace}.${h.name}`).join('/')}`;
    const existing = byKey.get(key);
    if (existing) return existing;

    const seen = visibility(info, kept, scope);
    const node: OutputNode = {
      id: uniqueId(
        usedIds,
        kept.length === 0 ? info.title : `${info.title}@${kept.map((h) => `${h.namespace}.${h.name}`).join('+')}`,
      ),
      info,
      fields: seen.fields.map((name) => {
        const fragment = toJsonSchema(info.properties[name]!);
        return { name, kind: valueKindOf(fragment), fragment };
      }),
      relations: [],
    };
    byKey.set(key, node);
    nodes.push(node);
    // Children after registering the node, so a cycle finds it instead of recursing forever.
    for (const name of seen.relations) {
      const relation = info.relations.get(name)!;
      const child = visit(relation.target(), [...kept, { namespace: info.namespace, name }]);
      node.relations.push({ name, many: relation.many, node: child });
    }
    return node;
  };

  const rootNode = visit(root, []);
  return { root: rootNode, nodes };
}

function uniqueId(used: Set<string>, wanted: string): string {
  let id = wanted;
  for (let i = 2; used.has(id); i++) id = `${wanted}_${i}`;
  used.add(id);
  return id;
}
