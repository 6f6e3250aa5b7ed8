/**
 * What `generateApp` refuses before writing anything: manifests the validator accepts but the
 * generator cannot turn into working code (relation sides that do not pair up, fields nothing could
 * ever set, required relations in a cycle). Each problem names the JSON path of the app's manifest.
 */
import { describe, expect, it } from 'vitest';
import type { FieldSpec, Manifest, RelationSpec } from '../../generator/manifest/schema.js';
import { ManifestError } from '../../generator/manifest/validate.js';
import { Tree } from '../../generator/engine/tree.js';
import { generateApp } from '../../generator/generators/app/index.js';

const ID: Record<string, FieldSpec> = { id: { type: 'uuid', primary: true } };

function resource(
  name: string,
  entity: string,
  fields: Record<string, FieldSpec> = {},
  relations?: Record<string, RelationSpec>,
): Manifest {
  return { name, entity, fields: { ...ID, ...fields }, ...(relations ? { relations } : {}) };
}

/** Generates the first manifest of `all` into a tree on a folder that does not exist (nothing is read or written). */
async function problemsOf(all: Manifest[]): Promise<string[]> {
  const manifests = new Map(all.map((m) => [m.name, m]));
  const tree = new Tree('/nonexistent/core-validation');
  const [first] = all;
  try {
    await generateApp(tree, first!, {
      module: first!.name,
      dir: `src/apps/${first!.name}`,
      manifestPath: `src/apps/${first!.name}/x.json`,
      manifests,
    });
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    expect(tree.changes()).toEqual([]);
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  return [];
}

const projects = resource('projects', 'Project');

describe('generateApp refuses manifests it cannot generate, naming the JSON path', () => {
  it.each<[string, Manifest[], string]>([
    [
      'auto on a field that is not a datetime',
      [resource('tasks', 'Task', { due: { type: 'date', auto: 'now' } })],
      '$.fields.due.auto: "auto" sets a timestamp and applies to datetime fields, this one is "date"',
    ],
    [
      'min_length on an integer',
      [resource('tasks', 'Task', { n: { type: 'integer', min_length: 2 } })],
      '$.fields.n.min_length: "min_length" applies to string and text fields, this one is "integer"',
    ],
    [
      'bounds on a decimal',
      [resource('tasks', 'Task', { price: { type: 'decimal', minimum: 0 } })],
      '$.fields.price.minimum: "minimum" applies to integer and float fields, this one is "decimal" (decimals travel as strings, so JSON Schema bounds cannot check them)',
    ],
    [
      'a readonly field nothing sets',
      [resource('tasks', 'Task', { code: { type: 'string', readonly: true } })],
      '$.fields.code: is "readonly", not nullable, and has no default or "auto": nothing could set it when a record is created; add a "default", "nullable": true or "auto"',
    ],
    [
      'a hidden primary key',
      [resource('tasks', 'Task', { id: { type: 'uuid', primary: true, output: false } })],
      '$.fields.id.output: the primary key is always returned (it is in every URL); remove "output": false',
    ],
    [
      'a one-to-many whose target has no many-to-one back',
      [
        resource('projects', 'Project', {}, { tasks: { kind: 'one-to-many', target: 'tasks', inverse: 'project' } }),
        resource('tasks', 'Task'),
      ],
      '$.relations.tasks.inverse: tasks has no many-to-one relation "project" to projects; add "project": { "kind": "many-to-one", "target": "projects" } to the tasks manifest',
    ],
    [
      'a one-to-many and a many-to-one that name different inverses',
      [
        resource('projects', 'Project', {}, { tasks: { kind: 'one-to-many', target: 'tasks', inverse: 'project' } }),
        resource('tasks', 'Task', {}, { project: { kind: 'many-to-one', target: 'projects', inverse: 'todos' } }),
      ],
      '$.relations.tasks.inverse: tasks.project names its inverse "todos", not "tasks"; make them agree',
    ],
    [
      'both sides of a many-to-many claiming the pivot',
      [
        resource(
          'tasks',
          'Task',
          {},
          { labels: { kind: 'many-to-many', target: 'labels', inverse: 'tasks', owner: true } },
        ),
        resource(
          'labels',
          'Label',
          {},
          { tasks: { kind: 'many-to-many', target: 'tasks', inverse: 'labels', owner: true } },
        ),
      ],
      '$.relations.labels.owner: both tasks.labels and labels.tasks claim to own the many-to-many relation; set "owner": true on one side only',
    ],
    [
      'ids_field on the inverse side of a many-to-many',
      [
        resource(
          'labels',
          'Label',
          {},
          { tasks: { kind: 'many-to-many', target: 'tasks', inverse: 'labels', ids_field: 'todo_ids' } },
        ),
        resource(
          'tasks',
          'Task',
          {},
          { labels: { kind: 'many-to-many', target: 'labels', inverse: 'tasks', owner: true } },
        ),
      ],
      '$.relations.tasks.ids_field: only the owning side of a many-to-many takes ids; tasks.labels owns this one',
    ],
    [
      'an inverse one-to-one without an owner',
      [
        resource('users', 'User', {}, { profile: { kind: 'one-to-one', target: 'profiles', owner: false } }),
        resource('profiles', 'Profile'),
      ],
      '$.relations.profile.owner: users.profile is not the owner and profiles declares no owning side; remove "owner": false or declare the relation on profiles with "owner": true',
    ],
    [
      'an inverse name that is a field of the target',
      [
        resource('tasks', 'Task', {}, { project: { kind: 'many-to-one', target: 'projects', inverse: 'name' } }),
        resource('projects', 'Project', { name: { type: 'string' } }),
      ],
      '$.relations.project.inverse: "name" is already a field of projects; choose another inverse name',
    ],
    [
      'a field colliding with an inverse another manifest declares',
      [
        resource('projects', 'Project', { tasks: { type: 'integer', nullable: true } }),
        resource('tasks', 'Task', {}, { project: { kind: 'many-to-one', target: 'projects', inverse: 'tasks' } }),
      ],
      '$.fields.tasks: collides with the relation "tasks" that tasks.project declares as its inverse; rename one of them',
    ],
    [
      'required relations in a cycle',
      [
        resource('tasks', 'Task', {}, { project: { kind: 'many-to-one', target: 'projects' } }),
        resource('projects', 'Project', {}, { lead: { kind: 'many-to-one', target: 'tasks' } }),
      ],
      '$.relations.project: required relations form a cycle (tasks → projects → tasks): no record could be created first; make one of them "nullable": true',
    ],
  ])('%s', async (_case, manifests, problem) => {
    expect(await problemsOf(manifests)).toEqual([problem]);
  });

  it.each<[string, Manifest[]]>([
    [
      'a many-to-one declared with its inverse on the other side too',
      [
        resource(
          'tasks',
          'Task',
          {},
          { project: { kind: 'many-to-one', target: 'projects', nullable: true, inverse: 'tasks' } },
        ),
        resource('projects', 'Project', {}, { tasks: { kind: 'one-to-many', target: 'tasks', inverse: 'project' } }),
      ],
    ],
    [
      'a self-reference with an inverse',
      [
        resource(
          'tasks',
          'Task',
          {},
          { parent: { kind: 'many-to-one', target: 'tasks', nullable: true, inverse: 'children' } },
        ),
      ],
    ],
    [
      'a one-to-one declared on both sides, one owner',
      [
        resource('users', 'User', {}, { profile: { kind: 'one-to-one', target: 'profiles', inverse: 'user' } }),
        resource(
          'profiles',
          'Profile',
          {},
          { user: { kind: 'one-to-one', target: 'users', inverse: 'profile', owner: true } },
        ),
      ],
    ],
    [
      'a relation to a resource without relations',
      [resource('tasks', 'Task', {}, { project: { kind: 'many-to-one', target: 'projects' } }), projects],
    ],
  ])('accepts %s', async (_case, manifests) => {
    expect(await problemsOf(manifests)).toEqual([]);
  });
});
