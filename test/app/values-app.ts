/**
 * Runs a suite against the generated every-field-type project (`fixtures/golden/every-field-type/expected`,
 * its `samples` resource holds a field of every manifest type) once per database, through
 * `app.inject`. Beside it, the app serves `measures`: written here the way the generator writes a
 * resource (model, schemas, repository, service, router), for what the golden manifest does not
 * hold — decimals at the manifest's largest precision (38), one of them all fraction, and an
 * integer and a bigint without bounds in their request schemas, so the columns' own ranges apply;
 * and a many-to-one `sample`, to read samples as included rows.
 */
import { randomUUID } from 'node:crypto';
import { p, type Ref } from '@mikro-orm/core';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, beforeEach, vi } from 'vitest';
import {
  Base,
  BaseRepository,
  BaseRouter,
  BaseService,
  ContextSchema,
  container,
  dbManager,
  defineModel,
  Inject,
  loadSettings,
  signToken,
  type Database,
  type SchemaInput,
} from '@core/runtime';
import { decimalPattern, MAX_DECIMAL_PRECISION } from '../../generator/manifest/decimal.js';
import { Sample } from '../../fixtures/golden/every-field-type/expected/src/apps/samples/models.js';
import { SampleOut } from '../../fixtures/golden/every-field-type/expected/src/apps/samples/schemas.js';
import { buildApp } from '../../fixtures/golden/every-field-type/expected/src/main.js';
import { describePerDatabase, type DatabaseName } from '../helpers/databases.js';

const SECRET = 'v'.repeat(48);

export type Json = Record<string, unknown>;

/** `numeric(38, 10)`: 28 digits before the point and 10 after. */
export const WIDE = { precision: MAX_DECIMAL_PRECISION, scale: 10 } as const;
/** `numeric(38, 38)`: only a fraction, 38 digits of it. */
export const FRACTION = { precision: MAX_DECIMAL_PRECISION, scale: MAX_DECIMAL_PRECISION } as const;

/** A measure (table `measures`). */
export class Measure extends Base {
  static override readonly tableName = 'measures';

  declare id: string;
  declare label: string;
  declare wide: string;
  declare fraction: string | null;
  declare count: number | null;
  declare big: string | null;
  declare sample: Ref<Sample> | null;
}

export const MeasureSchema = defineModel(Measure, {
  id: p
    .uuid()
    .primary()
    .onCreate(() => randomUUID()),
  label: p.text(),
  wide: p.decimal('string').precision(WIDE.precision).scale(WIDE.scale).default('0.0000000000'),
  fraction: p.decimal('string').precision(FRACTION.precision).scale(FRACTION.scale).nullable(),
  count: p.integer().nullable(),
  big: p.bigint('string').nullable(),
  sample: () => p.manyToOne(Sample).ref().nullable().deleteRule('set null'),
});

const inputFields = {
  label: Type.String(),
  wide: Type.Optional(Type.String({ pattern: decimalPattern(WIDE), default: '0.0000000000' })),
  fraction: Type.Optional(
    Type.Union([Type.String({ pattern: decimalPattern(FRACTION) }), Type.Null()], { default: null }),
  ),
  count: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { default: null })),
  big: Type.Optional(Type.Union([Type.String({ pattern: '^-?\\d{1,18}$' }), Type.Null()], { default: null })),
  sample_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { default: null })),
};

export class MeasureCreate extends ContextSchema {
  static override readonly __model__ = 'measures';
  static override readonly fields = Type.Object(inputFields);
  static override readonly foreignKeys = { sample_id: 'sample' };
}
export type MeasureCreateInput = SchemaInput<typeof MeasureCreate>;

export class MeasureUpdate extends ContextSchema {
  static override readonly __model__ = 'measures';
  static override readonly fields = Type.Object(inputFields);
  static override readonly foreignKeys = { sample_id: 'sample' };
}
export type MeasureUpdateInput = SchemaInput<typeof MeasureUpdate>;

export class MeasureOut extends ContextSchema {
  static override readonly __model__ = 'measures';
  static override readonly fields = Type.Object({
    id: Type.String({ format: 'uuid' }),
    label: Type.String(),
    wide: Type.String(),
    fraction: Type.Union([Type.String(), Type.Null()]),
    count: Type.Union([Type.Integer(), Type.Null()]),
    big: Type.Union([Type.String(), Type.Null()]),
    sample_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  });
  static override readonly relations = {
    sample: { schema: () => SampleOut, many: false, foreignKey: 'sample_id' },
  };
}

export class MeasureRepository extends BaseRepository<Measure, MeasureCreateInput, MeasureUpdateInput> {
  constructor() {
    super({ model: Measure });
  }
}

export class MeasureService extends BaseService<Measure, MeasureCreateInput, MeasureUpdateInput> {
  constructor(repository = Inject(MeasureRepository)) {
    super({ model: Measure, repository });
  }
}

export class MeasureRouter extends BaseRouter<MeasureCreateInput, MeasureUpdateInput> {
  readonly model = Measure;
  readonly createSchema = MeasureCreate;
  readonly updateSchema = MeasureUpdate;
  readonly schemaOut = MeasureOut;
  readonly service = MeasureService;
  readonly prefix: string = '/measures';
}

export interface ValuesApp {
  readonly dbName: DatabaseName;
  readonly app: FastifyInstance;
  readonly db: Database;
  /** `app.inject` as an admin; an object payload is sent as JSON. */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** POST `path` as an admin; throws unless 201; returns `data`. */
  create(path: '/samples/' | '/measures/', body: Json): Promise<Json>;
}

/** The smallest valid sample body, with `extra` on top. */
export function sample(extra: Json = {}): Json {
  return { code: `c${randomUUID().slice(0, 8)}`, starts_at: '2026-01-31T09:30:00.000Z', ...extra };
}

export function describeValuesApp(title: string, body: (ctx: ValuesApp) => void): void {
  describePerDatabase(title, ({ name: dbName, url }) => {
    const ctx = {} as { -readonly [K in keyof ValuesApp]: ValuesApp[K] };

    beforeAll(async () => {
      const settings = loadSettings({
        env: { DATABASE_URL: url(), ENVIRONMENT: 'test', SECRET_KEY: SECRET, LOG_LEVEL: 'silent' },
      });
      // buildApp reads the environment before applying `settings`: without a SECRET_KEY there it would warn.
      vi.stubEnv('SECRET_KEY', SECRET);
      let app: FastifyInstance;
      try {
        app = await buildApp({ settings });
      } finally {
        vi.unstubAllEnvs();
      }
      container.scoped(MeasureRepository).scoped(MeasureService);
      await app.register(new MeasureRouter().router);
      await dbManager.db.resetSchema();
      await app.ready();
      const authorization = `Bearer ${signToken({ sub: 'admin', roles: ['admin'] }, SECRET)}`;
      const request = (options: InjectOptions): Promise<LightMyRequestResponse> => {
        const headers: Record<string, string> = {
          authorization,
          ...(options.headers as Record<string, string> | undefined),
        };
        if (typeof options.payload === 'object' && options.payload !== null && !Buffer.isBuffer(options.payload))
          headers['content-type'] ??= 'application/json';
        return app.inject({ ...options, headers });
      };
      Object.assign(ctx, {
        dbName,
        app,
        db: dbManager.db,
        request,
        async create(path: string, data: Json) {
          const res = await request({ method: 'POST', url: path, payload: data });
          if (res.statusCode !== 201) throw new Error(`POST ${path}: ${res.statusCode} ${res.body}`);
          return res.json().data as Json;
        },
      } satisfies ValuesApp);
    });

    afterAll(async () => {
      await ctx.app?.close();
      await dbManager.close();
    });

    beforeEach(async () => {
      const conn = ctx.db.orm.em.fork().getConnection();
      await conn.execute('delete from measures');
      await conn.execute('delete from samples');
    });

    body(ctx);
  });
}
