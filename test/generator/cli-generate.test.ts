import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { core, lines, REPO_ROOT, snapshot, tempDir } from '../helpers/cli.js';

const SLOW = 180_000;
const dir = tempDir('core-generate-');
let project: string;
const TASKS_MANIFEST = 'src/apps/tasks/tasks.resource.json';

beforeAll(async () => {
  project = join(dir.path, 'shop');
  expect((await core(['init', 'shop', '--no-install'], { cwd: dir.path })).code).toBe(0);
  expect((await core(['startapp', 'tasks', '--template'], { cwd: project })).code).toBe(0);
  expect((await core(['startapp', 'projects'], { cwd: project })).code).toBe(0);
}, SLOW);
afterAll(() => dir.remove());

const path = (file: string) => join(project, file);
const read = (file: string) => readFileSync(path(file), 'utf8');

/** Runs `fn` with a manifest temporarily changed by `edit`. */
async function withManifest(
  edit: (manifest: Record<string, unknown>) => void,
  fn: () => Promise<void>,
  file = TASKS_MANIFEST,
): Promise<void> {
  const original = read(file);
  const manifest = JSON.parse(original) as Record<string, unknown>;
  edit(manifest);
  writeFileSync(path(file), JSON.stringify(manifest, null, 2));
  try {
    await fn();
  } finally {
    writeFileSync(path(file), original);
  }
}

const APP_FILES = ['config.ts', 'models.ts', 'plugin.ts', 'repositories.ts', 'routers.ts', 'schemas.ts', 'services.ts'];
const USER_FILES = ['plugin.ts', 'repositories.ts', 'routers.ts', 'services.ts'];
/**
 * Every file `core generate` writes for the two apps, in the order it prints them. Not their tests: the
 * project is not installed, so the typed client they call the apps through cannot be written.
 */
const ALL_FILES = [
  ...APP_FILES.map((f) => `src/apps/projects/${f}`),
  'src/apps/resource.schema.json',
  ...APP_FILES.map((f) => `src/apps/tasks/${f}`),
];
/** What `core generate` says about the tests it leaves out in this project. */
const TESTS_LEFT_OUT = new RegExp(
  '^warning: test/apps/projects\\.test\\.ts and test/apps/tasks\\.test\\.ts left out: they call the apps through ' +
    "the typed client \\(src/client/\\), which cannot be written yet: the project's dependencies are not installed " +
    '\\(no node_modules\\); run `npm install` in .*, then `core generate`$',
);
/** Adds a nullable `notes` field to the tasks manifest. */
const addNotes = (m: Record<string, unknown>) =>
  ((m.fields as Record<string, unknown>).notes = { type: 'text', nullable: true });

describe('core generate', () => {
  it('rerun without a manifest change: every file UNCHANGED, no file written', async () => {
    const before = snapshot(project);
    const result = await core(['generate'], { cwd: project });
    expect(result.code).toBe(0);
    expect(lines(result.stdout)).toEqual([...ALL_FILES.map((f) => `UNCHANGED ${f}`), `${ALL_FILES.length} unchanged`]);
    // Nothing changed: no migration step either; only the tests left out, with what to run.
    expect(lines(result.stderr)).toEqual([expect.stringMatching(TESTS_LEFT_OUT)]);
    expect(snapshot(project)).toEqual(before);
  });

  it('leaves the tests out while the project is not installed, so that none imports a missing client', () => {
    expect(existsSync(path('test/apps'))).toBe(false);
    expect(existsSync(path('src/client'))).toBe(false);
  });

  it('one app only', async () => {
    const result = await core(['generate', 'projects'], { cwd: project });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('UNCHANGED src/apps/projects/models.ts');
    expect(result.stdout).not.toContain('src/apps/tasks/');
  });

  it('--dry-run reports what would change and writes nothing', async () => {
    rmSync(path('src/apps/projects/models.ts'));
    await withManifest(addNotes, async () => {
      const before = snapshot(project);
      const result = await core(['generate', '--dry-run'], { cwd: project });
      expect(result.code).toBe(0);
      const out = lines(result.stdout);
      expect(out).toContain('CREATE    src/apps/projects/models.ts');
      expect(out).toContain('UPDATE    src/apps/tasks/models.ts');
      expect(out).toContain('UPDATE    src/apps/tasks/schemas.ts');
      expect(out).toContain('UNCHANGED src/apps/tasks/services.ts');
      expect(out.at(-1)).toMatch(/^Dry run: 1 created, \d+ updated, \d+ unchanged; nothing was written\.$/);
      expect(snapshot(project)).toEqual(before);
    });
    expect((await core(['generate'], { cwd: project })).code).toBe(0); // restores projects/models.ts
  });

  it('a manifest change rewrites the generated files and notes that no migration could be written', async () => {
    await withManifest(addNotes, async () => {
      const result = await core(['generate'], { cwd: project });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('UPDATE    src/apps/tasks/models.ts');
      expect(read('src/apps/tasks/models.ts')).toContain('declare notes: string | null;');
      expect(result.stderr).toMatch(/warning: no migration written/);
    });
    expect((await core(['generate'], { cwd: project })).stdout).toContain('UPDATE    src/apps/tasks/models.ts');
  });

  it('a change of prefix, tags and pagination reaches config.ts; the user-owned files stay byte for byte', async () => {
    const before = USER_FILES.map((f) => read(`src/apps/tasks/${f}`));
    await withManifest(
      (m) => {
        m.prefix = '/todo';
        m.tags = ['planning'];
        m.pagination = { default_limit: 5, max_limit: 50 };
      },
      async () => {
        const result = await core(['generate', 'tasks'], { cwd: project });
        expect(result.code, result.stderr).toBe(0);
        const out = lines(result.stdout);
        expect(out).toContain('UPDATE    src/apps/tasks/config.ts');
        for (const f of USER_FILES) expect(out).toContain(`UNCHANGED src/apps/tasks/${f}`);
        expect(USER_FILES.map((f) => read(`src/apps/tasks/${f}`))).toEqual(before);
        expect(read('src/apps/tasks/config.ts')).toContain(
          "export const routerConfig = { prefix: '/todo', tags: ['planning'], exposeSchemas: true };",
        );
        expect(read('src/apps/tasks/config.ts')).toContain('reader: { defaultLimit: 5, maxLimit: 50 }');
      },
    );
    expect((await core(['generate', 'tasks'], { cwd: project })).stdout).toContain(
      'UPDATE    src/apps/tasks/config.ts',
    );
  });

  it('upgrades an app of the previous generator once: values to config.ts, a prefix set by hand kept and reported', async () => {
    // The starter app as the previous generator wrote it, its prefix changed by hand (a golden case's input).
    const previous = join(REPO_ROOT, 'fixtures/golden/upgrade-tasks-template/input/src/apps/tasks');
    const upgraded = join(REPO_ROOT, 'fixtures/golden/upgrade-tasks-template/expected/src/apps/tasks');
    const fresh = ['routers.ts', 'repositories.ts'].map((f) => [f, read(`src/apps/tasks/${f}`)] as const);
    for (const [f] of fresh) writeFileSync(path(`src/apps/tasks/${f}`), readFileSync(join(previous, f), 'utf8'));
    rmSync(path('src/apps/tasks/config.ts'));
    try {
      const result = await core(['generate', 'tasks', '--no-migration'], { cwd: project });
      expect(result.code, result.stderr).toBe(0);
      const out = lines(result.stdout);
      expect(out).toContain('CREATE    src/apps/tasks/config.ts');
      expect(out).toContain(
        'UPDATE    src/apps/tasks/repositories.ts: relationKeys and reader now come from config.ts (a one-time change: `core generate` no longer edits this file)',
      );
      expect(out).toContain(
        "UPDATE    src/apps/tasks/routers.ts: prefix, tags and exposeSchemas now come from config.ts (a one-time change: `core generate` no longer edits this file); kept as set here: prefix = '/api/tasks' (the manifest says '/tasks') — read it from routerConfig to follow the manifest",
      );
      for (const f of ['config.ts', 'routers.ts', 'repositories.ts'])
        expect(read(`src/apps/tasks/${f}`), f).toBe(readFileSync(join(upgraded, f), 'utf8'));
      expect(read('src/apps/tasks/routers.ts')).toContain("readonly prefix: string = '/api/tasks';");

      const again = await core(['generate', 'tasks', '--no-migration'], { cwd: project });
      expect(lines(again.stdout).filter((line) => !line.startsWith('UNCHANGED'))).toEqual([
        `${APP_FILES.length + 1} unchanged`,
      ]);
    } finally {
      for (const [f, content] of fresh) writeFileSync(path(`src/apps/tasks/${f}`), content);
    }
  });

  it('leaves a hand-edited generated file untouched and says CONFLICT (exit 2)', async () => {
    const edited = `${read('src/apps/tasks/models.ts')}// my edit\n`;
    writeFileSync(path('src/apps/tasks/models.ts'), edited);
    try {
      await withManifest(addNotes, async () => {
        const result = await core(['generate'], { cwd: project });
        expect(result.code).toBe(2);
        expect(result.stdout).toMatch(
          /^CONFLICT {2}src\/apps\/tasks\/models\.ts: edited by hand since it was generated/m,
        );
        expect(lines(result.stderr).at(-1)).toBe('core: 1 file in conflict left untouched: src/apps/tasks/models.ts');
        expect(read('src/apps/tasks/models.ts')).toBe(edited);
      });
    } finally {
      rmSync(path('src/apps/tasks/models.ts'));
      expect((await core(['generate'], { cwd: project })).code).toBe(0);
    }
  });
});

describe('core generate with invalid manifests: every problem with its JSON path, nothing written', () => {
  it.each([
    {
      name: 'a wrong type',
      edit: (m: Record<string, unknown>) =>
        ((m.fields as Record<string, Record<string, unknown>>).title!.max_length = 'long'),
      expected: ['core: src/apps/tasks/tasks.resource.json $.fields.title.max_length: expected integer, got "long"'],
    },
    {
      name: 'an unknown field type and a bad entity name',
      edit: (m: Record<string, unknown>) => {
        (m.fields as Record<string, Record<string, unknown>>).priority!.type = 'varchar';
        m.entity = 'task';
      },
      expected: [
        expect.stringMatching(/^core: src\/apps\/tasks\/tasks\.resource\.json \$\.entity: "task" does not match/),
        expect.stringMatching(
          /^core: src\/apps\/tasks\/tasks\.resource\.json \$\.fields\.priority\.type: expected one of "uuid", .*got "varchar"/,
        ),
      ],
    },
    {
      name: 'a relation to a resource that does not exist',
      edit: (m: Record<string, unknown>) => (m.relations = { owner: { kind: 'many-to-one', target: 'users' } }),
      expected: [
        'core: src/apps/tasks/tasks.resource.json $.relations.owner.target: no resource named "users" (known: projects, tasks); create it with `core startapp users`',
      ],
    },
    {
      name: 'a missing key',
      edit: (m: Record<string, unknown>) => (m.fields = undefined),
      expected: ['core: src/apps/tasks/tasks.resource.json $: missing required key "fields"'],
    },
  ])('$name', async ({ edit, expected }) => {
    // The other app's generated file is gone: a run that wrote anything would bring it back.
    rmSync(path('src/apps/projects/models.ts'));
    try {
      await withManifest(edit, async () => {
        const before = snapshot(project);
        const result = await core(['generate'], { cwd: project });
        expect(result.code).toBe(1);
        expect(lines(result.stderr)).toEqual([...expected, 'core: the manifest is invalid: nothing was written']);
        expect(result.stdout).toBe('');
        expect(snapshot(project)).toEqual(before);
      });
    } finally {
      expect((await core(['generate'], { cwd: project })).code).toBe(0);
    }
  });

  it('reports the problems of several manifests at once', async () => {
    await withManifest(
      (m) => (m.name = 'Projects'),
      () =>
        withManifest(
          (m) => (m.prefix = 'tasks'),
          async () => {
            const result = await core(['generate', '--dry-run'], { cwd: project });
            expect(result.code).toBe(1);
            expect(lines(result.stderr)).toEqual([
              expect.stringMatching(
                /^core: src\/apps\/projects\/projects\.resource\.json \$\.name: "Projects" does not match/,
              ),
              expect.stringMatching(
                /^core: src\/apps\/tasks\/tasks\.resource\.json \$\.prefix: "tasks" does not match/,
              ),
              'core: 2 manifests are invalid: nothing was written',
            ]);
          },
        ),
      'src/apps/projects/projects.resource.json',
    );
  });
});

describe('core generate refuses', () => {
  it.each([
    [
      'an unknown app',
      ['generate', 'users'],
      'core: no app named users: src/apps/users/users.resource.json not found (apps: projects, tasks)',
    ],
    ['an invalid module name', ['generate', 'Users'], expect.stringMatching(/^core: invalid module name "Users"/)],
  ])('%s', async (_case, args, message) => {
    const result = await core(args, { cwd: project });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([message]);
  });
});
