import { describe, expect, it } from 'vitest';
import { runWithContext } from '@core/runtime';
import { DATE_TIME_YEARS_PATTERN } from '../../runtime/src/model/calendar.js';
import { ctxWith, ProjectOut, TaskCreate, TaskOut, TaskUpdate } from './schema-fixtures.js';

const TASK_OUT_PROPERTIES = {
  id: { type: 'string', format: 'uuid' },
  title: { type: 'string', maxLength: 255 },
  description: { type: ['string', 'null'], maxLength: 1024 },
  priority: { type: 'string', maxLength: 50 },
  is_completed: { type: 'boolean' },
  assignee_email: { type: ['string', 'null'], maxLength: 255 },
  project_id: { type: ['string', 'null'], format: 'uuid' },
  // Every date-time is bounded to the years 0001–9999 by a pattern beside its format.
  created_at: { type: 'string', format: 'date-time', pattern: DATE_TIME_YEARS_PATTERN },
};
const PROJECT_OUT_PROPERTIES = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string', maxLength: 100 },
  budget: { type: 'number' },
};
const COMMENT_OUT = {
  title: 'CommentOut',
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    body: { type: 'string' },
    task_id: { type: 'string', format: 'uuid' },
  },
  required: ['id', 'body', 'task_id'],
};
const without = <T extends Record<string, unknown>>(object: T, ...keys: string[]): Partial<T> =>
  Object.fromEntries(Object.entries(object).filter(([k]) => !keys.includes(k))) as Partial<T>;

describe('jsonSchema: the document `?schema=true` answers', () => {
  it('create schema: title, nullable type arrays, formats, defaults, required', () => {
    expect(TaskCreate.jsonSchema(ctxWith())).toEqual({
      title: 'TaskCreate',
      type: 'object',
      properties: {
        title: { type: 'string', maxLength: 255 },
        description: { type: ['string', 'null'], maxLength: 1024, default: null },
        priority: { type: 'string', maxLength: 50, default: 'medium' },
        assignee_email: { type: ['string', 'null'], maxLength: 255, format: 'email', default: null },
        project_id: { type: ['string', 'null'], format: 'uuid', default: null },
      },
      required: ['title'],
    });
  });

  it('restricted fields leave properties and required; meta lists the entries', () => {
    const viewer = ctxWith('tasks.assignee_email', 'tasks.title', 'users.password');
    const doc = TaskCreate.jsonSchema(viewer);
    expect(Object.keys(doc.properties)).toEqual(['description', 'priority', 'project_id']);
    expect(doc.required).toEqual([]);
    expect(TaskCreate.restrictedFieldsFor(viewer)).toEqual(['tasks.assignee_email', 'tasks.title']);
  });

  it('a relation entry removes the foreign key from an input schema', () => {
    const ctx = ctxWith('tasks.project');
    expect(TaskCreate.jsonSchema(ctx).properties).not.toHaveProperty('project_id');
    expect(TaskCreate.restrictedFieldsFor(ctx)).toEqual(['tasks.project']);
  });

  it('output schema without restrictions documents its relations under x-relations', () => {
    expect(TaskOut.jsonSchema(ctxWith())).toEqual({
      title: 'TaskOut',
      type: 'object',
      properties: TASK_OUT_PROPERTIES,
      required: Object.keys(TASK_OUT_PROPERTIES),
      'x-relations': {
        project: {
          title: 'ProjectOut',
          type: ['object', 'null'],
          properties: PROJECT_OUT_PROPERTIES,
          required: ['id', 'name', 'budget'],
          'x-foreign-key': 'project_id',
          // ProjectOut.tasks leads back to TaskOut: not expanded again.
        },
        comments: { type: 'array', items: COMMENT_OUT },
      },
    });
  });

  it.each([
    { entry: 'tasks.project.budget', meta: ['tasks.project.budget'] },
    { entry: 'projects.budget', meta: ['projects.budget'] },
  ])('nested relation masked by $entry', ({ entry, meta }) => {
    const ctx = ctxWith(entry, 'tasks.assignee_email');
    const doc = TaskOut.jsonSchema(ctx);
    expect(doc.properties).toEqual(without(TASK_OUT_PROPERTIES, 'assignee_email'));
    expect(doc.required).not.toContain('assignee_email');
    expect(doc['x-relations']?.['project']).toMatchObject({
      properties: without(PROJECT_OUT_PROPERTIES, 'budget'),
      required: ['id', 'name'],
    });
    expect(TaskOut.restrictedFieldsFor(ctx)).toEqual([...meta, 'tasks.assignee_email'].sort());
  });

  it('a relation entry removes the relation and its foreign key', () => {
    const doc = TaskOut.jsonSchema(ctxWith('tasks.project', 'tasks.comments'));
    expect(doc.properties).toEqual(without(TASK_OUT_PROPERTIES, 'project_id'));
    expect(doc.required).not.toContain('project_id');
    expect(doc).not.toHaveProperty('x-relations');
  });

  it('the path entry does not touch the top-level projects schema; the namespace entry does', () => {
    expect(ProjectOut.jsonSchema(ctxWith('tasks.project.budget')).properties).toHaveProperty('budget');
    expect(ProjectOut.jsonSchema(ctxWith('projects.budget')).properties).not.toHaveProperty('budget');
  });

  it('patch mode requires nothing', () => {
    const put = TaskUpdate.jsonSchema(ctxWith());
    const patch = TaskUpdate.jsonSchema(ctxWith(), { mode: 'patch' });
    expect(put.required).toEqual(['title']);
    expect(patch.required).toEqual([]);
    expect(patch.properties).toEqual(put.properties);
  });

  it('meta is empty when nothing applies, and reads the active context by default', () => {
    expect(TaskOut.restrictedFieldsFor(ctxWith('users.password', 'tasks.no_such_field'))).toEqual([]);
    expect(runWithContext(ctxWith('tasks.title'), () => TaskOut.restrictedFieldsFor())).toEqual(['tasks.title']);
    expect(runWithContext(ctxWith('tasks.title'), () => Object.keys(TaskOut.jsonSchema().properties))).not.toContain(
      'title',
    );
    expect(TaskOut.jsonSchema().properties).toHaveProperty('title'); // system context
  });

  it('is cached per relevant restriction set and read-only', () => {
    const a = TaskOut.jsonSchema(ctxWith('tasks.assignee_email'));
    const b = TaskOut.jsonSchema(ctxWith('tasks.assignee_email', 'users.password'));
    expect(b).toBe(a);
    expect(TaskOut.jsonSchema(ctxWith())).not.toBe(a);
    expect(Object.isFrozen(a.properties['title'])).toBe(true);
    expect(() => {
      (a.required as string[]).push('x');
    }).toThrow(TypeError);
  });

  it('visibleFields lists the top-level fields a caller may see', () => {
    expect(TaskOut.visibleFields(ctxWith('tasks.project', 'tasks.assignee_email'))).toEqual([
      'id',
      'title',
      'description',
      'priority',
      'is_completed',
      'created_at',
    ]);
  });
});
