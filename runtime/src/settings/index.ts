export {
  MIN_SECRET_KEY_LENGTH,
  PROVIDER_ALGORITHMS,
  SettingsError,
  loadAuthSettings,
  loadDatabaseSettings,
  loadEventsSettings,
  loadSecretKey,
  loadSettings,
} from './settings.js';
export type { AuthSettings, LoadSettingsOptions, ProviderAlgorithm, Settings } from './settings.js';
export type { EventsSettings } from './events-settings.js';
export { DATABASE_DEFAULTS } from './lifecycle-settings.js';
export type { DatabaseSettings, ShutdownSettings } from './lifecycle-settings.js';
