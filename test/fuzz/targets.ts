/**
 * The apps the fuzzer drives: the hand-written task fixture, the generated relation graph and the
 * generated every-field-type app, each with the roles of its policies plus a few callers every app
 * must refuse alike (no token, bad tokens, a role nobody declared).
 *
 * Models register by class name, so two apps with a `Task` cannot load in one module graph: each
 * target imports its app when its suite starts, and each target has a test file of its own.
 */
import type { FastifyInstance } from 'fastify';
import type { PolicyDocument, Settings } from '@core/runtime';
import taskPolicies from '../../fixtures/apps/tasks/src/policies.json' with { type: 'json' };

/** What the fuzzer needs of a router: the values `BaseRouter` subclasses declare. */
export interface RouterLike {
  readonly prefix: string;
  readonly exposeSchemas: boolean;
  readonly model: { readonly name: string; readonly tableName: string };
  readonly createSchema: SchemaClass;
  readonly updateSchema: SchemaClass;
  readonly schemaOut: SchemaClass;
}

/** The static surface of a `ContextSchema` class the oracle reads. */
export interface SchemaClass {
  readonly name: string;
  readonly foreignKeys: Readonly<Record<string, string>>;
  jsonSchema(ctx?: unknown, options?: { mode?: 'create' | 'replace' | 'patch' }): unknown;
  restrictedFieldsFor(ctx?: unknown): readonly string[];
}

/**
 * A rule of the app's own services that changes what is stored (the oracle applies it to its
 * expectation): `(resource, mode, input) => input as the service will write it`.
 */
export type ServiceRule = (
  resource: string,
  mode: 'create' | 'replace' | 'patch',
  input: Record<string, unknown>,
) => Record<string, unknown>;

export interface FuzzTarget {
  readonly title: string;
  /** The app's folder of modules (`src/apps/`), where each `<name>/<name>.resource.json` lives. */
  readonly appsDir: URL;
  readonly policies: PolicyDocument;
  build(settings: Partial<Settings>, policies: PolicyDocument): Promise<FastifyInstance>;
  routers(): Promise<RouterLike[]>;
  readonly serviceRule?: ServiceRule;
}

const TASK_PRIORITIES = ['low', 'medium', 'high'];

export const TASKS_TARGET: FuzzTarget = {
  title: 'the task fixture',
  appsDir: new URL('../../fixtures/apps/tasks/src/apps/', import.meta.url),
  // The fixture's own policies.json: admin, viewer (reads, assignee_email hidden), editor, anonymous.
  policies: taskPolicies as PolicyDocument,
  async build(settings, policies) {
    const { buildApp } = await import('../../fixtures/apps/tasks/src/main.js');
    return buildApp({ settings, policies });
  },
  async routers() {
    const { TaskRouter } = await import('../../fixtures/apps/tasks/src/apps/tasks/routers.js');
    return [new TaskRouter()];
  },
  // The fixture's TaskService: a priority other than low, medium or high becomes medium on create.
  serviceRule(resource, mode, input) {
    if (resource !== 'tasks' || mode !== 'create' || !('priority' in input)) return input;
    return TASK_PRIORITIES.includes(input.priority as string) ? input : { ...input, priority: 'medium' };
  },
};

export const RELATIONS_TARGET: FuzzTarget = {
  title: 'the relation graph',
  appsDir: new URL('../../fixtures/golden/relation-graph/expected/src/apps/', import.meta.url),
  async build(settings, policies) {
    const { buildApp } = await import('../../fixtures/golden/relation-graph/expected/src/main.js');
    return buildApp({ settings, policies });
  },
  // The relation suites' roles (test/relations/relation-app.ts) and one that may only read tasks and
  // projects, so refusals by permission are exercised on this graph too.
  policies: {
    roles: {
      admin: { permissions: ['*'], restricted_fields: [] },
      noproject: { permissions: ['*'], restricted_fields: ['tasks.project'] },
      nobudget: { permissions: ['*'], restricted_fields: ['projects.budget'] },
      reader: {
        permissions: ['tasks:view', 'tasks:listview', 'projects:view', 'projects:listview'],
        restricted_fields: ['projects.budget', 'users.email'],
      },
      anonymous: { permissions: [], restricted_fields: [] },
    },
  },
  async routers() {
    const [tasks, projects, comments, labels, users, profiles] = await Promise.all([
      import('../../fixtures/golden/relation-graph/expected/src/apps/tasks/routers.js'),
      import('../../fixtures/golden/relation-graph/expected/src/apps/projects/routers.js'),
      import('../../fixtures/golden/relation-graph/expected/src/apps/comments/routers.js'),
      import('../../fixtures/golden/relation-graph/expected/src/apps/labels/routers.js'),
      import('../../fixtures/golden/relation-graph/expected/src/apps/users/routers.js'),
      import('../../fixtures/golden/relation-graph/expected/src/apps/profiles/routers.js'),
    ]);
    return [
      new tasks.TaskRouter(),
      new projects.ProjectRouter(),
      new comments.CommentRouter(),
      new labels.LabelRouter(),
      new users.UserRouter(),
      new profiles.ProfileRouter(),
    ] as RouterLike[];
  },
};

export const EVERY_FIELD_TYPE_TARGET: FuzzTarget = {
  title: 'every field type',
  appsDir: new URL('../../fixtures/golden/every-field-type/expected/src/apps/', import.meta.url),
  policies: {
    roles: {
      admin: { permissions: ['*'], restricted_fields: [] },
      // Reads only; four fields of different types hidden.
      viewer: {
        permissions: ['samples:view', 'samples:listview'],
        restricted_fields: ['samples.email', 'samples.exchange_rate', 'samples.starts_at', 'samples.settings'],
      },
      // Writes, with a decimal, a json and a nullable enum it may neither see nor set.
      clerk: { permissions: ['samples:*'], restricted_fields: ['samples.price', 'samples.settings', 'samples.kind'] },
      anonymous: { permissions: [], restricted_fields: [] },
    },
  },
  async build(settings, policies) {
    const { buildApp } = await import('../../fixtures/golden/every-field-type/expected/src/main.js');
    return buildApp({ settings, policies });
  },
  async routers() {
    const { SampleRouter } = await import(
      '../../fixtures/golden/every-field-type/expected/src/apps/samples/routers.js'
    );
    return [new SampleRouter()];
  },
};
