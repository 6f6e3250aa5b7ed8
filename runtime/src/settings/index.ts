export { MIN_SECRET_KEY_LENGTH, SettingsError, loadSettings } from './settings.js';
export type { LoadSettingsOptions, Settings } from './settings.js';
