/**
 * Seeds the data once per database: 1,000 projects, 100,000 tasks, about 150,000 comments. The tables
 * are created by Core itself (the schema script: MikroORM's schema generator over the models the CLI
 * generated), so their DDL — column types, indexes, foreign keys — is exactly what a Core app gets on
 * that database; the rows are then inserted directly: prepared statements in one transaction on
 * SQLite, batches of `unnest` arrays on PostgreSQL.
 *
 * Data is deterministic (seeded PRNGs) and the same on both databases, so runs are comparable: uuid v4
 * ids, titles of two words (about 10% contain "report"), a third each low/medium/high, 20% completed,
 * half assigned; 90% of tasks in a project (about 100 per project), 0–3 comments per task; every task
 * owned by one of 10 owners (`owner_id`, about 10,000 each). The relations come from a second PRNG and
 * the owners from a third, so the other columns are those of runs before relations and owners existed.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { OWNER_COUNT, ownerSub, PROJECT_COUNT, ROW_COUNT, SAMPLE_COUNT, SEARCH_WORD } from './config.js';

const WORDS = [
  'alpha',
  'budget',
  'client',
  'deploy',
  'email',
  'fix',
  'growth',
  'hiring',
  'invoice',
  'launch',
  'meeting',
  'migrate',
  'onboard',
  'plan',
  'review',
  SEARCH_WORD,
  'roadmap',
  'sprint',
  'test',
  'update',
];
const PRIORITIES = ['low', 'medium', 'high'];

/** mulberry32: small, fast, good enough to spread test data. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uuidV4(random: () => number): string {
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) bytes[i] = Math.floor(random() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

interface TaskRow {
  id: string;
  title: string;
  description: string | null;
  priority: string;
  is_completed: boolean;
  assignee_email: string | null;
  owner_id: string | null;
  project_id: string | null;
}

interface ProjectRow {
  id: string;
  name: string;
}

interface CommentRow {
  id: string;
  body: string;
  task_id: string;
}

/** Every row of the data set, always the same for the same task count. */
interface DataSet {
  projects: ProjectRow[];
  /** The tasks, each followed by its comments. */
  tasks(): Generator<{ task: TaskRow; comments: CommentRow[] }>;
}

function dataSet(rows: number): DataSet {
  const relations = prng(20_261_126);
  const projects = Array.from({ length: PROJECT_COUNT }, (_, i) => ({
    id: uuidV4(relations),
    name: `Project ${WORDS[i % WORDS.length]} ${i}`,
  }));
  return {
    projects,
    *tasks() {
      const random = prng(20_261_125);
      const owners = prng(20_261_127);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
      for (let i = 0; i < rows; i++) {
        // The order of the random() calls is part of the data set: keep it.
        const id = uuidV4(random);
        const title = `${pick(WORDS)} ${pick(WORDS)} #${i}`;
        const description = random() < 0.3 ? null : `Task number ${i}: ${pick(WORDS)} and ${pick(WORDS)}.`;
        const assignee_email = random() < 0.5 ? `user${Math.floor(random() * 500)}@example.com` : null;
        const priority = pick(PRIORITIES);
        const is_completed = random() < 0.2;
        const project_id = relations() < 0.9 ? projects[Math.floor(relations() * projects.length)]!.id : null;
        const comments = Array.from({ length: Math.floor(relations() * 4) }, (_, k) => ({
          id: uuidV4(relations),
          body: `Comment ${k + 1} on task ${i}.`,
          task_id: id,
        }));
        const owner_id = ownerSub(Math.floor(owners() * OWNER_COUNT));
        yield {
          task: { id, title, description, priority, is_completed, assignee_email, owner_id, project_id },
          comments,
        };
      }
    },
  };
}

/** Every 100th task (from the 50th) is a sample: the by-id endpoints cycle through these ids. */
const isSample = (i: number, rows: number): boolean =>
  i % (rows / SAMPLE_COUNT) === Math.floor(rows / SAMPLE_COUNT / 2);

export interface SeedInfo {
  /** `SAMPLE_COUNT` existing task ids (the same on every database). */
  sampleIds: string[];
  rows: number;
  comments: number;
  ms: number;
}

const exec = promisify(execFile);

/** The tables, through Core's own schema generator (`node <schemaScript> <DATABASE_URL>`). */
async function createSchema(schemaScript: string, databaseUrl: string): Promise<void> {
  try {
    await exec(process.execPath, [schemaScript, databaseUrl]);
  } catch (error) {
    throw new Error(
      `creating the tables in ${databaseUrl} failed:\n${(error as { stderr?: string }).stderr ?? (error as Error).message}`,
      { cause: error },
    );
  }
}

/** Creates the SQLite file `path` (which must not exist) with the schema and the data set. */
export async function seedSqlite(path: string, schemaScript: string, rows = ROW_COUNT): Promise<SeedInfo> {
  const started = performance.now();
  await createSchema(schemaScript, `sqlite:${path}`);

  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  const insertProject = db.prepare('insert into projects (id, name) values (?, ?)');
  const insertTask = db.prepare(
    'insert into tasks (id, title, description, priority, is_completed, assignee_email, owner_id, project_id) values (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertComment = db.prepare('insert into comments (id, body, task_id) values (?, ?, ?)');
  const sampleIds: string[] = [];
  let i = 0;
  let comments = 0;
  const data = dataSet(rows);
  db.transaction(() => {
    for (const project of data.projects) insertProject.run(project.id, project.name);
    for (const { task, comments: list } of data.tasks()) {
      if (isSample(i++, rows)) sampleIds.push(task.id);
      insertTask.run(
        task.id,
        task.title,
        task.description,
        task.priority,
        task.is_completed ? 1 : 0,
        task.assignee_email,
        task.owner_id,
        task.project_id,
      );
      for (const comment of list) insertComment.run(comment.id, comment.body, comment.task_id);
      comments += list.length;
    }
  })();
  // Fold the WAL into the main file so a plain copy of `path` is the whole database.
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { sampleIds, rows, comments, ms: Math.round(performance.now() - started) };
}

/** Rows per INSERT on PostgreSQL: one statement binds an array per column, of this length. */
const PG_BATCH = 10_000;

/** Fills the (empty, existing) PostgreSQL database at `url` with the schema and the data set, then analyzes it. */
export async function seedPostgres(url: string, schemaScript: string, rows = ROW_COUNT): Promise<SeedInfo> {
  const started = performance.now();
  await createSchema(schemaScript, url);

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const sampleIds: string[] = [];
    let i = 0;
    let comments = 0;
    let tasks: TaskRow[] = [];
    let commentRows: CommentRow[] = [];
    const columns = <R, K extends keyof R>(rowsOf: R[], key: K): R[K][] => rowsOf.map((row) => row[key]);
    const flush = async (): Promise<void> => {
      if (tasks.length > 0) {
        await client.query(
          `insert into tasks (id, title, description, priority, is_completed, assignee_email, owner_id, project_id)
           select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::text[], $8::uuid[])`,
          (
            [
              'id',
              'title',
              'description',
              'priority',
              'is_completed',
              'assignee_email',
              'owner_id',
              'project_id',
            ] as const
          ).map((key) => columns(tasks, key)),
        );
      }
      if (commentRows.length > 0) {
        await client.query(
          'insert into comments (id, body, task_id) select * from unnest($1::uuid[], $2::text[], $3::uuid[])',
          (['id', 'body', 'task_id'] as const).map((key) => columns(commentRows, key)),
        );
      }
      tasks = [];
      commentRows = [];
    };
    const data = dataSet(rows);
    await client.query('begin');
    await client.query('insert into projects (id, name) select * from unnest($1::uuid[], $2::text[])', [
      columns(data.projects, 'id'),
      columns(data.projects, 'name'),
    ]);
    for (const { task, comments: list } of data.tasks()) {
      if (isSample(i++, rows)) sampleIds.push(task.id);
      tasks.push(task);
      commentRows.push(...list);
      comments += list.length;
      if (tasks.length === PG_BATCH) await flush();
    }
    await flush();
    await client.query('commit');
    // Planner statistics and the visibility map, as a database that has been running a while has them.
    await client.query('vacuum analyze');
    return { sampleIds, rows, comments, ms: Math.round(performance.now() - started) };
  } finally {
    await client.end();
  }
}
