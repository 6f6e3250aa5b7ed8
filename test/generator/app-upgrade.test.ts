/**
 * `syncMembers`: the ts-morph edit that keeps a user-owned router / repository in step with the
 * manifest. It must change exactly the initializer (or member) concerned, keep every other byte,
 * leave values the user computes alone, and change nothing on a second run.
 */
import { describe, expect, it } from 'vitest';
import { syncMembers, type SyncRequest } from '../../generator/ast/sync-members.js';

const ROUTER = `// mine
import { BaseRouter } from '@core/runtime';

/** My router. */
export class TaskRouter extends BaseRouter<C, U> {
  readonly model = Task;
  readonly prefix: string = '/tasks'; // keep this comment
  override readonly tags = ["tasks"];
  override readonly exposeSchemas: boolean = true;

  protected override routes(app: FastifyInstance): void {
    super.routes(app);
  }
}
`;

const routerSync = (prefix: string, tags: string[], exposeSchemas: boolean): SyncRequest => ({
  className: 'TaskRouter',
  properties: [
    { name: 'prefix', value: prefix, declaration: [`readonly prefix: string = '${prefix}';`] },
    { name: 'tags', value: tags, declaration: [`override readonly tags = ${JSON.stringify(tags)};`] },
    {
      name: 'exposeSchemas',
      value: exposeSchemas,
      declaration: [`override readonly exposeSchemas: boolean = ${exposeSchemas};`],
    },
  ],
});

const REPOSITORY = `export class TaskRepository extends BaseRepository<Task, C, U> {
  constructor() {
    super({ model: Task });
  }
}
`;

const KEYS_DOC = '/** keys */';
const repositorySync = (
  relationKeys: Record<string, string> | undefined,
  reader: Record<string, number> | undefined,
): SyncRequest => ({
  className: 'TaskRepository',
  properties: [
    {
      name: 'relationKeys',
      value: relationKeys,
      declaration: relationKeys ? [KEYS_DOC, `protected override readonly relationKeys = { labels: 'tag_ids' };`] : [],
    },
  ],
  superArgument: [{ name: 'reader', value: reader }],
});

describe('syncMembers', () => {
  it.each([
    ['same values written differently (double quotes): nothing changes', routerSync('/tasks', ['tasks'], true), ROUTER],
    [
      'a new prefix replaces only the initializer',
      routerSync('/todo', ['tasks'], true),
      ROUTER.replace("'/tasks'; // keep", "'/todo'; // keep"),
    ],
    [
      'new tags and exposeSchemas',
      routerSync('/tasks', ['tasks', 'planning'], false),
      ROUTER.replace('["tasks"]', "['tasks', 'planning']").replace('boolean = true', 'boolean = false'),
    ],
  ])('router: %s', (_case, request, expected) => {
    const { content, problems } = syncMembers(ROUTER, request);
    expect(problems).toEqual([]);
    expect(content).toBe(expected);
    expect(syncMembers(content, request).content).toBe(content);
  });

  it('leaves an initializer that is not a literal, or a getter, to the user', () => {
    const computed = ROUTER.replace("'/tasks'; // keep", "process.env.PREFIX ?? '/tasks'; // keep").replace(
      '  override readonly tags = ["tasks"];\n',
      '  override get tags(): string[] {\n    return ["x"];\n  }\n',
    );
    expect(syncMembers(computed, routerSync('/todo', ['y'], true)).content).toBe(computed);
  });

  it('adds a missing property after the last one, with the indentation of the class', () => {
    const without = ROUTER.replace('  override readonly exposeSchemas: boolean = true;\n', '');
    expect(syncMembers(without, routerSync('/tasks', ['tasks'], true)).content).toBe(ROUTER);
  });

  it.each([
    [
      'relationKeys inserted before the constructor',
      { labels: 'tag_ids' },
      undefined,
      `export class TaskRepository extends BaseRepository<Task, C, U> {
  ${KEYS_DOC}
  protected override readonly relationKeys = { labels: 'tag_ids' };

  constructor() {
    super({ model: Task });
  }
}
`,
    ],
    [
      'reader added to the super options',
      undefined,
      { defaultLimit: 20 },
      REPOSITORY.replace('{ model: Task }', '{ model: Task, reader: { defaultLimit: 20 } }'),
    ],
  ])('repository: %s, and removed again when the manifest drops it', (_case, keys, reader, expected) => {
    const added = syncMembers(REPOSITORY, repositorySync(keys, reader));
    expect(added.content).toBe(expected);
    expect(syncMembers(added.content, repositorySync(keys, reader)).content).toBe(expected);
    expect(syncMembers(added.content, repositorySync(undefined, undefined)).content).toBe(REPOSITORY);
  });

  it('updates a reader in a multi-line super call, keeping its layout', () => {
    const multiline = REPOSITORY.replace(
      'super({ model: Task });',
      'super({\n      model: Task,\n      reader: { defaultLimit: 20 },\n    });',
    );
    expect(syncMembers(multiline, repositorySync(undefined, { defaultLimit: 30, maxLimit: 90 })).content).toBe(
      multiline.replace('reader: { defaultLimit: 20 }', 'reader: { defaultLimit: 30, maxLimit: 90 }'),
    );
    expect(syncMembers(multiline, repositorySync(undefined, undefined)).content).toBe(
      multiline.replace('\n      reader: { defaultLimit: 20 },', ''),
    );
  });

  it.each([
    ['the class was renamed', REPOSITORY.replace('TaskRepository', 'Tasks'), 'no class TaskRepository'],
    [
      'the constructor calls super without options',
      REPOSITORY.replace('super({ model: Task })', 'super(Task)'),
      'no `super({ ... })` call in the constructor of TaskRepository',
    ],
  ])('reports what it cannot apply when %s, changing nothing', (_case, source, problem) => {
    expect(syncMembers(source, repositorySync(undefined, { defaultLimit: 20 }))).toEqual({
      content: source,
      problems: [problem],
    });
  });
});
