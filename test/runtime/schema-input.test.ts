import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ContextSchema,
  runWithContext,
  ValidationError,
  type ErrorDetail,
  type MaskedOutput,
  type SchemaClass,
  type SchemaOutput,
  type SchemaPatch,
} from '@core/runtime';
import {
  type CommentOut,
  ctxWith,
  PROJECT_ID,
  ProjectOut,
  TaskCreate,
  TaskOut,
  TaskUpdate,
  type TaskCreateInput,
  type TaskOutput,
  type TaskPatchInput,
} from './schema-fixtures.js';

const NONE = ctxWith();

function validationDetails(fn: () => unknown): ErrorDetail[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).statusCode).toBe(422);
    return (error as ValidationError).details;
  }
  throw new Error('expected a ValidationError, got none');
}

describe('ContextSchema.parse: restricted fields are pruned before validation', () => {
  // Each restricted value would fail validation if it were validated (or is simply a value to hide):
  // the parse must succeed and the key must be gone.
  const cases: { name: string; restricted: string[]; body: Record<string, unknown>; gone: string[] }[] = [
    {
      name: 'valid restricted value',
      restricted: ['tasks.assignee_email'],
      body: { title: 't', assignee_email: 'a@b.co' },
      gone: ['assignee_email'],
    },
    {
      name: 'too long',
      restricted: ['tasks.assignee_email'],
      body: { title: 't', assignee_email: 'x'.repeat(300) },
      gone: ['assignee_email'],
    },
    {
      name: 'wrong type',
      restricted: ['tasks.assignee_email'],
      body: { title: 't', assignee_email: 42 },
      gone: ['assignee_email'],
    },
    {
      name: 'relation entry prunes its foreign key',
      restricted: ['tasks.project'],
      body: { title: 't', project_id: PROJECT_ID },
      gone: ['project_id'],
    },
    {
      name: 'foreign key entry',
      restricted: ['tasks.project_id'],
      body: { title: 't', project_id: 'not-a-uuid' },
      gone: ['project_id'],
    },
    {
      name: 'two entries',
      restricted: ['tasks.priority', 'tasks.description'],
      body: { title: 't', priority: 7, description: false },
      gone: ['priority', 'description'],
    },
  ];
  it.each(cases)('$name', ({ restricted, body, gone }) => {
    const parsed = TaskCreate.parse(body, ctxWith(...restricted));
    for (const key of gone) expect(parsed).not.toHaveProperty(key);
    expect(parsed.title).toBe('t');
  });

  it('does not fill a pruned field with its default (the stored or database value stays)', () => {
    const parsed = TaskCreate.parse({ title: 't' }, ctxWith('tasks.assignee_email'));
    expect(parsed).toEqual({ title: 't', description: null, priority: 'medium', project_id: null });
  });

  it('ignores entries of other namespaces or paths', () => {
    const parsed = TaskCreate.parse(
      { title: 't', assignee_email: 'a@b.co' },
      ctxWith('projects.assignee_email', 'tasks.project.assignee_email'),
    );
    expect(parsed.assignee_email).toBe('a@b.co');
  });

  it('a restricted field is pruned even when it is required', () => {
    expect(TaskCreate.parse({ title: 99 }, ctxWith('tasks.title'))).not.toHaveProperty('title');
  });

  it('reads the active context when none is passed', () => {
    const parsed = runWithContext(ctxWith('tasks.assignee_email'), () =>
      TaskCreate.parse({ title: 't', assignee_email: 'a@b.co' }),
    );
    expect(parsed).not.toHaveProperty('assignee_email');
    expect(TaskCreate.parse({ title: 't', assignee_email: 'a@b.co' }).assignee_email).toBe('a@b.co'); // system context
  });
});

describe('ContextSchema.parse: unknown keys, defaults, modes', () => {
  it('drops unknown keys silently and does not touch the input', () => {
    const body = { title: 't', nope: 1, __proto__x: 2, is_completed: true };
    const copy = structuredClone(body);
    expect(TaskCreate.parse(body, NONE)).toEqual({
      title: 't',
      description: null,
      priority: 'medium',
      assignee_email: null,
      project_id: null,
    });
    expect(body).toEqual(copy);
  });

  it.each([
    { mode: 'create' as const, schema: TaskCreate },
    { mode: 'replace' as const, schema: TaskUpdate },
  ])('$mode applies defaults to absent fields and keeps sent ones', ({ mode, schema }) => {
    const parsed = schema.parse({ title: 't', priority: 'high' }, NONE, { mode });
    expect(parsed).toMatchObject({
      title: 't',
      description: null,
      priority: 'high',
      assignee_email: null,
      project_id: null,
    });
  });

  describe("fills absent fields as TypeBox's Value.Default does: the same values in the same key order", () => {
    class Note extends ContextSchema {
      static override readonly __model__ = 'notes';
      static override readonly fields = Type.Object({
        text: Type.String(),
        tags: Type.Optional(Type.Array(Type.String(), { default: [] })),
        meta: Type.Optional(Type.Unknown({ default: { pinned: false } })),
        color: Type.Optional(Type.Union([Type.String(), Type.Null()], { default: null })),
      });
    }
    // A default below a field: Value.Default itself fills it.
    class Profile extends ContextSchema {
      static override readonly __model__ = 'profiles';
      static override readonly fields = Type.Object({
        name: Type.String(),
        settings: Type.Optional(
          Type.Object({ theme: Type.String({ default: 'dark' }), size: Type.Optional(Type.Number()) }, { default: {} }),
        ),
      });
    }
    it.each([
      { schema: TaskCreate, body: { title: 't' } },
      { schema: TaskCreate, body: { priority: 'high', title: 't', description: 'd' } },
      { schema: TaskCreate, body: { title: 't', description: null, project_id: PROJECT_ID } },
      { schema: Note, body: { text: 'x' } },
      { schema: Note, body: { color: 'red', text: 'x', tags: ['a'], meta: { any: [1] } } },
      { schema: Profile, body: { name: 'p' } },
      { schema: Profile, body: { name: 'p', settings: { size: 2 } } },
    ])('$schema.name $body', ({ schema, body }) => {
      // The declared fields sent, in declaration order, as the parse keeps them before filling defaults.
      const sent = Object.keys(schema.fields.properties)
        .filter((name) => Object.hasOwn(body, name))
        .map((name) => [name, structuredClone((body as Record<string, unknown>)[name])]);
      const expected = Value.Default(schema.fields, Object.fromEntries(sent)) as Record<string, unknown>;
      const parsed = schema.parse(body, NONE) as Record<string, unknown>;
      expect(parsed).toEqual(expected);
      expect(Object.keys(parsed)).toEqual(Object.keys(expected));
    });

    it('gives every body its own copy of an object default', () => {
      const first = Note.parse({ text: 'a' }, NONE) as { tags: string[]; meta: { pinned: boolean } };
      const second = Note.parse({ text: 'b' }, NONE) as { tags: string[]; meta: { pinned: boolean } };
      expect(first.tags).not.toBe(second.tags);
      expect(first.meta).not.toBe(second.meta);
      expect(second.meta).toEqual({ pinned: false });
    });
  });

  it('replace: every writable field is present, so the router can assign the whole body', () => {
    const { data, absent } = TaskUpdate.parseDetailed({ title: 't' }, NONE, { mode: 'replace' });
    expect(data).toEqual({
      title: 't',
      description: null,
      priority: 'medium',
      is_completed: false,
      assignee_email: null,
      project_id: null,
    });
    expect(absent).toEqual([]);
  });

  it('replace: restricted fields are neither returned nor reported absent (they keep their stored value)', () => {
    const { data, absent } = TaskUpdate.parseDetailed(
      { title: 't', assignee_email: 'a@b.co' },
      ctxWith('tasks.assignee_email'),
      { mode: 'replace' },
    );
    expect(data).not.toHaveProperty('assignee_email');
    expect(absent).toEqual([]);
  });

  it('replace: an optional field without a default is reported absent', () => {
    class NoteUpdate extends ContextSchema {
      static override readonly __model__ = 'notes';
      static override readonly fields = Type.Object({ text: Type.String(), color: Type.Optional(Type.String()) });
    }
    expect(NoteUpdate.parseDetailed({ text: 'x' }, NONE, { mode: 'replace' })).toEqual({
      data: { text: 'x' },
      absent: ['color'],
    });
    expect(NoteUpdate.parseDetailed({ text: 'x', color: 'red' }, NONE, { mode: 'replace' }).absent).toEqual([]);
  });

  it('replace: a required field is required', () => {
    expect(validationDetails(() => TaskUpdate.parse({ priority: 'low' }, NONE, { mode: 'replace' }))).toEqual([
      { path: 'title', message: 'is required', reason: 'required' },
    ]);
  });

  it.each([
    { body: {}, expected: {} },
    { body: { priority: 'low' }, expected: { priority: 'low' } },
    { body: { description: null, extra: 1 }, expected: { description: null } },
    { body: { is_completed: true, assignee_email: 'a@b.co' }, expected: { is_completed: true } },
  ])('patch returns only the fields sent, without defaults: $body', ({ body, expected }) => {
    expect(TaskUpdate.parse(body, ctxWith('tasks.assignee_email'), { mode: 'patch' })).toEqual(expected);
  });

  it('patch still validates the fields sent', () => {
    expect(validationDetails(() => TaskUpdate.parse({ title: null }, NONE, { mode: 'patch' }))).toEqual([
      { path: 'title', message: 'must be string', reason: 'type' },
    ]);
  });

  it('rejects an unknown mode', () => {
    expect(() => TaskCreate.parse({}, NONE, { mode: 'upsert' as 'create' })).toThrow(/Unknown parse mode "upsert"/);
  });
});

describe('ContextSchema.parse: validation errors', () => {
  const cases: { name: string; body: unknown; details: ErrorDetail[] }[] = [
    {
      name: 'array body',
      body: [{ title: 't' }],
      details: [{ path: '', message: 'must be an object; received an array', reason: 'type' }],
    },
    {
      name: 'null body',
      body: null,
      details: [{ path: '', message: 'must be an object; received null', reason: 'type' }],
    },
    {
      name: 'string body',
      body: 'title',
      details: [{ path: '', message: 'must be an object; received a string', reason: 'type' }],
    },
    { name: 'missing required', body: {}, details: [{ path: 'title', message: 'is required', reason: 'required' }] },
    { name: 'wrong type', body: { title: 5 }, details: [{ path: 'title', message: 'must be string', reason: 'type' }] },
    {
      name: 'too long',
      body: { title: 'x'.repeat(256) },
      details: [{ path: 'title', message: 'must not have more than 255 characters', reason: 'maxLength' }],
    },
    {
      name: 'nullable union, wrong type',
      body: { title: 't', description: 5 },
      details: [{ path: 'description', message: 'must be string or null', reason: 'type' }],
    },
    {
      name: 'nullable union, near miss',
      body: { title: 't', description: 'x'.repeat(1025) },
      details: [{ path: 'description', message: 'must not have more than 1024 characters', reason: 'maxLength' }],
    },
    {
      name: 'format',
      body: { title: 't', project_id: 'nope' },
      details: [{ path: 'project_id', message: 'must match format "uuid"', reason: 'format' }],
    },
    {
      name: 'several problems',
      body: { priority: 3, assignee_email: 'not-an-email' },
      details: [
        { path: 'title', message: 'is required', reason: 'required' },
        { path: 'priority', message: 'must be string', reason: 'type' },
        { path: 'assignee_email', message: 'must match format "email"', reason: 'format' },
      ],
    },
  ];
  it.each(cases)('$name', ({ body, details }) => {
    expect(validationDetails(() => TaskCreate.parse(body, NONE))).toEqual(details);
  });

  it('literal unions list their values', () => {
    class Job extends ContextSchema {
      static override readonly __model__ = 'jobs';
      static override readonly fields = Type.Object({
        state: Type.Union([Type.Literal('new'), Type.Literal('done'), Type.Null()]),
      });
    }
    expect(validationDetails(() => Job.parse({ state: 'old' }, NONE))).toEqual([
      { path: 'state', message: 'must be "new" or "done" or null', reason: 'enum' },
    ]);
  });

  it('never echoes a value back, restricted or not', () => {
    const secret = 'secret-value-1234@example.com';
    const details = validationDetails(() =>
      TaskCreate.parse(
        { title: secret.repeat(20), description: 7, assignee_email: secret + '!'.repeat(300) },
        ctxWith('tasks.assignee_email'),
      ),
    );
    expect(details.map((d) => d.path)).toEqual(['title', 'description']);
    expect(JSON.stringify(details)).not.toContain('secret-value');
  });
});

describe('ContextSchema types', () => {
  it('parse results are typed from the schema', () => {
    const create = () => TaskCreate.parse({});
    const patch = () => TaskUpdate.parse({}, NONE, { mode: 'patch' });
    expectTypeOf(create).returns.toEqualTypeOf<TaskCreateInput>();
    expectTypeOf<TaskCreateInput>().toEqualTypeOf<{
      title: string;
      description?: string | null;
      priority?: string;
      assignee_email?: string | null;
      project_id?: string | null;
    }>();
    expectTypeOf(patch).returns.toEqualTypeOf<TaskPatchInput>();
    expectTypeOf<TaskPatchInput['title']>().toEqualTypeOf<string | undefined>();
  });

  it('schema classes fit SchemaClass, and generic callers keep the precise types', () => {
    const all: SchemaClass[] = [TaskCreate, TaskUpdate, TaskOut, ProjectOut];
    expect(all).toHaveLength(4);
    const readPatch = <C extends SchemaClass>(schema: C) => schema.parse({ priority: 'low' }, NONE, { mode: 'patch' });
    expectTypeOf(readPatch<typeof TaskUpdate>).returns.toEqualTypeOf<SchemaPatch<typeof TaskUpdate>>();
    expect(readPatch(TaskUpdate)).toEqual({ priority: 'low' });
  });

  it('output types follow relations, including cycles', () => {
    expectTypeOf<TaskOutput['project']>().toEqualTypeOf<SchemaOutput<typeof ProjectOut> | null | undefined>();
    expectTypeOf<NonNullable<TaskOutput['comments']>>().toEqualTypeOf<SchemaOutput<typeof CommentOut>[]>();
    expectTypeOf<NonNullable<SchemaOutput<typeof ProjectOut>['tasks']>[number]['assignee_email']>().toEqualTypeOf<
      string | null
    >();
    expectTypeOf<MaskedOutput<typeof TaskOut>['assignee_email']>().toEqualTypeOf<string | null | undefined>();
    const masked = () => TaskOut.mask([]);
    expectTypeOf(masked).returns.toEqualTypeOf<MaskedOutput<typeof TaskOut>[]>();
    const maskedOne = () => TaskOut.mask({ id: 'x' });
    expectTypeOf(maskedOne).returns.toEqualTypeOf<MaskedOutput<typeof TaskOut> | null>();
  });
});
