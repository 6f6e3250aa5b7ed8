import type { BoundFields } from './claim-bound.js';
import type { OutputNode } from './output-plan.js';
import type { IntrospectedSchema, JsonSchemaFragment } from './types.js';

/**
 * The introspection document of a plan's root (docs/http.md, introspection): visible fields only, `required`
 * without restricted names, nor the `bound` ones the caller's row scope sets or keeps (and empty for a
 * patch body, where nothing is required).
 *
 * Included relations are documented under `x-relations`, keyed by relation name, each the JSON
 * Schema of what an include puts there — `{ type: ["object","null"], … }` for to-one,
 * `{ type: "array", items: { … } }` for to-many — masked for the caller at that position, with
 * `x-foreign-key` naming the field that carries the key. They are kept out of `properties` because
 * they are absent unless the request includes them. A relation back to a schema already on the
 * way down (task → project → tasks) is not expanded again; the key is omitted when there are none.
 */
export function introspect(root: OutputNode, options: { patch: boolean; bound?: BoundFields }): IntrospectedSchema {
  return deepFreeze(describeNode(root, options.patch, new Set(), options.bound));
}

function describeNode(
  node: OutputNode,
  patch: boolean,
  ancestors: ReadonlySet<number>,
  bound?: BoundFields,
): IntrospectedSchema {
  const properties: Record<string, JsonSchemaFragment> = {};
  for (const field of node.fields) properties[field.name] = field.fragment;
  const required = patch
    ? []
    : node.fields.map((f) => f.name).filter((name) => node.info.required.has(name) && !bound?.names.has(name));
  const doc: IntrospectedSchema = { title: node.info.title, type: 'object', properties, required };

  const chain = new Set(ancestors).add(node.info.id);
  const relations: Record<string, JsonSchemaFragment> = {};
  for (const relation of node.relations) {
    if (chain.has(relation.node.info.id)) continue;
    const target = describeNode(relation.node, false, chain);
    const fk = node.info.fkOfRelation.get(relation.name);
    const link = fk === undefined ? {} : { 'x-foreign-key': fk };
    relations[relation.name] = relation.many
      ? { type: 'array', items: target, ...link }
      : { ...target, type: ['object', 'null'], ...link };
  }
  return Object.keys(relations).length === 0 ? doc : { ...doc, 'x-relations': relations };
}

/** Introspection documents are cached and shared between requests: make them read-only. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
