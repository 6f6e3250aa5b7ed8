import { Type } from 'typebox';
import { describe, expect, it, vi } from 'vitest';
import build from 'fast-json-stringify';
import { ContextSchema, runWithContext, type SchemaDefinition } from '@core/runtime';
import { CommentOut, ctxWith, PROJECT_ID, ProjectOut, TASK_ID, TaskOut } from './schema-fixtures.js';

// Count compilations: the runtime's serializers are built with fast-json-stringify.
vi.mock('fast-json-stringify', async (importOriginal) => {
  const original = await importOriginal<{ default: typeof build }>();
  return { ...original, default: vi.fn(original.default) };
});
const builds = vi.mocked(build);

const CREATED = new Date('2026-01-02T03:04:05.678Z');

const TASK = {
  id: TASK_ID,
  title: 'Write spec',
  description: null,
  priority: 'high',
  is_completed: false,
  assignee_email: 'ann@example.com',
  project_id: PROJECT_ID,
  created_at: CREATED,
};
const task = (overrides: Record<string, unknown> = {}) => ({ ...TASK, ...overrides });
const project = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: PROJECT_ID,
  name: 'Core',
  budget: 1000,
  ...overrides,
});

/** Both output paths must agree: the compiled serializer (parsed back) and `mask`. */
function render(schema: SchemaDefinition & typeof ContextSchema, value: unknown, restricted: string[]): unknown {
  const ctx = ctxWith(...restricted);
  const viaSerializer: unknown = JSON.parse(schema.serializer(ctx)(value));
  expect(schema.mask(value, ctx)).toEqual(viaSerializer);
  return viaSerializer;
}

const ISO = CREATED.toISOString();
const { assignee_email: _email, ...taskWithoutEmail } = { ...task(), created_at: ISO };
const { budget: _budget, ...projectWithoutBudget } = project();

describe('output masking (serializer and mask)', () => {
  const cases: {
    name: string;
    schema: SchemaDefinition & typeof ContextSchema;
    restricted: string[];
    value: unknown;
    expected: unknown;
  }[] = [
    {
      name: 'no restriction: every field, dates as ISO strings',
      schema: TaskOut,
      restricted: [],
      value: task(),
      expected: { ...task(), created_at: ISO },
    },
    {
      name: 'top-level field',
      schema: TaskOut,
      restricted: ['tasks.assignee_email'],
      value: task(),
      expected: taskWithoutEmail,
    },
    {
      name: 'array of rows',
      schema: TaskOut,
      restricted: ['tasks.assignee_email'],
      value: [task(), task({ id: 'b', assignee_email: null })],
      expected: [taskWithoutEmail, { ...taskWithoutEmail, id: 'b' }],
    },
    { name: 'empty array', schema: TaskOut, restricted: ['tasks.assignee_email'], value: [], expected: [] },
    {
      name: 'namespace entry masks a nested relation',
      schema: TaskOut,
      restricted: ['projects.budget'],
      value: task({ project: project() }),
      expected: { ...task(), created_at: ISO, project: projectWithoutBudget },
    },
    {
      name: 'namespace entry at top level',
      schema: ProjectOut,
      restricted: ['projects.budget'],
      value: project(),
      expected: projectWithoutBudget,
    },
    {
      name: 'path entry masks the nested field',
      schema: TaskOut,
      restricted: ['tasks.project.budget'],
      value: task({ project: project() }),
      expected: { ...task(), created_at: ISO, project: projectWithoutBudget },
    },
    {
      name: 'path entry leaves projects at top level alone',
      schema: ProjectOut,
      restricted: ['tasks.project.budget'],
      value: project(),
      expected: project(),
    },
    {
      name: 'relation entry masks the relation and its foreign key',
      schema: TaskOut,
      restricted: ['tasks.project'],
      value: task({ project: project() }),
      expected: (({ project_id: _p, ...rest }) => rest)({ ...task(), created_at: ISO }),
    },
    {
      name: 'foreign-key entry masks the relation too',
      schema: TaskOut,
      restricted: ['tasks.project_id'],
      value: task({ project: project() }),
      expected: (({ project_id: _p, ...rest }) => rest)({ ...task(), created_at: ISO }),
    },
    {
      name: 'to-many relation, masked per row',
      schema: TaskOut,
      restricted: ['comments.body'],
      value: task({
        comments: [
          { id: 'c1', body: 'x', task_id: TASK_ID },
          { id: 'c2', body: 'y', task_id: TASK_ID },
        ],
      }),
      expected: {
        ...task(),
        created_at: ISO,
        comments: [
          { id: 'c1', task_id: TASK_ID },
          { id: 'c2', task_id: TASK_ID },
        ],
      },
    },
    {
      name: 'cycle: tasks under a project are masked by the tasks namespace',
      schema: ProjectOut,
      restricted: ['tasks.assignee_email'],
      value: project({ tasks: [task({ project: project() })] }),
      expected: { ...project(), tasks: [{ ...taskWithoutEmail, project: project() }] },
    },
    {
      name: 'cycle: a path entry applies at its depth only',
      schema: TaskOut,
      restricted: ['tasks.project.tasks.assignee_email'],
      value: task({ project: project({ tasks: [task()] }) }),
      expected: { ...task(), created_at: ISO, project: { ...project(), tasks: [taskWithoutEmail] } },
    },
    {
      name: 'null to-one relation, absent fields and unknown keys',
      schema: TaskOut,
      restricted: ['tasks.assignee_email'],
      value: { id: TASK_ID, project: null, password_hash: 'x', assignee_email: 'ann@example.com' },
      expected: { id: TASK_ID, project: null },
    },
  ];
  it.each(cases)('$name', ({ schema, restricted, value, expected }) => {
    expect(render(schema, value, restricted)).toEqual(expected);
  });

  it('every property is optional: an empty object serializes, a masked value present in the data never throws', () => {
    expect(TaskOut.serializer(ctxWith('tasks.title'))({})).toBe('{}');
    expect(TaskOut.serializer(ctxWith('tasks.title'))({ title: 12345 })).toBe('{}');
  });

  it('calls toJSON (entities, wrappers) before masking', () => {
    const entity = { toJSON: () => task() };
    expect(render(TaskOut, entity, ['tasks.assignee_email'])).toEqual(taskWithoutEmail);
  });

  it('writes date and time formats as fast-json-stringify does', () => {
    class Event extends ContextSchema {
      static override readonly __model__ = 'events';
      static override readonly fields = Type.Object({
        at: Type.String({ format: 'date-time' }),
        on: Type.String({ format: 'date' }),
        maybe: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
        meta: Type.Unknown(),
      });
    }
    const local = new Date(2026, 4, 6, 7, 8, 9);
    const value = { at: local, on: local, maybe: null, meta: { nested: [1, 'two'] } };
    expect(render(Event, value, [])).toEqual({
      at: local.toISOString(),
      on: '2026-05-06',
      maybe: null,
      meta: { nested: [1, 'two'] },
    });
  });

  it('an unloaded to-one relation passed as a key never leaks the key: the serializer writes {}, mask leaves it out', () => {
    const value = task({ project: PROJECT_ID });
    expect(JSON.parse(TaskOut.serializer(ctxWith())(value)).project).toEqual({});
    expect(TaskOut.mask(value, ctxWith())).not.toHaveProperty('project');
  });

  it('reads the active context when none is passed', () => {
    const json = runWithContext(ctxWith('tasks.assignee_email'), () => TaskOut.serializer()(task()));
    expect(JSON.parse(json)).not.toHaveProperty('assignee_email');
    expect(runWithContext(ctxWith('tasks.assignee_email'), () => TaskOut.mask(task()))).not.toHaveProperty(
      'assignee_email',
    );
  });
});

describe('serializer compilation is cached per (schema, relevant restrictions)', () => {
  it('compiles once per restriction set, never per call or per context object', () => {
    class Ticket extends ContextSchema {
      static override readonly __model__ = 'tickets';
      static override readonly fields = Type.Object({ id: Type.String(), secret: Type.String() });
    }
    builds.mockClear();
    const a = Ticket.serializer(ctxWith('tickets.secret'));
    const b = Ticket.serializer(ctxWith('tickets.secret', 'projects.budget')); // the extra entry does not concern tickets
    const c = Ticket.serializer(ctxWith('tickets.secret'));
    expect(b).toBe(a);
    expect(c).toBe(a);
    for (let i = 0; i < 5; i++) a({ id: String(i), secret: 's' });
    expect(builds).toHaveBeenCalledTimes(1);

    const open1 = Ticket.serializer(ctxWith());
    const open2 = Ticket.serializer(ctxWith('users.password')); // unrelated entries share the unrestricted one
    expect(open2).toBe(open1);
    expect(open1).not.toBe(a);
    expect(builds).toHaveBeenCalledTimes(2);
    expect(open1({ id: '1', secret: 's' })).toBe('{"id":"1","secret":"s"}');
    expect(a({ id: '1', secret: 's' })).toBe('{"id":"1"}');
  });

  it('entries of an includable schema count for the parent; entries that name nothing do not', () => {
    class Child extends ContextSchema {
      static override readonly __model__ = 'children';
      static override readonly fields = Type.Object({ id: Type.String(), secret: Type.String() });
    }
    class Parent extends ContextSchema {
      static override readonly __model__ = 'parents';
      static override readonly fields = Type.Object({ id: Type.String() });
      static override readonly relations = { kids: { schema: () => Child, many: true } } as const;
    }
    builds.mockClear();
    const plain = Parent.serializer(ctxWith('children.no_such_field', 'parents.kids.no_such_field'));
    const masked = Parent.serializer(ctxWith('children.secret'));
    expect(Parent.serializer(ctxWith())).toBe(plain);
    expect(Parent.serializer(ctxWith('children.secret', 'parents.nothing'))).toBe(masked);
    expect(masked).not.toBe(plain);
    expect(builds).toHaveBeenCalledTimes(2);
    expect(masked({ id: 'p', kids: [{ id: 'k', secret: 's' }] })).toBe('{"id":"p","kids":[{"id":"k"}]}');
  });

  it('uses one definition per distinct position, so cyclic schemas compile to a finite schema', () => {
    builds.mockClear();
    ProjectOut.serializer(ctxWith('tasks.project.tasks.assignee_email', 'projects.name'));
    expect(builds).toHaveBeenCalledTimes(1);
    const schema = builds.mock.calls[0]![0] as { definitions: Record<string, unknown> };
    expect(Object.keys(schema.definitions).length).toBeLessThan(12);
  });
});

describe('schema declaration errors name the class and the fix', () => {
  it.each([
    {
      name: 'missing __model__',
      schema: class NoModel extends ContextSchema {
        static override readonly fields = Type.Object({ id: Type.String() });
      },
      message: /NoModel has no static __model__/,
    },
    {
      name: 'foreign key that is not a field',
      schema: class BadFk extends ContextSchema {
        static override readonly __model__ = 'bad';
        static override readonly fields = Type.Object({ id: Type.String() });
        static override readonly relations = {
          project: { schema: () => ProjectOut, many: false, foreignKey: 'project_id' },
        };
      },
      message: /BadFk\.relations\.project\.foreignKey names "project_id", which is not one of its fields \(id\)/,
    },
    {
      name: 'relation named like a field',
      schema: class Clash extends ContextSchema {
        static override readonly __model__ = 'clash';
        static override readonly fields = Type.Object({ comments: Type.String() });
        static override readonly relations = { comments: { schema: () => CommentOut, many: true } };
      },
      message: /Clash: relation "comments" has the same name as a field/,
    },
  ])('$name', ({ schema, message }) => {
    expect(() => schema.serializer(ctxWith())).toThrow(message);
  });
});
