import type { Ordering } from '@ordinal/log';
import { parseTokens, type ApiToken } from '../auth/api-token.js';

/** The development token: accepted only when ORDINAL_ENV=development (the default). */
export const DEV_TOKEN = 'dev-ordinal-token';
export const DEV_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/ordinal';
export const DEV_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/** The server's whole configuration, read once from the environment (docs/configuration.md). */
export interface OrdinalConfig {
  env: 'development' | 'production';
  host: string;
  port: number;
  databaseUrl: string;
  /** Create the database when it does not exist (development only). */
  createDatabase: boolean;
  dbPoolSize: number;
  tokens: ApiToken[];
  ordering: Ordering;
  duplicateWindow: number;
  bodyLimitBytes: number;
  maxBatchMessages: number;
  logFormat: 'text' | 'json';
  amqpUrl: string | null;
}

/** A configuration the server refuses to start with. The message says what to change. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, got '${raw}'`);
  return n;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw as T)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
  return raw as T;
}

/**
 * Reads the configuration. Development (the default) fills in the local services and a
 * development token; production (`ORDINAL_ENV=production`) defaults nothing and refuses the
 * development token.
 */
export function loadConfig(env: Env = process.env): OrdinalConfig {
  const mode = oneOf(env, 'ORDINAL_ENV', ['development', 'production'] as const, 'development');
  const production = mode === 'production';
  let tokens: ApiToken[];
  try {
    tokens = parseTokens(env.ORDINAL_TOKENS ?? '');
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  if (production) {
    if (tokens.length === 0) throw new ConfigError('ORDINAL_ENV=production needs ORDINAL_TOKENS (name:secret:scope+scope;...)');
    if (tokens.some((t) => t.secret === DEV_TOKEN)) throw new ConfigError('ORDINAL_ENV=production refuses the development token; configure your own secrets in ORDINAL_TOKENS');
    if (!env.DATABASE_URL) throw new ConfigError('ORDINAL_ENV=production needs DATABASE_URL');
  } else if (!tokens.some((t) => t.secret === DEV_TOKEN)) {
    tokens.push({ name: 'development', secret: DEV_TOKEN, scopes: new Set(['read', 'write', 'admin']) });
  }
  return {
    env: mode,
    host: env.HOST || '0.0.0.0',
    port: int(env, 'PORT', 8083, 0),
    databaseUrl: env.DATABASE_URL || DEV_DATABASE_URL,
    createDatabase: !production,
    dbPoolSize: int(env, 'ORDINAL_DB_POOL_SIZE', 10, 2),
    tokens,
    ordering: oneOf(env, 'ORDINAL_ORDERING', ['gapless', 'concurrent'] as const, 'gapless'),
    duplicateWindow: int(env, 'ORDINAL_DUPLICATE_WINDOW', 2000),
    bodyLimitBytes: int(env, 'ORDINAL_BODY_LIMIT', 1024 * 1024, 1),
    maxBatchMessages: int(env, 'ORDINAL_MAX_BATCH', 1000, 1),
    logFormat: oneOf(env, 'ORDINAL_LOG_FORMAT', ['text', 'json'] as const, production ? 'json' : 'text'),
    amqpUrl: env.AMQP_URL || null,
  };
}
