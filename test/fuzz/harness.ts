/**
 * One app under fuzzing on one database: the app built as its `src/main.ts` builds it (with the
 * target's policies), its resources, its callers, and the database itself, which the oracle reads
 * directly (never through the API under test) to predict answers that depend on data: whether a row
 * exists, whether a unique value is taken, whether a delete is blocked.
 */
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { dbManager, loadSettings, signToken, type Database, type PolicyDocument } from '@core/runtime';
import type { DatabaseName } from '../helpers/databases.js';
import { describeResources, type Resource } from './resources.js';
import type { FuzzTarget } from './targets.js';
import type { JsonSchema } from './values.js';

export const SECRET = 'f'.repeat(48);

/** A caller's context as the policies define it (what `?schema=true` and masking are computed for). */
export interface CallerContext {
  readonly sub: string | null;
  readonly roles: readonly string[];
  readonly permissions: ReadonlySet<string>;
  readonly restrictedFields: ReadonlySet<string>;
}

export interface Caller {
  readonly name: string;
  /** `role`: a valid token; `anonymous`: no credential; `bad`: a credential that must be refused. */
  readonly kind: 'role' | 'anonymous' | 'bad';
  readonly headers: Readonly<Record<string, string>>;
  readonly context: CallerContext;
  /** Share of the requests sent as this caller. */
  readonly weight: number;
}

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

export type SchemaMode = 'create' | 'replace' | 'patch' | 'out';

export class Fuzzed {
  readonly resources: ReadonlyMap<string, Resource>;
  readonly callers: readonly Caller[];
  private readonly docs = new Map<string, JsonSchema>();
  /** Requests sent, for the report. */
  sent = 0;
  /** Changes answers before anyone reads them: only to prove that the oracle notices broken ones. */
  tamper?: (request: HttpRequest, response: HttpResponse) => HttpResponse;

  constructor(
    readonly dbName: DatabaseName,
    readonly app: FastifyInstance,
    readonly db: Database,
    readonly target: FuzzTarget,
    resources: readonly Resource[],
  ) {
    this.resources = new Map(resources.map((r) => [r.name, r]));
    this.callers = makeCallers(target.policies);
  }

  static async start(target: FuzzTarget, dbName: DatabaseName, url: string): Promise<Fuzzed> {
    const settings = loadSettings({
      env: { DATABASE_URL: url, ENVIRONMENT: 'test', SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
    });
    // buildApp reads the environment before applying `settings`: without a SECRET_KEY there it would warn.
    const previous = process.env.SECRET_KEY;
    process.env.SECRET_KEY = SECRET;
    let app: FastifyInstance;
    try {
      app = await target.build(settings, target.policies);
    } finally {
      if (previous === undefined) delete process.env.SECRET_KEY;
      else process.env.SECRET_KEY = previous;
    }
    await dbManager.db.resetSchema();
    await app.ready();
    const resources = describeResources(app, dbManager.db, await target.routers(), target.appsDir);
    return new Fuzzed(dbName, app, dbManager.db, target, resources);
  }

  async close(): Promise<void> {
    await this.app.close();
    await dbManager.close();
  }

  resource(name: string): Resource {
    const r = this.resources.get(name);
    if (!r) throw new Error(`no resource ${name}`);
    return r;
  }

  caller(name: string): Caller {
    return this.callers.find((c) => c.name === name)!;
  }

  /** The published schema of one body or output, as this caller is shown it. */
  doc(resource: Resource, mode: SchemaMode, caller: Caller): JsonSchema {
    const key = `${resource.name}|${mode}|${caller.context.roles.join(',')}|${caller.kind}`;
    let doc = this.docs.get(key);
    if (!doc) {
      const schema = mode === 'create' ? resource.create : mode === 'out' ? resource.out : resource.update;
      doc = schema.jsonSchema(caller.context, mode === 'out' || mode === 'create' ? {} : { mode }) as JsonSchema;
      this.docs.set(key, doc);
    }
    return doc;
  }

  async inject(request: HttpRequest): Promise<HttpResponse> {
    this.sent += 1;
    const res = await this.app.inject({
      method: request.method as 'GET',
      url: request.url,
      headers: request.headers,
      ...(request.payload === undefined ? {} : { payload: request.payload }),
    });
    const response = { status: res.statusCode, headers: res.headers, text: res.body };
    return this.tamper ? this.tamper(request, response) : response;
  }

  // --- the database, read directly --------------------------------------------------------------

  async ids(resource: Resource): Promise<string[]> {
    const key = this.db.quote(resource.keyColumn);
    const rows = await this.db.select<{ id: string }>(
      `select ${key} as id from ${this.db.quote(resource.table)} order by ${key}`,
    );
    return rows.map((r) => String(r.id));
  }

  async exists(table: string, column: string, id: string): Promise<boolean> {
    const rows = await this.db.select(
      `select 1 as x from ${this.db.quote(table)} where ${this.db.quote(column)} = ? limit 1`,
      [id.toLowerCase()],
    );
    return rows.length > 0;
  }

  async count(resource: Resource): Promise<number> {
    const rows = await this.db.select<{ n: number | string }>(
      `select count(*) as n from ${this.db.quote(resource.table)}`,
    );
    return Number(rows[0]?.n);
  }

  /** Values of one column in use by rows other than `exceptId`. */
  async taken(resource: Resource, column: string, value: unknown, exceptId?: string): Promise<boolean> {
    const params: unknown[] = [value];
    let sql = `select 1 as x from ${this.db.quote(resource.table)} where ${this.db.quote(column)} = ?`;
    if (exceptId !== undefined) {
      sql += ` and ${this.db.quote(resource.keyColumn)} <> ?`;
      params.push(exceptId.toLowerCase());
    }
    return (await this.db.select(`${sql} limit 1`, params)).length > 0;
  }

  async column(resource: Resource, column: string): Promise<unknown[]> {
    const rows = await this.db.select<{ v: unknown }>(
      `select ${this.db.quote(column)} as v from ${this.db.quote(resource.table)} order by ${this.db.quote(resource.keyColumn)}`,
    );
    return rows.map((r) => r.v);
  }

  /** True when deleting the row would violate a `restrict` rule, here or down a chain of cascades. */
  async deleteBlocked(resource: Resource, id: string, depth = 0): Promise<boolean> {
    if (depth > 4) return false;
    for (const dep of resource.dependents) {
      const key = this.db.quote(this.resource(dep.resource).keyColumn);
      const rows = await this.db.select<{ id: string }>(
        `select ${key} as id from ${this.db.quote(dep.table)} where ${this.db.quote(dep.column)} = ?`,
        [id],
      );
      if (rows.length === 0) continue;
      if (dep.rule === 'restrict' || dep.rule === 'no action') return true;
      if (dep.rule === 'cascade') {
        for (const row of rows)
          if (await this.deleteBlocked(this.resource(dep.resource), String(row.id), depth + 1)) return true;
      }
    }
    return false;
  }
}

function contextOf(policies: PolicyDocument, role: string | null, sub: string | null): CallerContext {
  const policy = role ? policies.roles[role] : undefined;
  return {
    sub,
    roles: role ? [role] : [],
    permissions: new Set(policy?.permissions ?? []),
    restrictedFields: new Set(policy?.restricted_fields ?? []),
  };
}

function hs256(payload: object, secret: string, header: object = { alg: 'HS256', typ: 'JWT' }): string {
  const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${enc(header)}.${enc(payload)}`;
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

/**
 * Every role of the policies (a token each; `anonymous` is no token at all), the admin once more
 * through the cookie, a token with a role nobody declared, and credentials that must all be refused.
 */
function makeCallers(policies: PolicyDocument): Caller[] {
  const anonymous = contextOf(policies, 'anonymous', null);
  const callers: Caller[] = [];
  for (const role of Object.keys(policies.roles)) {
    if (role === 'anonymous') continue;
    const token = signToken({ sub: `fuzz-${role}`, roles: [role] }, SECRET);
    callers.push({
      name: role,
      kind: 'role',
      headers: { authorization: `Bearer ${token}` },
      context: contextOf(policies, role, `fuzz-${role}`),
      weight: role === 'admin' ? 10 : 3,
    });
  }
  const adminToken = signToken({ sub: 'fuzz-admin', roles: ['admin'] }, SECRET);
  callers.push({
    name: 'admin (cookie)',
    kind: 'role',
    headers: { cookie: `access_token=${adminToken}` },
    context: contextOf(policies, 'admin', 'fuzz-admin'),
    weight: 1,
  });
  const ghost = signToken({ sub: 'fuzz-ghost', roles: ['ghost'] }, SECRET);
  callers.push({
    name: 'unknown role',
    kind: 'role',
    headers: { authorization: `Bearer ${ghost}` },
    context: contextOf(policies, null, 'fuzz-ghost'),
    weight: 0.5,
  });
  callers.push({ name: 'no token', kind: 'anonymous', headers: {}, context: anonymous, weight: 1 });
  const now = Math.floor(Date.now() / 1000);
  const bad: [string, string][] = [
    ['malformed token', 'Bearer not.a.jwt'],
    [
      'token signed with another key',
      `Bearer ${hs256({ sub: 'x', roles: ['admin'], exp: now + 3600 }, 'z'.repeat(48))}`,
    ],
    ['expired token', `Bearer ${hs256({ sub: 'x', roles: ['admin'], exp: now - 60 }, SECRET)}`],
    [
      'alg none token',
      `Bearer ${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(`{"sub":"x","roles":["admin"],"exp":${now + 3600}}`).toString('base64url')}.`,
    ],
    ['empty bearer', 'Bearer '],
  ];
  for (const [name, value] of bad)
    callers.push({ name, kind: 'bad', headers: { authorization: value }, context: anonymous, weight: 0.2 });
  return callers;
}
