import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { Dispatcher } from '../events/dispatcher.js';
import { silentLogger, type Logger } from '../logging/logger.js';
import { checkPlugin } from './check-plugin.js';
import { KernelError, PluginSetupError, PluginStartupError } from './kernel-errors.js';
import { orderPlugins } from './plugin-order.js';
import type { Plugin } from './plugin.js';

export interface KernelOptions {
  /** Logger for the kernel and its dispatcher. Without one, `app.log` is adopted at lifespan/setup. */
  logger?: Logger;
  /** The event dispatcher to expose; a new one by default. */
  dispatcher?: Dispatcher;
}

type Phase = 'stopped' | 'starting' | 'started' | 'stopping';

/**
 * Holds the app's plugins, sets them up in dependency order and runs their lifecycle:
 *
 * ```ts
 * const kernel = new Kernel().addPlugin(new ProjectsPlugin()).addPlugin(new TasksPlugin());
 * registerDbEventDispatcher(kernel.dispatcher);
 * const app = Fastify();
 * await app.register(kernel.lifespan);   // onStartup on ready, onShutdown on close
 * await kernel.setup(app);               // every plugin's setup(app), dependencies first
 * ```
 */
export class Kernel {
  readonly dispatcher: Dispatcher;
  /**
   * Fastify plugin (fastify-plugin wrapped, so its hooks are app-wide) that runs `startup()` when the
   * app becomes ready and `shutdown()` when it closes. Register it first.
   */
  readonly lifespan: FastifyPluginAsync;

  private readonly added = new Map<string, Plugin>();
  private ordered: readonly Plugin[] | undefined;
  private started: Plugin[] = [];
  private phase: Phase = 'stopped';
  private setUp = false;
  private logger: Logger;
  private loggerChosen: boolean;

  constructor(options: KernelOptions = {}) {
    this.logger = options.logger ?? silentLogger;
    this.loggerChosen = options.logger !== undefined;
    this.dispatcher = options.dispatcher ?? new Dispatcher(this.logger);
    if (options.logger) this.dispatcher.setLogger(options.logger);
    this.lifespan = fastifyPlugin(
      async (app: FastifyInstance) => {
        this.adoptLogger(app.log);
        app.addHook('onReady', async () => this.startup());
        app.addHook('onClose', async () => this.shutdown());
      },
      { name: '@core/kernel-lifespan', fastify: '5.x' },
    );
  }

  /** Adds a plugin after checking its metadata (name, version, dependencies, unique name). Chainable. */
  addPlugin(plugin: Plugin): this {
    if (this.setUp) {
      throw new KernelError(
        `Cannot add plugin "${String(plugin?.name)}" after kernel.setup(app); add every plugin before setup.`,
      );
    }
    checkPlugin(plugin, this.added);
    this.added.set(plugin.name, plugin);
    this.ordered = undefined;
    return this;
  }

  /** The plugins in the order they are set up and started. Throws if a dependency is missing or cyclic. */
  get plugins(): readonly Plugin[] {
    this.ordered ??= Object.freeze(orderPlugins([...this.added.values()]));
    return this.ordered;
  }

  /** Sets the logger of the kernel and its dispatcher; `app.log` is no longer adopted after this. */
  setLogger(logger: Logger): void {
    this.logger = logger;
    this.loggerChosen = true;
    this.dispatcher.setLogger(logger);
  }

  /**
   * Calls every plugin's `setup(app)` in dependency order, one after another. The whole graph is
   * checked first, so a missing dependency or a cycle fails before any plugin has touched the app.
   */
  async setup(app: FastifyInstance): Promise<void> {
    if (this.setUp) throw new KernelError('kernel.setup(app) was already called; call it once per kernel.');
    const order = this.plugins;
    this.adoptLogger(app.log);
    this.setUp = true;
    for (const plugin of order) {
      try {
        await plugin.setup(app);
      } catch (err) {
        throw new PluginSetupError(plugin.name, err);
      }
    }
  }

  /**
   * Runs every plugin's `onStartup()` in dependency order, then starts the dispatcher's event broker
   * (with `EVENTS_URL`). If a plugin throws, the plugins already started are shut down (reverse order)
   * and a `PluginStartupError` naming the failing plugin is thrown. Called by `lifespan` on ready; call
   * it yourself only without Fastify (scripts, tests).
   */
  async startup(): Promise<void> {
    if (this.phase !== 'stopped') {
      throw new KernelError(
        `kernel.startup() called while the kernel is ${this.phase}; start it once (lifespan already does on ready).`,
      );
    }
    const order = this.plugins;
    this.phase = 'starting';
    for (const plugin of order) {
      try {
        await plugin.onStartup();
      } catch (err) {
        const stopped = this.started.map((started) => started.name);
        this.logger.error(
          { err, plugin: plugin.name },
          `plugin ${plugin.name} failed to start; shutting down the ones already started`,
        );
        await this.stopStarted();
        this.phase = 'stopped';
        throw new PluginStartupError(plugin.name, stopped, err);
      }
      this.started.push(plugin);
      this.logger.info({ plugin: plugin.name, version: plugin.version }, `plugin ${plugin.name} started`);
    }
    // The event broker (`EVENTS_URL`) last: the plugins have subscribed their handlers by now.
    try {
      await this.dispatcher.start();
    } catch (err) {
      this.logger.error({ err }, 'the event broker failed to start; shutting down the plugins');
      await this.stopStarted();
      this.phase = 'stopped';
      throw new KernelError(`The event broker failed to start: ${(err as Error).message}`, { cause: err });
    }
    this.phase = 'started';
  }

  /**
   * Stops the event broker, then runs `onShutdown()` of every started plugin in reverse order. A
   * failure is logged and the others still shut down; this never throws. Does nothing when nothing is
   * started.
   */
  async shutdown(): Promise<void> {
    if (this.phase === 'stopped' || this.phase === 'stopping') return;
    this.phase = 'stopping';
    // First, so no handler runs on a plugin that has shut down.
    try {
      await this.dispatcher.stop();
    } catch (err) {
      this.logger.error({ err }, 'the event broker failed to stop; the plugins still shut down');
    }
    await this.stopStarted();
    this.phase = 'stopped';
  }

  private async stopStarted(): Promise<void> {
    const started = this.started;
    this.started = [];
    for (let i = started.length - 1; i >= 0; i--) {
      const plugin = started[i];
      try {
        await plugin.onShutdown();
        this.logger.info({ plugin: plugin.name }, `plugin ${plugin.name} shut down`);
      } catch (err) {
        this.logger.error(
          { err, plugin: plugin.name },
          `plugin ${plugin.name} failed to shut down; the others still shut down`,
        );
      }
    }
  }

  /** The app's logger becomes the default, unless one was chosen explicitly. */
  private adoptLogger(logger: Logger): void {
    if (this.loggerChosen) return;
    this.logger = logger;
    this.dispatcher.setLogger(logger);
  }
}
