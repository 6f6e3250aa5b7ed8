/**
 * What the fuzzer knows about each resource of an app, read from the app itself: its routes and
 * their parameter schemas from the OpenAPI document Fastify builds from the registered route
 * schemas, its body and output schemas from the router's context schemas (the documents
 * `?schema=true` answers), its limits from the manifest, and from the ORM metadata only what the
 * oracle needs to predict data-dependent answers (unique columns, foreign keys, delete rules, the
 * storage type of each field).
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Database } from '@core/runtime';
import type { RouterLike, SchemaClass } from './targets.js';
import type { JsonSchema } from './values.js';

export type FieldKind =
  | 'uuid'
  | 'string'
  | 'text'
  | 'integer'
  | 'bigint'
  | 'float'
  | 'decimal'
  | 'boolean'
  | 'date'
  | 'datetime'
  | 'json'
  | 'enum';

export interface FieldInfo {
  readonly name: string;
  readonly kind: FieldKind;
  readonly column: string;
  readonly nullable: boolean;
  readonly unique: boolean;
  /** Decimal scale: the number of digits the wire value is written with. */
  readonly scale?: number;
}

/** A to-one key (`project_id`) or a many-to-many id list (`tag_ids`) a body may carry. */
export interface ForeignKey {
  readonly field: string;
  /** The relation the key writes (`project`, `labels`), as `?include=` names it. */
  readonly relation: string;
  readonly target: string;
  readonly many: boolean;
  readonly nullable: boolean;
}

/** A table whose rows point at this resource, and what deleting the row they point at does. */
export interface Dependent {
  readonly table: string;
  readonly column: string;
  readonly rule: 'restrict' | 'cascade' | 'set null' | 'no action';
  /** The dependent resource's name (its table), to follow cascades. */
  readonly resource: string;
}

export interface Operation {
  readonly method: string;
  /** `''` (collection), `'/{id}'` or `'/search'`. */
  readonly suffix: '' | '/{id}' | '/search';
  readonly query: Readonly<Record<string, JsonSchema>>;
}

export interface Resource {
  readonly name: string;
  readonly prefix: string;
  readonly exposeSchemas: boolean;
  readonly create: SchemaClass;
  readonly update: SchemaClass;
  readonly out: SchemaClass;
  readonly table: string;
  readonly keyColumn: string;
  readonly idSchema: JsonSchema;
  readonly operations: readonly Operation[];
  /** Scalar fields, by wire name (relation keys included, as `uuid` fields). */
  readonly fields: ReadonlyMap<string, FieldInfo>;
  readonly foreignKeys: readonly ForeignKey[];
  readonly dependents: Dependent[];
  readonly limits: { readonly defaultLimit: number; readonly maxLimit: number };
  /** Relation names a path may cross from this resource, with their target resource and cardinality. */
  readonly relations: ReadonlyMap<string, { readonly target: string; readonly many: boolean }>;
  /** Fields the database sets on every update (`auto: now_on_update`): their new value is not predictable. */
  readonly touchedOnUpdate: ReadonlySet<string>;
}

interface OpenApiParameter {
  in: string;
  name: string;
  schema: JsonSchema;
}

interface MetaProperty {
  name: string;
  kind: string;
  type: unknown;
  unique?: boolean | string;
  nullable?: boolean;
  fieldNames?: string[];
  owner?: boolean;
  deleteRule?: string;
  enum?: boolean;
  scale?: number;
  primary?: boolean;
  hidden?: boolean;
  targetMeta?: { className: string; tableName: string };
  pivotTable?: string;
}

function kindOf(prop: MetaProperty): FieldKind {
  if (prop.enum) return 'enum';
  const type = String(typeof prop.type === 'function' ? (prop.type as { name: string }).name : prop.type).toLowerCase();
  const map: Record<string, FieldKind> = {
    uuid: 'uuid',
    string: 'string',
    text: 'text',
    integer: 'integer',
    number: 'integer',
    bigint: 'bigint',
    biginttype: 'bigint',
    double: 'float',
    doubletype: 'float',
    float: 'float',
    decimal: 'decimal',
    decimaltype: 'decimal',
    boolean: 'boolean',
    datetype: 'date',
    date: 'datetime',
    datetime: 'datetime',
    json: 'json',
    jsontype: 'json',
  };
  const kind = map[type];
  if (!kind) throw new Error(`the fuzzer does not know the property type ${type} of ${prop.name}`);
  return kind;
}

interface Manifest {
  pagination?: { default_limit?: number; max_limit?: number };
  fields: Record<string, { auto?: string }>;
}

/** Every resource of the app, from its routers, its OpenAPI document, its manifests and the ORM metadata. */
export function describeResources(
  app: FastifyInstance,
  db: Database,
  routers: readonly RouterLike[],
  appsDir: URL,
): Resource[] {
  const doc = (
    app as unknown as { swagger(): { paths: Record<string, Record<string, { parameters?: OpenApiParameter[] }>> } }
  ).swagger();
  const metadata = db.orm.getMetadata();
  const byTable = new Map<string, Resource>();
  const resources = routers.map((router) => {
    const meta = metadata.get(router.model.name);
    const props = Object.values(meta.properties) as unknown as MetaProperty[];
    const fields = new Map<string, FieldInfo>();
    const relations = new Map<string, { target: string; many: boolean }>();
    for (const prop of props) {
      if (prop.kind === 'scalar') {
        fields.set(prop.name, {
          name: prop.name,
          kind: kindOf(prop),
          column: prop.fieldNames![0]!,
          nullable: prop.nullable === true,
          unique: prop.unique === true || typeof prop.unique === 'string',
          ...(prop.scale === undefined ? {} : { scale: prop.scale }),
        });
      } else if (prop.targetMeta) {
        relations.set(prop.name, {
          target: prop.targetMeta.tableName,
          many: prop.kind === '1:m' || prop.kind === 'm:n',
        });
        if ((prop.kind === 'm:1' || prop.kind === '1:1') && prop.owner) {
          fields.set(`${prop.name}_id`, {
            name: `${prop.name}_id`,
            kind: 'uuid',
            column: prop.fieldNames![0]!,
            nullable: prop.nullable === true,
            unique: prop.unique === true || prop.kind === '1:1',
          });
        }
      }
    }
    const foreignKeys: ForeignKey[] = [];
    for (const [field, relation] of Object.entries({
      ...router.createSchema.foreignKeys,
      ...router.updateSchema.foreignKeys,
    })) {
      const prop = meta.properties[relation] as unknown as MetaProperty;
      foreignKeys.push({
        field,
        relation,
        target: prop.targetMeta!.tableName,
        many: prop.kind === 'm:n',
        nullable: prop.nullable === true || prop.kind === 'm:n',
      });
    }
    const operations: Operation[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      const suffix =
        path === router.prefix || path === `${router.prefix}/`
          ? ''
          : path === `${router.prefix}/{id}`
            ? '/{id}'
            : path === `${router.prefix}/search`
              ? '/search'
              : undefined;
      if (suffix === undefined) continue;
      for (const [method, op] of Object.entries(methods)) {
        const query: Record<string, JsonSchema> = {};
        for (const p of op.parameters ?? []) if (p.in === 'query') query[p.name] = p.schema;
        operations.push({ method: method.toUpperCase(), suffix, query });
      }
    }
    const idParam = doc.paths[`${router.prefix}/{id}`]?.get?.parameters?.find(
      (p) => p.in === 'path' && p.name === 'id',
    );
    if (!idParam) throw new Error(`no GET ${router.prefix}/{id} in the OpenAPI document`);
    const manifest = JSON.parse(
      readFileSync(new URL(`${router.model.tableName}/${router.model.tableName}.resource.json`, appsDir), 'utf8'),
    ) as Manifest;
    const resource: Resource = {
      name: router.model.tableName,
      prefix: router.prefix,
      exposeSchemas: router.exposeSchemas,
      create: router.createSchema,
      update: router.updateSchema,
      out: router.schemaOut,
      table: meta.tableName,
      keyColumn: (meta.properties[meta.primaryKeys[0] as string] as unknown as MetaProperty).fieldNames![0]!,
      idSchema: idParam.schema,
      operations,
      fields,
      foreignKeys,
      dependents: [],
      limits: {
        defaultLimit: manifest.pagination?.default_limit ?? 50,
        maxLimit: manifest.pagination?.max_limit ?? 500,
      },
      relations,
      touchedOnUpdate: new Set(
        Object.entries(manifest.fields)
          .filter(([, f]) => f.auto === 'now_on_update')
          .map(([name]) => name),
      ),
    };
    byTable.set(resource.name, resource);
    return resource;
  });
  // Who points at whom, and with which delete rule (a many-to-many link row simply goes with either end).
  for (const resource of resources) {
    const meta = metadata.get(routers.find((r) => r.model.tableName === resource.name)!.model.name);
    for (const prop of Object.values(meta.properties) as unknown as MetaProperty[]) {
      if (!((prop.kind === 'm:1' || prop.kind === '1:1') && prop.owner && prop.targetMeta)) continue;
      const target = byTable.get(prop.targetMeta.tableName);
      const rule = (prop.deleteRule ?? 'no action') as Dependent['rule'];
      target?.dependents.push({ table: resource.table, column: prop.fieldNames![0]!, rule, resource: resource.name });
    }
  }
  return resources;
}
