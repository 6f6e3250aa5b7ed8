import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { inspect, parseEnv } from 'node:util';
import type { Logger } from '../logging/logger.js';
import type { LogLevel } from '../logging/setup.js';

/**
 * The app's settings (contract §5), read from the environment with `.env` in the project folder as
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

  let secretKey = read('SECRET_KEY');
  let secretKeyIsEphemeral = false;
  if (secretKey === undefined) {
    if (!isDevelopment) {
      throw new SettingsError(
        `SECRET_KEY is not set (ENVIRONMENT=${environment}); set it to at least ${MIN_SECRET_KEY_LENGTH} random characters, e.g. \`openssl rand -hex 32\`.`,
      );
    }
    ephemeralKey ??= randomBytes(32).toString('hex');
    secretKey = ephemeralKey;
    secretKeyIsEphemeral = true;
    warn(options.logger, 'SECRET_KEY is not set: using a random key for this process, so tokens stop working on restart. Set SECRET_KEY in .env.');
  } else if (secretKey.length < MIN_SECRET_KEY_LENGTH) {
    const problem = `SECRET_KEY is too short (${secretKey.length} characters, ENVIRONMENT=${environment})`;
    const fix = `use at least ${MIN_SECRET_KEY_LENGTH} random characters, e.g. \`openssl rand -hex 32\`.`;
    if (!isDevelopment) throw new SettingsError(`${problem}; ${fix}`);
    warn(options.logger, `${problem}: tolerated in development only; ${fix}`);
  }

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
  };
  return Object.freeze(hideSecret(settings));
}

function readDotEnv(cwd: string): Record<string, string | undefined> {
  const path = join(cwd, '.env');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new SettingsError(`Cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unknown error'}).`, { cause: error });
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
