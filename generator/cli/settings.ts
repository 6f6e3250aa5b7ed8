/**
 * The project's settings as the app will see them (environment first, `.env` as fallback), read with
 * the runtime's own loader so the CLI and the app never disagree. Imported from the runtime's source
 * file directly: it needs nothing but Node, unlike the runtime's full entry point.
 */
import { loadSettings, SettingsError, type Settings } from '@core/runtime/cli';
import { CliError } from './errors.js';

export function projectSettings(root: string): { settings: Settings; warnings: string[] } {
  const warnings: string[] = [];
  const collect = (_obj: unknown, message?: string) => {
    if (message) warnings.push(message);
  };
  try {
    return { settings: loadSettings({ cwd: root, logger: { warn: collect } }), warnings };
  } catch (error) {
    if (error instanceof SettingsError) throw new CliError(error.message);
    throw error;
  }
}
