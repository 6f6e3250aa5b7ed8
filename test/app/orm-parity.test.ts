/**
 * Speed is not bought with a different answer: every read response stays byte-identical to what the
 * ORM path would answer.
 *
 * Core answers reads from compiled SQL and plain rows (`runtime/src/search`, `Database.select`), never
 * from entities. This file builds every read response a second time, independently, the ORM way:
 * MikroORM `em.find` / `em.findOne` on a fresh fork with the same where, order and limit; each entity
 * written with its wire names in the order of the HTTP contract's output schema (docs/http.md): the
 * manifest's fields in manifest order without `output: false` ones, then each owning to-one relation
 * as `<relation>_id` (generator/README.md, "Field mapping" and "Relations"); datetimes as ISO 8601 UTC
 * strings, dates as `YYYY-MM-DD`, bigint and decimal as strings; restricted fields absent; all of it
 * in the envelope (`success`, `message`, `data`, `meta`, with `meta` = `{ limit, offset, next_cursor,
 * has_more }` when the request paginates, else null). The HTTP body must equal `JSON.stringify` of
 * that, byte for byte. The expected rows are also checked against the contract's wire types, so a
 * drift that both paths shared (0/1 for a boolean, a number for a decimal) fails too.
 *
 * Cursors carry a random IV: `meta.next_cursor` is replaced by a placeholder in the body, and the real
 * cursor is followed to the end of the set, each page compared with the ORM's "rows after the last
 * one" under the same order.
 *
 * Three resources, each on SQLite and PostgreSQL, each for an unrestricted and a restricted role:
 * - the fixture tasks app (test/app/helpers.ts): strings, booleans, nulls, unicode, control characters,
 *   `%` and `_`; `viewer` does not see `assignee_email`;
 * - the generated every-field-type app (`samples`): integer, bigint, float, decimal in two sizes,
 *   date, datetime, json, enum, uuid, an `output: false` field;
 * - the generated relation graph's tasks: a many-to-one key (`project_id`), a date, a datetime, a
 *   nullable sort key; `noproject` does not see the relation (so neither its key).
 */
import { readFileSync } from 'node:fs';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type InjectOptions,
  type LightMyRequestResponse,
} from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryOrder, raw, Reference, type Dictionary, type EntityManager } from '@mikro-orm/core';
import {
  appExceptionHandler,
  coreContextPlugin,
  CoreLogController,
  dbManager,
  Kernel,
  loadSettings,
  registerDbEventDispatcher,
  RequestLogMiddleware,
  ScopedDependencyMiddleware,
  setupLogging,
  signToken,
  useCoreRequest,
  type Database,
  type Plugin,
  type PolicyDocument,
} from '@core/runtime';
import { notFoundHandler } from '../../runtime/src/http/error-handler.js';
import { SamplesPlugin } from '../../fixtures/golden/every-field-type/expected/src/apps/samples/plugin.js';
import { describePerDatabase } from '../helpers/databases.js';
import { describeFixtureApp, type Role } from './helpers.js';

// ---------------------------------------------------------------------------------------------------
// The ORM path: wire rows from entities, the envelope, the comparison
// ---------------------------------------------------------------------------------------------------

type Row = Dictionary;

/** One key of the wire object, in output order. */
interface WireKey {
  /** The JSON key: the field name, or `<relation>_id`. */
  readonly name: string;
  /** The entity property holding the value: the field, or the relation. */
  readonly property: string;
  /** The manifest field type (`uuid` for a relation key: every target here has a uuid key). */
  readonly type: string;
  readonly nullable: boolean;
  readonly relation: boolean;
  /** A decimal's digits after the point on the wire: the manifest's `scale` (default 2). */
  readonly scale?: number;
}

interface ManifestJson {
  fields: Record<string, { type: string; nullable?: boolean; output?: boolean; scale?: number }>;
  relations?: Record<string, { kind: string; nullable?: boolean; owner?: boolean }>;
}

/** The output keys of a resource, from its manifest: the fields shown, then the owning to-one keys. */
function wireKeys(manifest: string): WireKey[] {
  const m = JSON.parse(readFileSync(new URL(manifest, import.meta.url), 'utf8')) as ManifestJson;
  const keys: WireKey[] = Object.entries(m.fields)
    .filter(([, f]) => f.output !== false)
    .map(([name, f]) => ({
      name,
      property: name,
      type: f.type,
      nullable: f.nullable === true,
      relation: false,
      ...(f.type === 'decimal' ? { scale: f.scale ?? 2 } : {}),
    }));
  for (const [name, r] of Object.entries(m.relations ?? {})) {
    if (r.kind === 'many-to-one' || (r.kind === 'one-to-one' && r.owner === true)) {
      keys.push({ name: `${name}_id`, property: name, type: 'uuid', nullable: r.nullable === true, relation: true });
    }
  }
  return keys;
}

/** An entity as the HTTP contract puts it on the wire, for a caller who may not see `hidden`. */
function wireRow(entity: object, keys: readonly WireKey[], hidden: ReadonlySet<string>): Row {
  const source = entity as Row;
  const out: Row = {};
  for (const key of keys) {
    if (hidden.has(key.name)) continue;
    const value = source[key.property];
    if (value === undefined) throw new Error(`the ORM left ${key.property} undefined`);
    if (value === null) out[key.name] = null;
    else if (key.relation) out[key.name] = (Reference.unwrapReference(value as object) as { id: unknown }).id;
    else if (key.type === 'datetime') out[key.name] = (value as Date).toISOString();
    else if (key.type === 'decimal') out[key.name] = withScale(String(value), key.scale!);
    else out[key.name] = value;
  }
  return out;
}

/**
 * A decimal as the HTTP contract writes it, with exactly `scale` digits after the point (the ORM's entity
 * holds SQLite's `3.5` as "3.5"; the wire says "3.50", as PostgreSQL does).
 */
function withScale(text: string, scale: number): string {
  const [whole, fraction = ''] = text.split('.');
  return scale === 0 ? whole! : `${whole}.${fraction.padEnd(scale, '0')}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WIRE_TYPE: Record<string, (v: unknown) => boolean> = {
  uuid: (v) => typeof v === 'string' && UUID.test(v),
  string: (v) => typeof v === 'string',
  text: (v) => typeof v === 'string',
  enum: (v) => typeof v === 'string',
  integer: (v) => Number.isInteger(v),
  float: (v) => typeof v === 'number' && Number.isFinite(v),
  bigint: (v) => typeof v === 'string' && /^-?\d+$/.test(v),
  decimal: (v) => typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v),
  boolean: (v) => typeof v === 'boolean',
  date: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v),
  datetime: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v),
  json: () => true,
};

/** The oracle itself must speak the HTTP contract: every value has its field's wire type. */
function expectWireTypes(rows: readonly Row[], keys: readonly WireKey[]): void {
  for (const row of rows) {
    for (const key of keys) {
      if (!(key.name in row)) continue;
      const value = row[key.name];
      const ok = value === null ? key.nullable || key.type === 'json' : WIRE_TYPE[key.type]!(value);
      expect(ok, `${key.name} (${key.type}${key.nullable ? ', nullable' : ''}) = ${JSON.stringify(value)}`).toBe(true);
    }
  }
}

interface PageMeta {
  limit: number;
  offset: number | null;
  next_cursor: string | null;
  has_more: boolean;
}

const CURSOR = '<cursor>';

function envelope(data: unknown, meta: PageMeta | null): unknown {
  return { success: true, message: 'Success', data, meta };
}

function pageMeta(limit: number, offset: number | null, hasMore: boolean): PageMeta {
  return { limit, offset, next_cursor: hasMore ? CURSOR : null, has_more: hasMore };
}

/**
 * Asserts a 200 whose body is byte for byte `JSON.stringify(expected)` once its cursor (if any) is
 * replaced by the placeholder; returns the real cursor.
 */
function expectSameBytes(res: LightMyRequestResponse, expected: unknown): string | null {
  expect(res.statusCode, res.body).toBe(200);
  const cursor = (JSON.parse(res.body) as { meta?: { next_cursor?: unknown } | null }).meta?.next_cursor;
  let body = res.body;
  if (typeof cursor === 'string') {
    expect(cursor).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const parts = body.split(JSON.stringify(cursor));
    expect(parts).toHaveLength(2); // nothing else in the body looks like the cursor
    body = parts.join(JSON.stringify(CURSOR));
  }
  expect(body).toBe(JSON.stringify(expected));
  return typeof cursor === 'string' ? cursor : null;
}

// ---------------------------------------------------------------------------------------------------
// The cases, the same for every resource
// ---------------------------------------------------------------------------------------------------

interface ParityEnv {
  /** `app.inject` as `role` (JSON payloads get `content-type: application/json`). */
  request(role: string, options: InjectOptions): Promise<LightMyRequestResponse>;
  readonly db: Database;
}

interface SearchCase {
  /** The request body (it carries `limit`, so the answer is paginated). */
  readonly body: { filters: unknown[]; sort: unknown[]; limit: number };
  /**
   * The same filters as a MikroORM where; a function because a `raw()` key is spent by the query
   * that uses it, so each query needs its own.
   */
  where(): Row;
  /** The same order, tiebreaker (`id` ascending) included. */
  readonly orderBy: Row[];
  /** Rows strictly after `last` in that order, as a MikroORM where. */
  after(last: Row): Row;
}

interface ParityCase {
  /** URL prefix of the resource: `/tasks`. */
  readonly prefix: string;
  /** Entity name in the ORM metadata. */
  readonly entity: string;
  readonly keys: readonly WireKey[];
  /** Role → wire keys it may not see. */
  readonly roles: Readonly<Record<string, readonly string[]>>;
  /** Page size of the list walk (smaller than the row count, so there is a next page). */
  readonly pageSize: number;
  readonly offset: number;
  readonly search: SearchCase;
}

/**
 * The ORM reads SQLite integers as JavaScript numbers, so a bigint past 2^53 reaches its entity with
 * its last digits rounded (…993 as …992). The oracle's bigints are read again as text, by id, so it
 * holds what the database holds; PostgreSQL already gives the ORM text.
 */
async function exactBigints(db: Database, spec: ParityCase, rows: Row[]): Promise<void> {
  const keys = spec.keys.filter((k) => k.type === 'bigint' && !k.relation);
  if (db.dialect !== 'sqlite' || keys.length === 0 || rows.length === 0) return;
  const table = db.quote(db.orm.getMetadata().get(spec.entity).tableName);
  const columns = keys.map((k) => `cast(${db.quote(k.name)} as text) as ${db.quote(k.name)}`).join(', ');
  const exact = await db.select<Row>(
    `select id, ${columns} from ${table} where id in (${rows.map(() => '?').join(', ')})`,
    rows.map((r) => r.id),
  );
  const byId = new Map(exact.map((r) => [r.id, r]));
  for (const row of rows)
    for (const key of keys) if (key.name in row && row[key.name] !== null) row[key.name] = byId.get(row.id)![key.name];
}

/** Registers the parity tests of one resource in the current (per-database) suite. */
function parityTests(env: () => ParityEnv, spec: ParityCase): void {
  const BY_ID: Row[] = [{ id: QueryOrder.ASC }];

  /** One page the ORM way: `limit + 1` rows tell whether more exist. */
  async function ormPage(
    where: Row,
    orderBy: Row[],
    limit: number,
    offset?: number,
  ): Promise<{ rows: object[]; hasMore: boolean }> {
    const em: EntityManager = env().db.orm.em.fork();
    const found = await em.find<Row>(spec.entity, where, {
      orderBy,
      limit: limit + 1,
      ...(offset === undefined ? {} : { offset }),
    });
    return { rows: found.slice(0, limit), hasMore: found.length > limit };
  }

  for (const [role, hiddenKeys] of Object.entries(spec.roles)) {
    const hidden = new Set(hiddenKeys);
    const wire = async (rows: readonly object[]): Promise<Row[]> => {
      const out = rows.map((row) => wireRow(row, spec.keys, hidden));
      await exactBigints(env().db, spec, out);
      expectWireTypes(out, spec.keys);
      return out;
    };
    const get = (url: string) => env().request(role, { method: 'GET', url });

    describe(`as ${role}${hidden.size ? ` (not seeing ${[...hidden].join(', ')})` : ''}`, () => {
      it('GET by id: every row, byte for byte', async () => {
        const all = await env().db.orm.em.fork().find<Row>(spec.entity, {}, { orderBy: BY_ID });
        expect(all.length).toBeGreaterThan(3);
        for (const entity of all) {
          const id = String(entity.id);
          const em = env().db.orm.em.fork();
          const one = await em.findOne<Row>(spec.entity, { id });
          expect(one).not.toBeNull();
          expectSameBytes(await get(`${spec.prefix}/${id}`), envelope((await wire([one!]))[0], null));
        }
      });

      it('GET list without parameters: every row in key order, meta null', async () => {
        const { rows, hasMore } = await ormPage({}, BY_ID, 50);
        expect(hasMore).toBe(false);
        const res = await get(`${spec.prefix}/`);
        expectSameBytes(res, envelope(await wire(rows), null));
        expect(res.headers.link).toBeUndefined();
      });

      it('GET list: a first page, then keyset pages by following next_cursor to the end', async () => {
        const limit = spec.pageSize;
        let page = await ormPage({}, BY_ID, limit);
        expect(page.hasMore).toBe(true);
        let cursor = expectSameBytes(
          await get(`${spec.prefix}/?limit=${limit}`),
          envelope(await wire(page.rows), pageMeta(limit, 0, true)),
        );
        let pages = 1;
        while (cursor !== null) {
          const last = page.rows.at(-1) as Row;
          page = await ormPage({ id: { $gt: last.id } }, BY_ID, limit);
          const res = await get(`${spec.prefix}/?limit=${limit}&cursor=${encodeURIComponent(cursor)}`);
          cursor = expectSameBytes(res, envelope(await wire(page.rows), pageMeta(limit, null, page.hasMore)));
          pages++;
        }
        expect(pages).toBeGreaterThan(1);
      });

      it('GET list: an offset page', async () => {
        const { rows, hasMore } = await ormPage({}, BY_ID, spec.pageSize, spec.offset);
        expect(rows.length).toBeGreaterThan(0);
        const res = await get(`${spec.prefix}/?limit=${spec.pageSize}&offset=${spec.offset}`);
        expectSameBytes(res, envelope(await wire(rows), pageMeta(spec.pageSize, spec.offset, hasMore)));
      });

      it('POST search: eq and or(like, boolean), a descending sort, a limit; then its cursor pages', async () => {
        const { body, where, orderBy } = spec.search;
        const search = (extra: Row = {}) =>
          env().request(role, { method: 'POST', url: `${spec.prefix}/search`, payload: { ...body, ...extra } });
        let page = await ormPage(where(), orderBy, body.limit);
        expect(page.hasMore).toBe(true);
        let cursor = expectSameBytes(await search(), envelope(await wire(page.rows), pageMeta(body.limit, 0, true)));
        let total = page.rows.length;
        while (cursor !== null) {
          const last = page.rows.at(-1) as Row;
          page = await ormPage({ $and: [where(), spec.search.after(last)] }, orderBy, body.limit);
          cursor = expectSameBytes(
            await search({ cursor }),
            envelope(await wire(page.rows), pageMeta(body.limit, null, page.hasMore)),
          );
          total += page.rows.length;
        }
        // The walk returned exactly the rows the ORM finds for the filters.
        expect(total).toBe(await env().db.orm.em.fork().count(spec.entity, where()));
      });
    });
  }
}

/**
 * `field like pattern escape '\'`: the search's `like` (the pattern as sent, `\` escaping `%` and `_`),
 * written so both databases read it the same. SQLite's LIKE ignores ASCII case where the search's
 * `like` does not: the patterns here have no letters.
 */
function likeEscaped(field: string, pattern: string): Row {
  return { [raw((alias: string) => `${alias}.${field} like ? escape '\\'`, [pattern])]: [] };
}

/**
 * "After `last`" for `field desc` (NULL lowest, so NULLs come last) then `id asc` — the order the
 * search's `sort: [{ field, order: 'desc' }]` documents (runtime/src/search/README.md).
 */
function afterDescThenId(field: string, last: Row): Row {
  const value = last[field];
  const sameThenId = { [field]: value, id: { $gt: last.id } };
  if (value === null) return sameThenId;
  return { $or: [{ [field]: { $lt: value } }, { [field]: null }, sameThenId] };
}

/** Same order as `afterDescThenId`, in MikroORM terms. */
function descNullsLastThenId(field: string): Row[] {
  return [{ [field]: QueryOrder.DESC_NULLS_LAST }, { id: QueryOrder.ASC }];
}

// ---------------------------------------------------------------------------------------------------
// 1. The fixture tasks app (admin; viewer without assignee_email)
// ---------------------------------------------------------------------------------------------------

const FIXTURE_TASKS: ParityCase = {
  prefix: '/tasks',
  entity: 'Task',
  keys: wireKeys('../../fixtures/apps/tasks/src/apps/tasks/tasks.resource.json'),
  roles: { admin: [], viewer: ['assignee_email'] },
  pageSize: 3,
  offset: 2,
  search: {
    body: {
      filters: [
        { field: 'priority', op: 'eq', value: 'high' },
        {
          op: 'or',
          items: [
            { field: 'title', op: 'like', value: '%\\_%' },
            { field: 'is_completed', op: 'eq', value: true },
          ],
        },
      ],
      sort: [{ field: 'title', order: 'desc' }],
      limit: 2,
    },
    where: () => ({ priority: 'high', $or: [likeEscaped('title', '%\\_%'), { is_completed: true }] }),
    orderBy: [{ title: QueryOrder.DESC }, { id: QueryOrder.ASC }],
    after: (last) => ({ $or: [{ title: { $lt: last.title } }, { title: last.title, id: { $gt: last.id } }] }),
  },
};

describeFixtureApp(
  'ORM parity: fixture tasks',
  (ctx) => {
    beforeAll(async () => {
      const em = ctx.db.orm.em.fork();
      const rows: Row[] = [
        {
          title: 'Plan 50% of the sprint',
          description: null,
          priority: 'high',
          is_completed: false,
          assignee_email: 'ann@example.com',
        },
        {
          title: 'snake_case title',
          description: 'line\nbreak "quoted" back\\slash\ttab',
          priority: 'high',
          is_completed: true,
          assignee_email: null,
        },
        {
          title: 'snakeXcase title',
          description: '',
          priority: 'high',
          is_completed: false,
          assignee_email: 'bob@example.com',
        },
        {
          title: 'Ünïcødé ✓ 😀 日本語',
          description: 'U+2028 \u2028 and a bell \u0007',
          priority: 'high',
          is_completed: true,
          assignee_email: 'zoë@example.com',
        },
        { title: '100%_done', description: null, priority: 'low', is_completed: true, assignee_email: null },
        { title: 'a_b', description: 'x', priority: 'high', is_completed: false, assignee_email: null },
        {
          title: 'plain',
          description: '</script>',
          priority: 'medium',
          is_completed: false,
          assignee_email: 'c@example.com',
        },
      ];
      for (const row of rows) em.create('Task', row);
      await em.flush();
    });

    parityTests(() => ({ db: ctx.db, request: (role, options) => ctx.request(role as Role, options) }), FIXTURE_TASKS);
  },
  { cleanBetweenTests: false },
);

// ---------------------------------------------------------------------------------------------------
// Generated apps, wired like their generated src/main.ts but with policies of this test
// ---------------------------------------------------------------------------------------------------

const SECRET = 'p'.repeat(48);

/** The seven steps of a generated `src/main.ts` (minus Swagger, which nothing here reads), with `policies`. */
async function buildGeneratedApp(
  databaseUrl: string,
  plugins: readonly Plugin[],
  policies: PolicyDocument,
): Promise<FastifyInstance> {
  const settings = loadSettings({
    env: { DATABASE_URL: databaseUrl, ENVIRONMENT: 'test', SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
  });
  const logger: FastifyBaseLogger = pino(setupLogging({ environment: settings.environment, level: settings.logLevel }));
  await dbManager.initApp(settings.databaseUrl, settings.isDevelopment, { logger });
  const kernel = new Kernel({ logger });
  for (const plugin of plugins) kernel.addPlugin(plugin);
  registerDbEventDispatcher(kernel.dispatcher);
  const app = Fastify({ loggerInstance: logger, logController: new CoreLogController() });
  await app.register(kernel.lifespan);
  await kernel.setup(app);
  await app.register(ScopedDependencyMiddleware);
  await app.register(RequestLogMiddleware);
  await app.register(coreContextPlugin, { secret: settings.secretKey, policies });
  useCoreRequest(app);
  app.setErrorHandler(appExceptionHandler);
  app.setNotFoundHandler(notFoundHandler);
  return app;
}

interface GeneratedApp {
  /** Plugins of the app, loaded when the suite starts. */
  plugins(): Promise<Plugin[]>;
  policies: PolicyDocument;
  seed(em: EntityManager): Promise<void>;
}

function describeGeneratedApp(title: string, generated: GeneratedApp, spec: ParityCase): void {
  describePerDatabase(title, ({ url }) => {
    let app: FastifyInstance | undefined;
    let db: Database;
    const tokens = new Map<string, string>();
    const request = (role: string, options: InjectOptions): Promise<LightMyRequestResponse> => {
      let token = tokens.get(role);
      if (token === undefined) tokens.set(role, (token = signToken({ sub: role, roles: [role] }, SECRET)));
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (options.payload !== undefined) headers['content-type'] = 'application/json';
      return app!.inject({ ...options, headers });
    };

    beforeAll(async () => {
      app = await buildGeneratedApp(url(), await generated.plugins(), generated.policies);
      db = dbManager.db;
      await db.resetSchema();
      await app.ready();
      const em = db.orm.em.fork();
      await generated.seed(em);
      await em.flush();
    });

    afterAll(async () => {
      await app?.close();
      await dbManager.close();
    });

    parityTests(() => ({ db, request }), spec);
  });
}

// ---------------------------------------------------------------------------------------------------
// 2. Every field type (fixtures/golden/every-field-type): admin; sampler without four fields
// ---------------------------------------------------------------------------------------------------

describeGeneratedApp(
  'ORM parity: every field type',
  {
    plugins: async () => [new SamplesPlugin()],
    policies: {
      roles: {
        admin: { permissions: ['*'], restricted_fields: [] },
        sampler: {
          permissions: ['samples:view', 'samples:listview'],
          restricted_fields: ['samples.email', 'samples.exchange_rate', 'samples.starts_at', 'samples.settings'],
        },
        anonymous: { permissions: [], restricted_fields: [] },
      },
    },
    async seed(em) {
      const common = { quantity: 1, big_count: '0', price: '0.00', active: true, reviewed: false, status: 'published' };
      const rows: Row[] = [
        {
          code: 'ab_c',
          email: null,
          homepage: 'https://example.com/ü',
          notes: 'two\nlines',
          quantity: 0,
          big_count: '9007199254740993',
          ratio: 1 / 3,
          price: '12.50',
          exchange_rate: '123.456789',
          born_on: '2024-02-29',
          starts_at: new Date('2024-01-31T12:00:00.123Z'),
          settings: { b: 1, a: [1, 'x', null], nested: { ü: true } },
          kind: 'a',
          external_ref: '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21',
          secret: 's3cret',
        },
        {
          code: 'abXc',
          email: 'x@example.com',
          active: false,
          big_count: '-42',
          ratio: null,
          exchange_rate: null,
          born_on: null,
          starts_at: new Date('2030-06-30T21:59:59.999Z'),
          settings: null,
          kind: null,
          external_ref: null,
          reviewed: true,
        },
        {
          code: '50%_off',
          price: '-9999999999.99',
          ratio: 0.1 + 0.2,
          exchange_rate: '-0.000001',
          born_on: '1999-12-31',
          starts_at: new Date('1999-12-31T23:59:59.000Z'),
          settings: [1, 'two', { three: 3 }],
          quantity: 1000,
        },
        {
          code: 'zz%z',
          status: 'draft',
          active: false,
          born_on: '2024-01-01',
          starts_at: new Date('2024-01-01T00:00:00.000Z'),
          settings: 'text',
        },
        {
          code: 'ünï_çødé',
          price: '0.10',
          exchange_rate: '1',
          born_on: '2024-02-29',
          starts_at: new Date('2024-02-29T08:30:00.500Z'),
          settings: 0,
        },
        {
          code: 'plain',
          status: 'archived',
          kind: 'b',
          starts_at: new Date('2024-03-01T00:00:00.000Z'),
          ratio: -2.5e-7,
        },
      ];
      for (const row of rows) em.create('Sample', { ...common, ...row });
    },
  },
  {
    prefix: '/samples',
    entity: 'Sample',
    keys: wireKeys('../../fixtures/golden/every-field-type/expected/src/apps/samples/samples.resource.json'),
    roles: { admin: [], sampler: ['email', 'exchange_rate', 'starts_at', 'settings'] },
    pageSize: 4,
    offset: 3,
    search: {
      body: {
        filters: [
          { field: 'status', op: 'eq', value: 'published' },
          {
            op: 'or',
            items: [
              { field: 'code', op: 'like', value: '%\\_%' },
              { field: 'active', op: 'eq', value: false },
            ],
          },
        ],
        sort: [{ field: 'born_on', order: 'desc' }],
        limit: 2,
      },
      where: () => ({ status: 'published', $or: [likeEscaped('code', '%\\_%'), { active: false }] }),
      orderBy: descNullsLastThenId('born_on'),
      after: (last) => afterDescThenId('born_on', last),
    },
  },
);

// ---------------------------------------------------------------------------------------------------
// 3. A to-one key (fixtures/golden/relation-graph, tasks): admin; noproject without the relation
// ---------------------------------------------------------------------------------------------------

/**
 * The relation graph's models are imported when its suite starts, not with this file: models register
 * by class name, and its `Task` would replace the fixture app's `Task` for the suites above. Vitest
 * runs a file's suites one after another, so by then those are done.
 */
describeGeneratedApp(
  'ORM parity: a to-one relation key',
  {
    async plugins() {
      const [
        { ProjectsPlugin },
        { TasksPlugin },
        { CommentsPlugin },
        { LabelsPlugin },
        { UsersPlugin },
        { ProfilesPlugin },
      ] = await Promise.all([
        import('../../fixtures/golden/relation-graph/expected/src/apps/projects/plugin.js'),
        import('../../fixtures/golden/relation-graph/expected/src/apps/tasks/plugin.js'),
        import('../../fixtures/golden/relation-graph/expected/src/apps/comments/plugin.js'),
        import('../../fixtures/golden/relation-graph/expected/src/apps/labels/plugin.js'),
        import('../../fixtures/golden/relation-graph/expected/src/apps/users/plugin.js'),
        import('../../fixtures/golden/relation-graph/expected/src/apps/profiles/plugin.js'),
      ]);
      return [
        new ProjectsPlugin(),
        new TasksPlugin(),
        new CommentsPlugin(),
        new LabelsPlugin(),
        new UsersPlugin(),
        new ProfilesPlugin(),
      ];
    },
    policies: {
      roles: {
        admin: { permissions: ['*'], restricted_fields: [] },
        noproject: { permissions: ['*'], restricted_fields: ['tasks.project'] },
        anonymous: { permissions: [], restricted_fields: [] },
      },
    },
    async seed(em) {
      const apollo = em.create('Project', { name: 'Apollo', budget: 1000 });
      const gemini = em.create('Project', { name: 'Gemini ✓', budget: null });
      const rows: Row[] = [
        {
          title: 'Save 50% fuel',
          project: apollo,
          priority: 'high',
          points: 3,
          due_on: '2024-02-29',
          is_completed: false,
        },
        { title: 'Dock', project: apollo, priority: 'high', points: null, due_on: null, is_completed: true },
        { title: '100% tested', project: null, priority: 'high', points: 3, due_on: '2025-01-01', is_completed: false },
        { title: 'Launch', project: gemini, priority: 'low', points: 8, due_on: null, is_completed: true },
        { title: 'Orbit_2', project: gemini, priority: 'high', points: 5, description: 'ünï', is_completed: true },
        { title: 'Land', project: null, priority: 'high', points: null, is_completed: false },
      ];
      for (const row of rows) em.create('Task', { description: null, assignee_email: null, ...row });
    },
  },
  {
    prefix: '/tasks',
    entity: 'Task',
    keys: wireKeys('../../fixtures/golden/relation-graph/expected/src/apps/tasks/tasks.resource.json'),
    roles: { admin: [], noproject: ['project_id'] },
    pageSize: 4,
    offset: 4,
    search: {
      body: {
        filters: [
          { field: 'priority', op: 'eq', value: 'high' },
          {
            op: 'or',
            items: [
              { field: 'title', op: 'like', value: '%\\%%' },
              { field: 'is_completed', op: 'eq', value: true },
            ],
          },
        ],
        sort: [{ field: 'points', order: 'desc' }],
        limit: 2,
      },
      where: () => ({ priority: 'high', $or: [likeEscaped('title', '%\\%%'), { is_completed: true }] }),
      orderBy: descNullsLastThenId('points'),
      after: (last) => afterDescThenId('points', last),
    },
  },
);
