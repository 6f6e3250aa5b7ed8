/**
 * `upgradeMembers`: the one-time ts-morph edit that makes a router / repository written by the
 * previous generator (manifest values in the file, edited by every `core generate`) read them from
 * the generated `config.ts`. It must switch exactly the members still holding the manifest's value,
 * keep and report the ones the user set otherwise, and leave every other byte as it was.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upgradeMembers, type UpgradeRequest } from '../../generator/ast/upgrade-members.js';
import { GOLDEN_DIR, readCase, runGoldenCase } from './golden-runner.js';

const PREVIOUS = /^\/\/ `core generate` only keeps .* in step with the manifest\.(?=\r?$)/m;

const ROUTER = `// mine
// \`core generate\` only keeps \`prefix\`, \`tags\` and \`exposeSchemas\` in step with the manifest.
import { BaseRouter } from '@core/runtime';
import { Task } from './models.js';

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

const UPGRADED = `// mine
// new banner
import { BaseRouter } from '@core/runtime';
import { routerConfig } from './config.js';
import { Task } from './models.js';

/** My router. */
export class TaskRouter extends BaseRouter<C, U> {
  readonly model = Task;
  readonly prefix = routerConfig.prefix; // keep this comment
  override readonly tags = routerConfig.tags;
  override readonly exposeSchemas = routerConfig.exposeSchemas;

  protected override routes(app: FastifyInstance): void {
    super.routes(app);
  }
}
`;

const routerRequest = (prefix: string, tags: string[], exposeSchemas: boolean): UpgradeRequest => ({
  className: 'TaskRouter',
  properties: [
    {
      name: 'prefix',
      value: prefix,
      reference: 'routerConfig.prefix',
      declaration: ['readonly prefix = routerConfig.prefix;'],
    },
    {
      name: 'tags',
      value: tags,
      reference: 'routerConfig.tags',
      declaration: ['override readonly tags = routerConfig.tags;'],
    },
    {
      name: 'exposeSchemas',
      value: exposeSchemas,
      reference: 'routerConfig.exposeSchemas',
      declaration: ['override readonly exposeSchemas = routerConfig.exposeSchemas;'],
    },
  ],
  binding: 'routerConfig',
  from: './config.js',
  banner: { previous: PREVIOUS, replacement: '// new banner' },
});

const REPOSITORY = `// \`core generate\` only keeps \`relationKeys\` and the \`reader\` limits in step with the manifest.
import { BaseRepository } from '@core/runtime';
import { Task } from './models.js';

export class TaskRepository extends BaseRepository<Task, C, U> {
  constructor() {
    super({ model: Task });
  }
}
`;

const repositoryRequest = (relationKeys: Record<string, string>, reader: Record<string, number>): UpgradeRequest => ({
  className: 'TaskRepository',
  properties: [
    {
      name: 'relationKeys',
      value: relationKeys,
      reference: 'repositoryConfig.relationKeys',
      declaration: ['/** keys */', 'protected override readonly relationKeys = repositoryConfig.relationKeys;'],
      previousDoc: '/** old keys */',
      doc: '/** keys */',
    },
  ],
  superArgument: [{ name: 'reader', value: reader, reference: 'repositoryConfig.reader' }],
  binding: 'repositoryConfig',
  from: './config.js',
  banner: { previous: PREVIOUS, replacement: '// new banner' },
});

describe('upgradeMembers: a router', () => {
  it('switches the values still equal to the manifest (however written), adds the import, replaces the banner', () => {
    expect(upgradeMembers(ROUTER, routerRequest('/tasks', ['tasks'], true))).toEqual({
      content: UPGRADED,
      kept: [],
      problems: [],
    });
  });

  it('keeps and reports a value set by hand: another literal, an expression, a getter', () => {
    const edited = ROUTER.replace("'/tasks'; // keep", "'/api/tasks'; // keep")
      .replace('boolean = true', "boolean = process.env.SCHEMAS === '1'")
      .replace(
        '  override readonly tags = ["tasks"];\n',
        '  override get tags(): string[] {\n    return ["x"];\n  }\n',
      );
    const { content, kept } = upgradeMembers(edited, routerRequest('/tasks', ['tasks'], true));
    expect(kept).toEqual([
      "prefix = '/api/tasks' (the manifest says '/tasks')",
      'tags (computed in the class)',
      "exposeSchemas = process.env.SCHEMAS === '1' (the manifest says true)",
    ]);
    // Only the banner changes; no import, since nothing reads config.ts.
    expect(content).toBe(edited.replace(/^\/\/ `core generate`.*$/m, '// new banner'));
  });

  it('adds a missing member after the last property, and the binding to an import of config.js there is', () => {
    const without = ROUTER.replace('  override readonly exposeSchemas: boolean = true;\n', '').replace(
      "import { Task } from './models.js';",
      "import { Task } from './models.js';\nimport { other } from './config.js';",
    );
    const { content } = upgradeMembers(without, routerRequest('/tasks', ['tasks'], true));
    expect(content).toBe(
      UPGRADED.replace("import { routerConfig } from './config.js';\n", '').replace(
        "import { Task } from './models.js';",
        "import { Task } from './models.js';\nimport { other, routerConfig } from './config.js';",
      ),
    );
  });

  it('keeps CRLF line ends', () => {
    const crlf = ROUTER.replace(/\n/g, '\r\n');
    expect(upgradeMembers(crlf, routerRequest('/tasks', ['tasks'], true)).content).toBe(
      UPGRADED.replace(/\n/g, '\r\n'),
    );
  });
});

describe('upgradeMembers: a repository', () => {
  it('adds relationKeys before the constructor and reader to the super options', () => {
    expect(upgradeMembers(REPOSITORY, repositoryRequest({}, {})).content).toBe(`// new banner
import { BaseRepository } from '@core/runtime';
import { repositoryConfig } from './config.js';
import { Task } from './models.js';

export class TaskRepository extends BaseRepository<Task, C, U> {
  /** keys */
  protected override readonly relationKeys = repositoryConfig.relationKeys;

  constructor() {
    super({ model: Task, reader: repositoryConfig.reader });
  }
}
`);
  });

  it('switches existing literals equal to the manifest, with the JSDoc the previous generator wrote, in a multi-line call', () => {
    const source = REPOSITORY.replace(
      '  constructor() {\n    super({ model: Task });',
      "  /** old keys */\n  protected override readonly relationKeys = { labels: 'tag_ids' };\n\n  constructor() {\n    super({\n      model: Task,\n      reader: { maxLimit: 90, defaultLimit: 30 },\n    });",
    );
    const { content, kept } = upgradeMembers(
      source,
      repositoryRequest({ labels: 'tag_ids' }, { defaultLimit: 30, maxLimit: 90 }),
    );
    expect(kept).toEqual([]);
    expect(content).toContain(
      '  /** keys */\n  protected override readonly relationKeys = repositoryConfig.relationKeys;\n',
    );
    expect(content).toContain('    super({\n      model: Task,\n      reader: repositoryConfig.reader,\n    });');
  });

  it('keeps page sizes set by hand', () => {
    const source = REPOSITORY.replace('{ model: Task }', '{ model: Task, reader: { maxLimit: 10 } }');
    const { content, kept } = upgradeMembers(source, repositoryRequest({}, { maxLimit: 100 }));
    expect(kept).toEqual(['reader = { maxLimit: 10 } (the manifest says { maxLimit: 100 })']);
    expect(content).toContain('super({ model: Task, reader: { maxLimit: 10 } });');
    expect(content).toContain('protected override readonly relationKeys = repositoryConfig.relationKeys;');
  });

  it.each([
    ['the class was renamed', REPOSITORY.replace('TaskRepository', 'Tasks'), 'no class TaskRepository'],
    [
      'the constructor calls super without options',
      REPOSITORY.replace('super({ model: Task })', 'super(Task)'),
      'no `super({ ... })` call in the constructor of TaskRepository',
    ],
  ])('reports what it cannot do when %s, changing nothing', (_case, source, problem) => {
    expect(upgradeMembers(source, repositoryRequest({}, {}))).toEqual({
      content: source,
      kept: [],
      problems: [problem],
    });
  });
});

describe('core generate over an app of the previous generator (generateApp, as the CLI runs it)', () => {
  it('reports a file it cannot upgrade as SKIP, saying what to write by hand, and leaves it as it is', async () => {
    const root = mkdtempSync(join(tmpdir(), 'core-upgrade-skip-'));
    try {
      cpSync(join(GOLDEN_DIR, 'upgrade-tasks-template/input'), root, { recursive: true });
      const file = join(root, 'src/apps/tasks/repositories.ts');
      const renamed = readFileSync(file, 'utf8').replace('super({ model: Task })', 'super(Task)');
      writeFileSync(file, renamed);

      const changes = await runGoldenCase(root, readCase('upgrade-tasks-template'));

      expect(changes.find((c) => c.path === 'src/apps/tasks/repositories.ts')).toEqual({
        path: 'src/apps/tasks/repositories.ts',
        kind: 'SKIP',
        reason:
          'no `super({ ... })` call in the constructor of TaskRepository: core cannot move relationKeys and reader to config.ts; ' +
          "set relationKeys = repositoryConfig.relationKeys, reader = repositoryConfig.reader by hand (import { repositoryConfig } from './config.js') " +
          'and drop the header line saying `core generate` keeps them in step',
      });
      expect(readFileSync(file, 'utf8')).toBe(renamed);
      expect(changes.find((c) => c.path === 'src/apps/tasks/routers.ts')?.kind).toBe('UPDATE');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
