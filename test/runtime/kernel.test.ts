import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import {
  DependencyCycleError,
  Dispatcher,
  DuplicatePluginError,
  InvalidPluginError,
  Kernel,
  KernelError,
  MissingDependencyError,
  Plugin,
  PluginSetupError,
  PluginStartupError,
  domainEvent,
  type Logger,
} from '@core/runtime';

interface Behaviour {
  failSetup?: boolean;
  failStartup?: boolean;
  failShutdown?: boolean;
}

/** A plugin that writes every lifecycle call into a shared journal. */
class Recorder extends Plugin {
  readonly version = '1.0.0';

  constructor(
    readonly name: string,
    override readonly dependencies: readonly string[],
    private readonly journal: string[],
    private readonly behaviour: Behaviour = {},
  ) {
    super();
  }

  override async setup(_app: FastifyInstance): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 1)); // awaited before the next plugin's setup
    if (this.behaviour.failSetup) throw new Error('routes clash');
    this.journal.push(`setup:${this.name}`);
  }

  override async onStartup(): Promise<void> {
    if (this.behaviour.failStartup) throw new Error('database unreachable');
    this.journal.push(`start:${this.name}`);
  }

  override async onShutdown(): Promise<void> {
    this.journal.push(`stop:${this.name}`);
    if (this.behaviour.failShutdown) throw new Error('flush failed');
  }
}

type Spec = readonly [name: string, dependencies: readonly string[], behaviour?: Behaviour];

function kernelOf(
  specs: readonly Spec[],
  journal: string[] = [],
  options: ConstructorParameters<typeof Kernel>[0] = {},
) {
  const kernel = new Kernel(options);
  for (const [name, dependencies, behaviour] of specs)
    kernel.addPlugin(new Recorder(name, dependencies, journal, behaviour));
  return { kernel, journal };
}

const names = (kernel: Kernel) => kernel.plugins.map((plugin) => plugin.name);

function recordingLogger(): Logger & { lines: Array<{ level: string; obj: unknown; msg?: string }> } {
  const lines: Array<{ level: string; obj: unknown; msg?: string }> = [];
  const at = (level: string) => (obj: unknown, msg?: string) => void lines.push({ level, obj, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('plugin order', () => {
  // Diamond: auth ← (users, audit) ← api.
  const diamond: Spec[] = [
    ['api', ['users', 'audit']],
    ['audit', ['auth']],
    ['users', ['auth']],
    ['auth', []],
  ];
  const cases: Array<[string, Spec[], string[]]> = [
    ['diamond added dependents first', diamond, ['auth', 'audit', 'users', 'api']],
    ['diamond added dependencies first', [...diamond].reverse(), ['auth', 'users', 'audit', 'api']],
    [
      'independent plugins keep insertion order',
      [
        ['c', []],
        ['a', []],
        ['b', []],
      ],
      ['c', 'a', 'b'],
    ],
    [
      'a later-added ready plugin does not jump ahead of an earlier one',
      [
        ['late', ['base']],
        ['solo', []],
        ['base', []],
      ],
      ['solo', 'base', 'late'],
    ],
    [
      'duplicate dependency entries count once',
      [
        ['b', ['a', 'a']],
        ['a', []],
      ],
      ['a', 'b'],
    ],
  ];
  it.each(cases)('%s', (_, specs, expected) => {
    expect(names(kernelOf(specs).kernel)).toEqual(expected);
  });

  it('is deterministic: the same additions always give the same order', () => {
    const orders = new Set(Array.from({ length: 20 }, () => names(kernelOf(diamond).kernel).join(',')));
    expect([...orders]).toEqual(['auth,audit,users,api']);
  });

  it('setup(app) calls every setup in that order, each awaited before the next', async () => {
    const { kernel, journal } = kernelOf(diamond);
    await kernel.setup(Fastify());
    expect(journal).toEqual(['setup:auth', 'setup:audit', 'setup:users', 'setup:api']);
  });
});

describe('broken graphs fail before any plugin is set up', () => {
  it('a missing dependency names both plugins', async () => {
    const { kernel, journal } = kernelOf([
      ['auth', []],
      ['tasks', ['auth', 'projects']],
    ]);
    const error = await kernel.setup(Fastify()).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(MissingDependencyError);
    expect((error as Error).message).toMatch(
      /^Plugin "tasks" depends on "projects", which was not added\. Add the "projects" plugin/,
    );
    expect(journal).toEqual([]);
    expect(() => kernel.plugins).toThrow(MissingDependencyError);
  });

  const cycles: Array<[string, Spec[], string[]]> = [
    [
      'two plugins',
      [
        ['a', ['b']],
        ['b', ['a']],
      ],
      ['a', 'b', 'a'],
    ],
    [
      'a cycle behind a healthy plugin and a dependent',
      [
        ['root', []],
        ['entry', ['x']],
        ['x', ['y', 'root']],
        ['y', ['z']],
        ['z', ['x']],
      ],
      ['x', 'y', 'z', 'x'],
    ],
  ];
  it.each(cycles)('a cycle names its path: %s', async (_, specs, cycle) => {
    const { kernel, journal } = kernelOf(specs);
    const error = (await kernel.setup(Fastify()).catch((err: unknown) => err)) as DependencyCycleError;
    expect(error).toBeInstanceOf(DependencyCycleError);
    expect(error.cycle).toEqual(cycle);
    expect(error.message).toContain(`Plugin dependency cycle: ${cycle.join(' → ')} (each depends on the next)`);
    expect(journal).toEqual([]);
  });
});

describe('addPlugin checks metadata', () => {
  class Bare extends Plugin {
    readonly name = 'bare';
    readonly version = '0.1.0';
  }

  it('accepts a minimal plugin with default dependencies and no-op hooks, and chains', async () => {
    const kernel = new Kernel();
    expect(kernel.addPlugin(new Bare())).toBe(kernel);
    await kernel.setup(Fastify());
    await kernel.startup();
    await kernel.shutdown();
    expect(names(kernel)).toEqual(['bare']);
  });

  it('rejects a duplicate name, naming the plugin', () => {
    const kernel = new Kernel().addPlugin(new Recorder('tasks', [], []));
    const add = () => kernel.addPlugin(new Recorder('tasks', [], []));
    expect(add).toThrow(DuplicatePluginError);
    expect(add).toThrow(/^Plugin "tasks" was already added \(Recorder 1\.0\.0\); got another one/);
  });

  const plugin = (fields: Record<string, unknown>) =>
    Object.assign(new Recorder('ok', [], []), fields) as unknown as Plugin;
  const invalid: Array<[string, unknown, RegExp]> = [
    ['the class instead of an instance', Recorder, /received the class Recorder\. Did you forget `new`\?/],
    ['nothing', undefined, /expects a plugin instance \(new MyPlugin\(\)\); received undefined/],
    ['an empty name', plugin({ name: '  ' }), /^Recorder 1\.0\.0 needs a non-empty string `name`; received " {2}"/],
    [
      'a numeric version',
      plugin({ version: 1 }),
      /^Plugin "ok" needs a non-empty string `version` such as '1\.0\.0'; received number 1/,
    ],
    [
      'dependencies not an array',
      plugin({ dependencies: 'auth' }),
      /^Plugin "ok": `dependencies` must be an array of plugin names; received "auth"/,
    ],
    [
      'a non-string dependency',
      plugin({ dependencies: ['auth', 3] }),
      /received number 3 at index 1 of \["auth", number 3\]/,
    ],
    ['a self-dependency', plugin({ dependencies: ['ok'] }), /^Plugin "ok" lists itself in its dependencies/],
    ['a missing hook', plugin({ onStartup: null }), /^Plugin "ok": `onStartup` must be a method; received null/],
  ];
  it.each(invalid)('rejects %s', (_, candidate, message) => {
    const add = () => new Kernel().addPlugin(candidate as Plugin);
    expect(add).toThrow(InvalidPluginError);
    expect(add).toThrow(message);
  });

  it('refuses plugins added after setup', async () => {
    const { kernel } = kernelOf([['a', []]]);
    await kernel.setup(Fastify());
    expect(() => kernel.addPlugin(new Recorder('b', [], []))).toThrow(
      /Cannot add plugin "b" after kernel\.setup\(app\)/,
    );
    await expect(kernel.setup(Fastify())).rejects.toThrow(/already called/);
  });

  it('a failing setup names the plugin and keeps the cause', async () => {
    const { kernel, journal } = kernelOf([
      ['db', []],
      ['tasks', ['db'], { failSetup: true }],
      ['late', ['tasks']],
    ]);
    const error = (await kernel.setup(Fastify()).catch((err: unknown) => err)) as PluginSetupError;
    expect(error).toBeInstanceOf(PluginSetupError);
    expect(error.message).toBe('Plugin "tasks" failed in setup(app): routes clash');
    expect((error.cause as Error).message).toBe('routes clash');
    expect(journal).toEqual(['setup:db']);
  });
});

describe('startup and shutdown without Fastify', () => {
  const chain: Spec[] = [
    ['c', ['b']],
    ['b', ['a']],
    ['a', []],
  ];

  it('starts in dependency order and shuts down in reverse', async () => {
    const { kernel, journal } = kernelOf(chain);
    await kernel.startup();
    await kernel.shutdown();
    expect(journal).toEqual(['start:a', 'start:b', 'start:c', 'stop:c', 'stop:b', 'stop:a']);
    await kernel.shutdown();
    expect(journal).toHaveLength(6); // shutdown is idempotent
  });

  it('a failing startup shuts down the started ones in reverse and names the failing plugin', async () => {
    const specs: Spec[] = [...chain, ['d', ['c']]];
    const { kernel, journal } = kernelOf(specs.map(([n, d]): Spec => [n, d, { failStartup: n === 'c' }]));
    const error = (await kernel.startup().catch((err: unknown) => err)) as PluginStartupError;
    expect(error).toBeInstanceOf(PluginStartupError);
    expect(error.pluginName).toBe('c');
    expect(error.message).toBe(
      'Plugin "c" failed to start (already started and now shut down again: a, b): database unreachable',
    );
    expect(journal).toEqual(['start:a', 'start:b', 'stop:b', 'stop:a']);
    await kernel.shutdown();
    expect(journal).toHaveLength(4); // nothing is left to stop
  });

  it('shutdown errors are logged and the rest still shut down', async () => {
    const logger = recordingLogger();
    const { kernel, journal } = kernelOf(
      chain.map(([n, d]): Spec => [n, d, { failShutdown: n === 'b' }]),
      [],
      { logger },
    );
    await kernel.startup();
    await expect(kernel.shutdown()).resolves.toBeUndefined();
    expect(journal.filter((line) => line.startsWith('stop'))).toEqual(['stop:c', 'stop:b', 'stop:a']);
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors.map((line) => line.msg)).toEqual(['plugin b failed to shut down; the others still shut down']);
    expect(errors[0].obj).toMatchObject({ plugin: 'b', err: { message: 'flush failed' } });
  });

  it('starting twice is an error rather than a second onStartup', async () => {
    const { kernel } = kernelOf(chain);
    await kernel.startup();
    await expect(kernel.startup()).rejects.toThrow(KernelError);
  });
});

describe('lifespan in a real Fastify app', () => {
  it('runs onStartup on ready() and onShutdown in reverse on close()', async () => {
    const { kernel, journal } = kernelOf([
      ['tasks', ['db']],
      ['db', []],
    ]);
    const app = Fastify();
    await app.register(kernel.lifespan);
    await kernel.setup(app);
    expect(journal).toEqual(['setup:db', 'setup:tasks']);
    await app.ready();
    expect(journal.slice(2)).toEqual(['start:db', 'start:tasks']);
    await app.close();
    expect(journal.slice(4)).toEqual(['stop:tasks', 'stop:db']);
  });

  it('ready() rejects naming the failing plugin, after stopping the started ones; close() stops nothing twice', async () => {
    const { kernel, journal } = kernelOf([
      ['db', []],
      ['cache', ['db'], { failStartup: true }],
      ['tasks', ['cache']],
    ]);
    const app = Fastify();
    await app.register(kernel.lifespan);
    await kernel.setup(app);
    await expect(app.ready()).rejects.toThrow(
      /^Plugin "cache" failed to start \(already started and now shut down again: db\)/,
    );
    await app.close();
    expect(journal.filter((line) => !line.startsWith('setup'))).toEqual(['start:db', 'stop:db']);
  });

  it('adopts app.log for itself and the dispatcher unless a logger was set', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const { kernel } = kernelOf([['db', []]]);
    const app = Fastify({ logger: { level: 'info', stream } });
    await app.register(kernel.lifespan);
    await kernel.setup(app);
    await app.ready();
    kernel.dispatcher.subscribe('tasks.created', () => {
      throw new Error('subscriber broke');
    });
    await kernel.dispatcher.dispatch(domainEvent('tasks.created', {}));
    await app.close();
    const logged = lines.map((line) => JSON.parse(line) as { msg: string; plugin?: string });
    expect(logged.filter((line) => line.plugin === 'db').map((line) => line.msg)).toEqual([
      'plugin db started',
      'plugin db shut down',
    ]);
    expect(logged.map((line) => line.msg)).toContain('event handler failed; the committed data stays');

    const own = recordingLogger();
    const explicit = kernelOf([['db', []]], [], { dispatcher: new Dispatcher() }).kernel;
    explicit.setLogger(own);
    await explicit.setup(Fastify({ logger: { level: 'info', stream } }));
    explicit.dispatcher.subscribe('*', () => {
      throw new Error('again');
    });
    await explicit.dispatcher.dispatch(domainEvent('x', {}));
    expect(own.lines.map((line) => line.msg)).toEqual(['event handler failed; the committed data stays']);
  });
});
