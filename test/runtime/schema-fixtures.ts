import { Type } from 'typebox';
import { ContextSchema, type CoreContext, type SchemaInput, type SchemaOutput, type SchemaPatch } from '@core/runtime';

/** The spec's task schemas (namespace `tasks`), written the way generated code writes them. */
export class TaskCreate extends ContextSchema {
  static override readonly __model__ = 'tasks';
  static override readonly fields = Type.Object({
    title: Type.String({ maxLength: 255 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], { default: null })),
    priority: Type.Optional(Type.String({ maxLength: 50, default: 'medium' })),
    assignee_email: Type.Optional(
      Type.Union([Type.String({ maxLength: 255, format: 'email' }), Type.Null()], { default: null }),
    ),
    project_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { default: null })),
  });
  static override readonly foreignKeys = { project_id: 'project' };
}
export type TaskCreateInput = SchemaInput<typeof TaskCreate>;

/** Replace semantics as declared (PUT); PATCH reads the same schema with `mode: 'patch'`. */
export class TaskUpdate extends ContextSchema {
  static override readonly __model__ = 'tasks';
  static override readonly fields = Type.Object({
    title: Type.String({ maxLength: 255 }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], { default: null })),
    priority: Type.Optional(Type.String({ maxLength: 50, default: 'medium' })),
    is_completed: Type.Optional(Type.Boolean({ default: false })),
    assignee_email: Type.Optional(
      Type.Union([Type.String({ maxLength: 255, format: 'email' }), Type.Null()], { default: null }),
    ),
    project_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { default: null })),
  });
  static override readonly foreignKeys = { project_id: 'project' };
}
export type TaskUpdateInput = SchemaInput<typeof TaskUpdate>;
export type TaskPatchInput = SchemaPatch<typeof TaskUpdate>;

export class TaskOut extends ContextSchema {
  static override readonly __model__ = 'tasks';
  static override readonly fields = Type.Object({
    id: Type.String({ format: 'uuid' }),
    title: Type.String({ maxLength: 255 }),
    description: Type.Union([Type.String({ maxLength: 1024 }), Type.Null()]),
    priority: Type.String({ maxLength: 50 }),
    is_completed: Type.Boolean(),
    assignee_email: Type.Union([Type.String({ maxLength: 255 }), Type.Null()]),
    project_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  });
  static override readonly relations = {
    project: { schema: () => ProjectOut, many: false, foreignKey: 'project_id' },
    comments: { schema: () => CommentOut, many: true },
  } as const;
}
export type TaskOutput = SchemaOutput<typeof TaskOut>;

export class ProjectOut extends ContextSchema {
  static override readonly __model__ = 'projects';
  static override readonly fields = Type.Object({
    id: Type.String({ format: 'uuid' }),
    name: Type.String({ maxLength: 100 }),
    budget: Type.Number(),
  });
  static override readonly relations = {
    tasks: { schema: () => TaskOut, many: true },
  } as const;
}

export class CommentOut extends ContextSchema {
  static override readonly __model__ = 'comments';
  static override readonly fields = Type.Object({
    id: Type.String({ format: 'uuid' }),
    body: Type.String(),
    task_id: Type.String({ format: 'uuid' }),
  });
}

export const TASK_ID = '6f1c2a4e-8d3b-4f5a-9c7e-1b2d3e4f5a6b';
export const PROJECT_ID = '0a9b8c7d-6e5f-4a3b-8c1d-2e3f4a5b6c7d';

/** A context with the given restriction entries (only `restrictedFields` matters to schemas). */
export function ctxWith(...restricted: string[]): CoreContext {
  return { sub: 'u1', roles: ['test'], permissions: new Set(['*']), restrictedFields: new Set(restricted) };
}
