export { Plugin } from './plugin.js';
export { Kernel, type KernelOptions } from './kernel.js';
export {
  DependencyCycleError,
  DuplicatePluginError,
  InvalidPluginError,
  KernelError,
  MissingDependencyError,
  PluginSetupError,
  PluginStartupError,
} from './kernel-errors.js';
