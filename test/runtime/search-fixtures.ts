/**
 * Seed data and helpers shared by the search / read-path tests. The graph is small and fixed so every
 * expectation can be written down by hand; bulk data (for keyset walks) is inserted with one statement
 * per table through `em.insertMany`.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { type AppException, SYSTEM_CONTEXT, type CoreContext, type Database, type ErrorDetail } from '@core/runtime';
import { Comment, Label, Profile, Project, Task, User } from '../../fixtures/models/index.js';
import { countQueries } from '../helpers/databases.js';

export interface TaskSeed {
  title: string;
  description?: string | null;
  priority?: string;
  is_completed?: boolean;
  assignee_email?: string | null;
  points?: number | null;
  due_on?: string | null;
  due_at?: string | null;
  project?: string | null;
  labels?: string[];
  comments?: { body: string; author?: string | null }[];
}

/**
 * The fixed graph. Titles are unique and carry the LIKE edge cases: `%`, `_`, `\` and mixed case.
 * Projects: Alpha (budget 100, owner ann), Beta (no budget, owner bob), Gamma (budget 5, no owner).
 */
export const TASKS: TaskSeed[] = [
  {
    title: '50% off sale',
    description: 'Spring campaign banner',
    priority: 'high',
    points: 5,
    due_on: '2026-03-01',
    due_at: '2026-03-01T09:00:00Z',
    project: 'Alpha',
    labels: ['bug', 'urgent'],
    comments: [
      { body: 'first', author: 'ann' },
      { body: 'second', author: 'bob' },
    ],
    assignee_email: 'ann@example.com',
  },
  {
    title: '50 percent',
    description: 'Not a wildcard',
    priority: 'low',
    points: 5,
    due_on: '2026-03-02',
    due_at: '2026-03-02T09:00:00Z',
    project: 'Alpha',
    labels: ['bug'],
    comments: [{ body: 'only', author: 'ann' }],
  },
  {
    title: 'snake_case name',
    description: null,
    priority: 'medium',
    points: 3,
    due_on: null,
    due_at: null,
    project: 'Beta',
    labels: ['feature'],
  },
  {
    title: 'snakeXcase name',
    description: 'underscore must not match X',
    priority: 'medium',
    points: 3,
    project: 'Beta',
    comments: [{ body: 'anon', author: null }],
  },
  {
    title: 'C:\\Temp\\files',
    description: 'Back\\slash path',
    priority: 'low',
    points: null,
    due_on: '2026-01-15',
    project: 'Gamma',
  },
  {
    title: 'Mixed Case Title',
    description: 'Write the Release Notes',
    priority: 'high',
    points: 8,
    is_completed: true,
    due_at: '2026-02-01T12:30:00Z',
    project: null,
    labels: ['feature', 'urgent'],
  },
  {
    title: 'mixed case title',
    description: 'lower twin',
    priority: 'medium',
    points: null,
    project: null,
    assignee_email: 'bob@example.com',
  },
  { title: 'Glob [a]* chars?', description: 'GLOB metacharacters', priority: 'low', points: 2, project: 'Alpha' },
  {
    title: 'Quarterly report',
    description: 'Finance review with charts',
    priority: 'high',
    points: 1,
    is_completed: true,
    due_on: '2026-04-30',
    project: 'Gamma',
    comments: [
      { body: 'draft', author: 'bob' },
      { body: 'final', author: 'bob' },
      { body: 'ok', author: 'ann' },
    ],
  },
];

export interface Seeded {
  tasks: Map<string, string>;
  projects: Map<string, string>;
  users: Map<string, string>;
  labels: Map<string, string>;
}

/** Inserts the fixed graph through the ORM (one flush). */
export async function seedGraph(db: Database, tasks: TaskSeed[] = TASKS): Promise<Seeded> {
  const em = db.orm.em.fork();
  const users = new Map<string, User>();
  for (const [key, name] of [
    ['ann', 'Ann Archer'],
    ['bob', 'Bob Brown'],
  ] as const) {
    users.set(key, em.create(User, { email: `${key}@example.com`, name } as never));
  }
  const projects = new Map<string, Project>();
  for (const [name, budget, owner] of [
    ['Alpha', 100, 'ann'],
    ['Beta', null, 'bob'],
    ['Gamma', 5, null],
  ] as const) {
    projects.set(name, em.create(Project, { name, budget, owner: owner ? users.get(owner) : null } as never));
  }
  const labels = new Map<string, Label>();
  for (const name of ['bug', 'feature', 'urgent']) labels.set(name, em.create(Label, { name } as never));
  const taskEntities = new Map<string, Task>();
  for (const t of tasks) {
    const task = em.create(Task, {
      title: t.title,
      description: t.description ?? null,
      priority: t.priority ?? 'medium',
      is_completed: t.is_completed ?? false,
      assignee_email: t.assignee_email ?? null,
      points: t.points ?? null,
      due_on: t.due_on ?? null,
      due_at: t.due_at ? new Date(t.due_at) : null,
      project: t.project ? projects.get(t.project) : null,
      labels: (t.labels ?? []).map((l) => labels.get(l)),
    } as never);
    taskEntities.set(t.title, task);
    for (const c of t.comments ?? []) {
      em.create(Comment, { body: c.body, task, author: c.author ? users.get(c.author) : null } as never);
    }
  }
  await em.flush();
  // The one-to-one owner is created once its user has an id (propagation through the inverse side
  // leaves the key unset when both are new in the same flush).
  em.create(Profile, { bio: 'Ann writes', website: null, user: em.getReference(User, users.get('ann')!.id) } as never);
  await em.flush();
  const ids = <T extends { id: string }>(m: Map<string, T>) => new Map([...m].map(([k, v]) => [k, v.id]));
  return { tasks: ids(taskEntities), projects: ids(projects), users: ids(users), labels: ids(labels) };
}

/** Deletes every row of the fixture tables (children first). */
export async function clearAll(db: Database): Promise<void> {
  const em = db.orm.em.fork();
  for (const entity of [Comment, 'tasks_labels', Task, Profile, Project, Label, User] as const) {
    if (typeof entity === 'string') await em.getConnection().execute(`delete from ${entity}`);
    else await em.nativeDelete(entity, {});
  }
}

export interface BulkTask {
  id: string;
  title: string;
  points: number | null;
  priority: string;
  project: string | null;
  created_at: Date;
}

/** Inserts tasks with one INSERT statement. */
export async function insertTasks(db: Database, rows: BulkTask[]): Promise<void> {
  if (rows.length === 0) return;
  await db.orm.em.fork().insertMany(
    Task,
    rows.map((r) => ({
      id: r.id,
      title: r.title,
      description: null,
      priority: r.priority,
      is_completed: false,
      assignee_email: null,
      points: r.points,
      due_on: null,
      due_at: null,
      project: r.project,
      created_at: r.created_at,
    })) as never,
  );
}

export function bulkTask(i: number, overrides: Partial<BulkTask> = {}): BulkTask {
  return {
    id: randomUUID(),
    title: `bulk ${String(i).padStart(4, '0')}`,
    // Many ties (5 values) and many NULLs (every 7th row).
    points: i % 7 === 0 ? null : i % 5,
    priority: ['low', 'medium', 'high'][i % 3]!,
    project: null,
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000),
    ...overrides,
  };
}

/** A context with the given restriction entries (and every permission). */
export function restrictedContext(...entries: string[]): CoreContext {
  return { ...SYSTEM_CONTEXT, restrictedFields: new Set(entries) };
}

/**
 * Runs `fn`, expects it to fail with `type` before sending any SQL, and returns the error's first
 * detail (for asserting the JSON path and reason).
 */
export async function rejectsWithoutSql(
  db: Database,
  fn: () => Promise<unknown> | unknown,
  type: abstract new (...args: never[]) => AppException,
): Promise<ErrorDetail> {
  let error: unknown;
  const { queries } = await countQueries(db, async () => {
    try {
      await fn();
    } catch (err) {
      error = err;
    }
  });
  expect(error, 'expected the call to fail').toBeInstanceOf(type);
  expect(queries.map((q) => q.sql)).toEqual([]);
  const details = (error as AppException).details;
  expect(details.length).toBeGreaterThan(0);
  return details[0]!;
}

/** Data statements only (count-friendly). */
export async function statements<T>(db: Database, fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  const { result, queries } = await countQueries(db, fn);
  return { result, sql: queries.map((q) => q.sql) };
}
