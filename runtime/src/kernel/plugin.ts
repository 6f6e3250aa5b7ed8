import type { FastifyInstance } from 'fastify';

/**
 * A feature of the app (usually one resource: its routers, subscriptions and resources). Metadata is
 * plain instance fields, checked by `kernel.addPlugin`:
 *
 * ```ts
 * export class TasksPlugin extends Plugin {
 *   readonly name = 'tasks';
 *   readonly version = '1.0.0';
 *   override readonly dependencies = ['projects'];
 *   override async setup(app: FastifyInstance) { await app.register(new TaskRouter().router); }
 * }
 * ```
 */
export abstract class Plugin {
  /** Unique among the kernel's plugins; other plugins name it in their `dependencies`. */
  abstract readonly name: string;
  abstract readonly version: string;
  /** Names of the plugins that must be set up and started before this one. */
  readonly dependencies: readonly string[] = [];

  /** Registers routes, hooks and services. Called by `kernel.setup(app)` in dependency order. */
  setup(_app: FastifyInstance): void | Promise<void> {}

  /** Runs when the app becomes ready, after the dependencies' `onStartup`. */
  async onStartup(): Promise<void> {}

  /** Runs when the app closes, before the dependencies' `onShutdown`. */
  async onShutdown(): Promise<void> {}
}
