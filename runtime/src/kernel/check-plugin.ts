import { DuplicatePluginError, InvalidPluginError } from './kernel-errors.js';
import type { Plugin } from './plugin.js';

/**
 * Checks a plugin's metadata when it is added, so a typo fails at `addPlugin` with the plugin's name
 * rather than later inside Fastify. Shape checks rather than `instanceof Plugin`: two copies of the
 * runtime in one app would make `instanceof` fail for a perfectly good plugin.
 */
export function checkPlugin(plugin: unknown, existing: ReadonlyMap<string, Plugin>): asserts plugin is Plugin {
  if (typeof plugin === 'function') {
    throw new InvalidPluginError(
      `addPlugin expects a plugin instance; received the class ${plugin.name || '<anonymous>'}. Did you forget \`new\`?`,
    );
  }
  if (typeof plugin !== 'object' || plugin === null) {
    throw new InvalidPluginError(`addPlugin expects a plugin instance (new MyPlugin()); received ${String(plugin)}.`);
  }
  const candidate = plugin as Record<string, unknown>;
  const label = describe(candidate);
  const { name, version, dependencies } = candidate;

  if (typeof name !== 'string' || name.trim() === '') {
    throw new InvalidPluginError(`${label} needs a non-empty string \`name\`; received ${render(name)}.`);
  }
  if (typeof version !== 'string' || version.trim() === '') {
    throw new InvalidPluginError(
      `Plugin "${name}" needs a non-empty string \`version\` such as '1.0.0'; received ${render(version)}.`,
    );
  }
  if (!Array.isArray(dependencies)) {
    throw new InvalidPluginError(
      `Plugin "${name}": \`dependencies\` must be an array of plugin names; received ${render(dependencies)}.`,
    );
  }
  const wrong = dependencies.findIndex((entry) => typeof entry !== 'string' || entry.trim() === '');
  if (wrong >= 0) {
    throw new InvalidPluginError(
      `Plugin "${name}": every dependency must be a non-empty plugin name; received ${render(dependencies[wrong])} ` +
        `at index ${wrong} of [${dependencies.map(render).join(', ')}].`,
    );
  }
  if (dependencies.includes(name)) {
    throw new InvalidPluginError(`Plugin "${name}" lists itself in its dependencies; remove "${name}" from them.`);
  }
  for (const method of ['setup', 'onStartup', 'onShutdown'] as const) {
    if (typeof candidate[method] !== 'function') {
      throw new InvalidPluginError(
        `Plugin "${name}": \`${method}\` must be a method; received ${render(candidate[method])}. Extend Plugin to get the defaults.`,
      );
    }
  }
  const previous = existing.get(name);
  if (previous) throw new DuplicatePluginError(name, describe(previous), label);
}

function describe(plugin: object): string {
  const className = plugin.constructor?.name || 'an object';
  const version = (plugin as { version?: unknown }).version;
  return typeof version === 'string' ? `${className} ${version}` : className;
}

function render(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (value === null || value === undefined) return String(value);
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
