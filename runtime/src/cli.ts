/**
 * `@core/runtime/cli`: what the `core` CLI uses of the runtime, so both read settings, sign tokens
 * and name relations the same way. Public like the root export (its list is in the API snapshot test),
 * but meant for tools, not for apps.
 */
export { parseDuration, signToken, type SignTokenOptions } from './auth/jwt.js';
export { loadSettings, SettingsError, type LoadSettingsOptions, type Settings } from './settings/settings.js';
export { singular } from './util/inflect.js';
