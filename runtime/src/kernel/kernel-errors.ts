/**
 * Errors about plugins: wrong metadata, a broken dependency graph, or a plugin failing in
 * `setup` / `onStartup`. Each message names the plugin(s) involved and what to change.
 */
export class KernelError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** `addPlugin` got something that is not a well-formed plugin. */
export class InvalidPluginError extends KernelError {}

/** Two plugins share a name. */
export class DuplicatePluginError extends KernelError {
  constructor(
    readonly pluginName: string,
    existing: string,
    added: string,
  ) {
    super(
      `Plugin "${pluginName}" was already added (${existing}); got another one (${added}). ` +
        'Plugin names must be unique: rename one, or add the plugin only once.',
    );
  }
}

/** A plugin depends on a plugin that was never added. */
export class MissingDependencyError extends KernelError {
  constructor(
    readonly pluginName: string,
    readonly dependency: string,
  ) {
    super(
      `Plugin "${pluginName}" depends on "${dependency}", which was not added. ` +
        `Add the "${dependency}" plugin with kernel.addPlugin(…) before kernel.setup(app), ` +
        `or remove "${dependency}" from the dependencies of "${pluginName}".`,
    );
  }
}

/** The dependency graph has a cycle, so no plugin of it can start first. */
export class DependencyCycleError extends KernelError {
  /** Plugin names along the cycle; the first is repeated at the end. */
  readonly cycle: readonly string[];

  constructor(cycle: readonly string[]) {
    super(
      `Plugin dependency cycle: ${cycle.join(' → ')} (each depends on the next). ` +
        'Remove one of these dependencies, or move what they share into a plugin both depend on.',
    );
    this.cycle = cycle;
  }
}

/** A plugin's `setup(app)` threw. */
export class PluginSetupError extends KernelError {
  constructor(
    readonly pluginName: string,
    cause: unknown,
  ) {
    super(`Plugin "${pluginName}" failed in setup(app): ${messageOf(cause)}`, { cause });
  }
}

/** A plugin's `onStartup()` threw; the plugins started before it have been shut down again. */
export class PluginStartupError extends KernelError {
  constructor(
    readonly pluginName: string,
    readonly stopped: readonly string[],
    cause: unknown,
  ) {
    const undone = stopped.length > 0 ? ` (already started and now shut down again: ${stopped.join(', ')})` : '';
    super(`Plugin "${pluginName}" failed to start${undone}: ${messageOf(cause)}`, { cause });
  }
}

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
