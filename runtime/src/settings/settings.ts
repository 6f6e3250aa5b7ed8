import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { inspect, parseEnv } from 'node:util';
import type { Logger } from '../logging/logger.js';
import type { LogLevel } from '../logging/setup.js';
import { readEventsSettings, type EventsSettings } from './events-settings.js';
import {
  readDatabaseSettings,
  readShutdownSettings,
  type DatabaseSettings,
  type ShutdownSettings,
} from './lifecycle-settings.js';

/**
 * The app's settings, read from the environment with `.env` in the project folder as
 * fallback: a variable set in the real environment always wins. An empty value counts as unset at
 * either level, so `PORT=` falls back to the default rather than failing.
 */
export interface Settings {
  /** `DATABASE_URL`; default `sqlite:./dev.db`. */
  readonly databaseUrl: string;
  /** `ENVIRONMENT`; default `development`. */
  readonly environment: string;
  /** `environment === 'development'` (SQL echo, pretty logs, tolerated missing secret). */
  readonly isDevelopment: boolean;
  /** `PROJECT_NAME`; default: the name of the project folder. */
  readonly projectName: string;
  /** `SECRET_KEY`: the HS256 key. Hidden from `JSON.stringify` and `console.log` of the settings. */
  readonly secretKey: string;
  /** True when `SECRET_KEY` was missing in development and a random per-process key is used instead. */
  readonly secretKeyIsEphemeral: boolean;
  /** `HOST`; default `127.0.0.1`. */
  readonly host: string;
  /** `PORT`; default 8000. */
  readonly port: number;
  /** `LOG_LEVEL`; undefined when not set (the logging setup picks its default). */
  readonly logLevel: LogLevel | undefined;
  /**
   * `DOCS_ENABLED`: serve the OpenAPI documents (`/docs/json`, `/docs/yaml`) and the `/docs` UI.
   * Default: on, except when `ENVIRONMENT=production`, where an API's full description is opt-in.
   */
  readonly docsEnabled: boolean;
  /** `AUTH_*`: tokens from an identity provider (see `AuthSettings`). */
  readonly auth: AuthSettings;
  /** `EVENTS_*`: events across instances through a broker (see `EventsSettings`). */
  readonly events: EventsSettings;
  /** `DATABASE_POOL_*`, `DATABASE_STATEMENT_TIMEOUT_MS`: when a request stops waiting for the database (see `DatabaseSettings`). */
  readonly database: DatabaseSettings;
  /** `SHUTDOWN_*`: how a stop signal drains the server (see `ShutdownSettings`). */
  readonly shutdown: ShutdownSettings;
}

export interface LoadSettingsOptions {
  /** Folder holding `.env`; default `process.cwd()`. */
  cwd?: string;
  /** The environment; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Receives the development warning about a missing `SECRET_KEY`; default `process.emitWarning`. */
  logger?: Pick<Logger, 'warn'>;
}

/** Thrown when a setting is missing or invalid; the message is one line and never contains the secret. */
export class SettingsError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SettingsError';
  }
}

export const MIN_SECRET_KEY_LENGTH = 32;
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

// One random key per process, so every `loadSettings()` in a development process agrees (tokens signed
// by one part of the app verify in another). Tokens die with the process — hence the warning.
let ephemeralKey: string | undefined;

export function loadSettings(options: LoadSettingsOptions = {}): Settings {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const file = readDotEnv(cwd);
  const read = (name: string): string | undefined => nonEmpty(env[name]) ?? nonEmpty(file[name]);

  const environment = read('ENVIRONMENT') ?? 'development';
  const isDevelopment = environment === 'development';

  const { secretKey, secretKeyIsEphemeral } = readSecretKey(read, environment, options.logger);

  const settings: Settings = {
    databaseUrl: read('DATABASE_URL') ?? 'sqlite:./dev.db',
    environment,
    isDevelopment,
    projectName: read('PROJECT_NAME') ?? basename(cwd),
    secretKey,
    secretKeyIsEphemeral,
    host: read('HOST') ?? '127.0.0.1',
    port: parsePort(read('PORT')),
    logLevel: parseLogLevel(read('LOG_LEVEL')),
    docsEnabled: parseBoolean('DOCS_ENABLED', read('DOCS_ENABLED'), environment !== 'production'),
    auth: readAuthSettings(read, environment),
    events: readEventsSettings(read),
    database: readDatabaseSettings(read),
    shutdown: readShutdownSettings(read, isDevelopment),
  };
  return Object.freeze(hideSecret(settings));
}

/**
 * Only `SECRET_KEY` (and `ENVIRONMENT`, which decides whether a missing or short one is tolerated),
 * checked as `loadSettings` checks it: for code that is given the other settings explicitly, such as
 * `dbManager.initApp`, which signs pagination cursors with it when no `cursorSecret` is passed.
 */
export function loadSecretKey(options: LoadSettingsOptions = {}): Pick<Settings, 'secretKey' | 'secretKeyIsEphemeral'> {
  const env = options.env ?? process.env;
  const file = readDotEnv(resolve(options.cwd ?? process.cwd()));
  const read = (name: string): string | undefined => nonEmpty(env[name]) ?? nonEmpty(file[name]);
  return readSecretKey(read, read('ENVIRONMENT') ?? 'development', options.logger);
}

function readSecretKey(
  read: (name: string) => string | undefined,
  environment: string,
  logger: Pick<Logger, 'warn'> | undefined,
): Pick<Settings, 'secretKey' | 'secretKeyIsEphemeral'> {
  const isDevelopment = environment === 'development';
  const secretKey = read('SECRET_KEY');
  if (secretKey === undefined) {
    if (!isDevelopment) {
      throw new SettingsError(
        `SECRET_KEY is not set (ENVIRONMENT=${environment}); set it to at least ${MIN_SECRET_KEY_LENGTH} random characters, e.g. \`openssl rand -hex 32\`.`,
      );
    }
    ephemeralKey ??= randomBytes(32).toString('hex');
    warn(
      logger,
      'SECRET_KEY is not set: using a random key for this process, so tokens stop working on restart. Set SECRET_KEY in .env.',
    );
    return { secretKey: ephemeralKey, secretKeyIsEphemeral: true };
  }
  if (secretKey.length < MIN_SECRET_KEY_LENGTH) {
    const problem = `SECRET_KEY is too short (${secretKey.length} characters, ENVIRONMENT=${environment})`;
    const fix = `use at least ${MIN_SECRET_KEY_LENGTH} random characters, e.g. \`openssl rand -hex 32\`.`;
    if (!isDevelopment) throw new SettingsError(`${problem}; ${fix}`);
    warn(logger, `${problem}: tolerated in development only; ${fix}`);
  }
  return { secretKey, secretKeyIsEphemeral: false };
}

function readDotEnv(cwd: string): Record<string, string | undefined> {
  const path = join(cwd, '.env');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new SettingsError(`Cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unknown error'}).`, {
      cause: error,
    });
  }
  return parseEnv(text);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined) return 8000;
  const port = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(port) || port > 65_535) {
    throw new SettingsError(`PORT must be an integer from 0 to 65535; received ${JSON.stringify(raw)}.`);
  }
  return port;
}

function parseLogLevel(raw: string | undefined): LogLevel | undefined {
  if (raw === undefined) return undefined;
  const level = raw.trim().toLowerCase();
  if ((LOG_LEVELS as readonly string[]).includes(level)) return level as LogLevel;
  throw new SettingsError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; received ${JSON.stringify(raw)}.`);
}

function warn(logger: Pick<Logger, 'warn'> | undefined, message: string): void {
  if (logger) logger.warn({ setting: 'SECRET_KEY' }, message);
  else process.emitWarning(message, { code: 'CORE_SECRET_KEY' });
}

/**
 * Settings objects end up in logs and error reports; keep the secret out of the two usual ways they
 * get printed (`JSON.stringify`, `console.log`/`util.inspect`) while `settings.secretKey` still works.
 */
function hideSecret(settings: Settings): Settings {
  const masked = (): Record<string, unknown> => ({ ...settings, secretKey: '[hidden]' });
  Object.defineProperty(settings, 'toJSON', { value: masked, enumerable: false });
  Object.defineProperty(settings, inspect.custom, {
    value: (_depth: number, opts: object) => `Settings ${inspect(masked(), opts)}`,
    enumerable: false,
  });
  return settings;
}

// Identity-provider tokens (`AUTH_*`) ---------------------------------------------------------------

/** Algorithms a provider's key set may sign with: asymmetric only, since its keys are published. */
export const PROVIDER_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
export type ProviderAlgorithm = (typeof PROVIDER_ALGORITHMS)[number];

/**
 * How tokens issued by an identity provider (Auth0, Keycloak, Entra ID, Cognito…) are verified. With
 * `jwksUrl` unset only HS256 tokens signed with `SECRET_KEY` are accepted and the rest is unused.
 */
export interface AuthSettings {
  /** `AUTH_JWKS_URL`: the provider's JSON Web Key Set; `https` outside development. */
  readonly jwksUrl: string | undefined;
  /** `AUTH_ALGORITHMS` (comma-separated); default `RS256,ES256`. */
  readonly algorithms: readonly ProviderAlgorithm[];
  /** `AUTH_ISSUER`: when set, a token's `iss` must equal it exactly. */
  readonly issuer: string | undefined;
  /** `AUTH_AUDIENCE` (comma-separated): when set, a token's `aud` must name at least one of them. */
  readonly audience: readonly string[] | undefined;
  /** `AUTH_ROLES_CLAIM` as path segments (`realm_access.roles` → `['realm_access', 'roles']`); default `['roles']`. */
  readonly rolesClaim: readonly string[];
  /** `AUTH_SUBJECT_CLAIM` as path segments; default `['sub']`. */
  readonly subjectClaim: readonly string[];
  /** `AUTH_CLOCK_SKEW_S`: leeway for `exp` and `nbf`, in seconds; default 30. */
  readonly clockSkewS: number;
  /** `AUTH_ALLOW_LOCAL_TOKENS`: with a key set, still accept HS256 tokens signed with `SECRET_KEY`; default false. */
  readonly allowLocalTokens: boolean;
  /** `AUTH_JWKS_COOLDOWN_S`: least time between two on-demand fetches of the key set; default 30. */
  readonly jwksCooldownS: number;
  /** `AUTH_JWKS_REFRESH_S`: period of the background refresh of the key set; default 600. */
  readonly jwksRefreshS: number;
  /** `AUTH_JWKS_TIMEOUT_S`: a fetch of the key set that takes longer fails; default 5. */
  readonly jwksTimeoutS: number;
}

/**
 * Only the `AUTH_*` settings (and `ENVIRONMENT`, which decides whether a plain-http key set is
 * tolerated), for code that is given the other settings explicitly: `coreContextPlugin` reads them
 * this way when its options carry none, so existing apps turn provider tokens on by settings alone.
 */
export function loadAuthSettings(options: Omit<LoadSettingsOptions, 'logger'> = {}): AuthSettings {
  const env = options.env ?? process.env;
  const file = readDotEnv(resolve(options.cwd ?? process.cwd()));
  const read = (name: string): string | undefined => nonEmpty(env[name]) ?? nonEmpty(file[name]);
  return readAuthSettings(read, read('ENVIRONMENT') ?? 'development');
}

// These change who gets in or with which roles; without a key set they would be silently ignored.
const PROVIDER_ONLY_SETTINGS = [
  'AUTH_ALGORITHMS',
  'AUTH_ISSUER',
  'AUTH_AUDIENCE',
  'AUTH_ROLES_CLAIM',
  'AUTH_SUBJECT_CLAIM',
];

function readAuthSettings(read: (name: string) => string | undefined, environment: string): AuthSettings {
  const jwksUrl = parseJwksUrl(read('AUTH_JWKS_URL'), environment);
  if (jwksUrl === undefined) {
    const orphans = PROVIDER_ONLY_SETTINGS.filter((name) => read(name) !== undefined);
    if (orphans.length > 0) {
      throw new SettingsError(
        `${orphans.join(', ')} ${orphans.length === 1 ? 'is' : 'are'} set but AUTH_JWKS_URL is not, so ${orphans.length === 1 ? 'it' : 'they'} would be ignored; ` +
          "set AUTH_JWKS_URL to the identity provider's key set (e.g. https://<tenant>/.well-known/jwks.json) or remove them.",
      );
    }
  }
  return Object.freeze({
    jwksUrl,
    algorithms: parseAlgorithms(read('AUTH_ALGORITHMS')),
    issuer: read('AUTH_ISSUER')?.trim() || undefined,
    audience: parseList(read('AUTH_AUDIENCE')),
    rolesClaim: parseClaimPath('AUTH_ROLES_CLAIM', read('AUTH_ROLES_CLAIM') ?? 'roles'),
    subjectClaim: parseClaimPath('AUTH_SUBJECT_CLAIM', read('AUTH_SUBJECT_CLAIM') ?? 'sub'),
    clockSkewS: parseSeconds('AUTH_CLOCK_SKEW_S', read('AUTH_CLOCK_SKEW_S'), 30, 0),
    allowLocalTokens: parseBoolean('AUTH_ALLOW_LOCAL_TOKENS', read('AUTH_ALLOW_LOCAL_TOKENS'), false),
    jwksCooldownS: parseSeconds('AUTH_JWKS_COOLDOWN_S', read('AUTH_JWKS_COOLDOWN_S'), 30, 0),
    jwksRefreshS: parseSeconds('AUTH_JWKS_REFRESH_S', read('AUTH_JWKS_REFRESH_S'), 600, 1),
    jwksTimeoutS: parseSeconds('AUTH_JWKS_TIMEOUT_S', read('AUTH_JWKS_TIMEOUT_S'), 5, 0.001),
  });
}

function parseJwksUrl(raw: string | undefined, environment: string): string | undefined {
  if (raw === undefined) return undefined;
  const example = 'e.g. https://login.example.com/.well-known/jwks.json';
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new SettingsError(`AUTH_JWKS_URL is not a URL (${example}); received ${JSON.stringify(raw)}.`);
  }
  // Not echoed: the value holds a password.
  if (url.username !== '' || url.password !== '')
    throw new SettingsError('AUTH_JWKS_URL must not contain a user name or password; key sets are public.');
  if (url.protocol === 'https:') return url.href;
  if (url.protocol === 'http:') {
    if (environment === 'development') return url.href;
    throw new SettingsError(
      `AUTH_JWKS_URL must use https outside development (ENVIRONMENT=${environment}): anyone on the network path of a plain-http fetch ` +
        `could substitute keys of their own and sign any token; received ${url.href}.`,
    );
  }
  throw new SettingsError(`AUTH_JWKS_URL must be an https URL (${example}); received ${url.href}.`);
}

function parseAlgorithms(raw: string | undefined): readonly ProviderAlgorithm[] {
  if (raw === undefined) return Object.freeze<ProviderAlgorithm[]>(['RS256', 'ES256']);
  const algorithms: ProviderAlgorithm[] = [];
  for (const name of raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')) {
    const known = PROVIDER_ALGORITHMS.find((alg) => alg.toLowerCase() === name.toLowerCase());
    if (known !== undefined) {
      if (!algorithms.includes(known)) algorithms.push(known);
    } else if (/^hs\d+$/i.test(name)) {
      throw new SettingsError(
        `AUTH_ALGORITHMS cannot list ${name}: a provider's keys are public, so an HMAC key made of one would let anyone sign tokens. ` +
          "To keep accepting HS256 tokens signed with SECRET_KEY beside the provider's, set AUTH_ALLOW_LOCAL_TOKENS=true.",
      );
    } else {
      throw new SettingsError(
        `AUTH_ALGORITHMS lists ${JSON.stringify(name)}, which is not one of ${PROVIDER_ALGORITHMS.join(', ')}.`,
      );
    }
  }
  if (algorithms.length === 0)
    throw new SettingsError(
      `AUTH_ALGORITHMS is empty; list some of ${PROVIDER_ALGORITHMS.join(', ')} (default RS256,ES256).`,
    );
  return Object.freeze(algorithms);
}

function parseList(raw: string | undefined): readonly string[] | undefined {
  if (raw === undefined) return undefined;
  const items = raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  return items.length === 0 ? undefined : Object.freeze(items);
}

/**
 * A claim's location: a dotted path (`realm_access.roles`), or a JSON array of segments for names
 * that contain dots themselves (`["https://example.com/roles"]`, how Auth0 namespaces custom claims).
 */
function parseClaimPath(name: string, raw: string): readonly string[] {
  const text = raw.trim();
  const forms = `a dotted path such as realm_access.roles, or a JSON array of names such as ["https://example.com/roles"]`;
  let segments: unknown;
  if (text.startsWith('[')) {
    try {
      segments = JSON.parse(text);
    } catch {
      segments = undefined;
    }
  } else {
    segments = text.split('.');
  }
  if (
    !Array.isArray(segments) ||
    segments.length === 0 ||
    !segments.every((segment) => typeof segment === 'string' && segment !== '')
  ) {
    throw new SettingsError(`${name} must be ${forms}; received ${JSON.stringify(raw)}.`);
  }
  return Object.freeze([...(segments as string[])]);
}

function parseSeconds(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const seconds = /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(seconds >= min)) {
    throw new SettingsError(
      `${name} must be a number of seconds of at least ${min} (default ${fallback}); received ${JSON.stringify(raw)}.`,
    );
  }
  return seconds;
}

function parseBoolean(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined) return fallback;
  const value = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new SettingsError(`${name} must be true or false; received ${JSON.stringify(raw)}.`);
}

// Events across instances (`EVENTS_*`) ----------------------------------------------------------------

/**
 * Only the `EVENTS_*` settings and `PROJECT_NAME` (which names the broker's streams and subjects), for
 * code that is given no settings: `registerDbEventDispatcher` reads them this way, so existing apps
 * turn the outbox on by settings alone.
 */
export function loadEventsSettings(
  options: Omit<LoadSettingsOptions, 'logger'> = {},
): Pick<Settings, 'events' | 'projectName'> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const file = readDotEnv(cwd);
  const read = (name: string): string | undefined => nonEmpty(env[name]) ?? nonEmpty(file[name]);
  return { events: readEventsSettings(read), projectName: read('PROJECT_NAME') ?? basename(cwd) };
}

// Database limits (`DATABASE_POOL_*`, `DATABASE_STATEMENT_TIMEOUT_MS`) ------------------------------

/**
 * Only the database limits, for code that is given no settings: `dbManager.initApp` reads them this
 * way when its options carry none, so existing apps get them by settings alone.
 */
export function loadDatabaseSettings(options: Omit<LoadSettingsOptions, 'logger'> = {}): DatabaseSettings {
  const env = options.env ?? process.env;
  const file = readDotEnv(resolve(options.cwd ?? process.cwd()));
  return readDatabaseSettings((name) => nonEmpty(env[name]) ?? nonEmpty(file[name]));
}
