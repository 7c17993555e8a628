import type { LogRole, Ordering } from '@ordinal/log';
import {
  InterfaceConfigError,
  loadInterfacesFile,
  type ResolvedInterfaceConfig,
} from '@ordinal/amqp';
import { parseTokens, type ApiToken } from '../auth/api-token.js';

/** The development token: accepted only when ORDINAL_ENV=development (the default). */
export const DEV_TOKEN = 'dev-ordinal-token';
export const DEV_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/ordinal';
export const DEV_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

/** The server's whole configuration, read once from the environment (docs/configuration.md). */
export interface OrdinalConfig {
  env: 'development' | 'production';
  host: string;
  /**
   * Put the host name and pid into the StartMarker (ORDINAL_START_MARKER_IDENTITY): every
   * token with the read scope can read them. @default false
   */
  startMarkerIdentity: boolean;
  port: number;
  databaseUrl: string;
  /** Create the database when it does not exist (development only). */
  createDatabase: boolean;
  dbPoolSize: number;
  tokens: ApiToken[];
  ordering: Ordering;
  /**
   * `primary` (reads and writes) or `replica-reader`: serves reads from a PostgreSQL streaming
   * replica named by DATABASE_URL; writes are refused with 421, no migrations, no AMQP, no
   * consumers (ORDINAL_ROLE; docs/scaling.md). @default 'primary'
   */
  role: LogRole;
  /** The duplicate window (ORDINAL_DUPLICATE_WINDOW); the log applies its default (2000) and bound. */
  duplicateWindow?: number;
  bodyLimitBytes: number;
  /** A request whose body has not fully arrived this long after it began gets 408 and is closed (ms, ORDINAL_BODY_TIMEOUT_MS). @default 10000 */
  bodyTimeoutMs: number;
  /** A bulk import whose body sends nothing this long is rolled back and answered 408 (ms, ORDINAL_IMPORT_IDLE_TIMEOUT_MS). @default 10000 */
  importIdleTimeoutMs: number;
  /** How long a stream ticket (`POST /api/events/stream-ticket`) stays valid (ms, ORDINAL_STREAM_TICKET_TTL_MS). @default 30000 */
  streamTicketTtlMs: number;
  maxBatchMessages: number;
  logFormat: 'text' | 'json';
  /** RabbitMQ; AMQP input and interfaces are on only when set (AMQP_URL; development defaults to the local broker, `''` turns it off). */
  amqpUrl: string | null;
  /** AMQP settings (ORDINAL_AMQP_*, ORDINAL_INTERFACES); see docs/amqp.md. */
  amqp: AmqpConfig;
  /** Interval of an SSE stream's `heartbeat` event (ms, ORDINAL_HEARTBEAT_MS). @default 5000 */
  heartbeatMs: number;
  /** Live messages buffered per stream before it falls back to database catch-up (ORDINAL_STREAM_MAILBOX; the log's `mailboxLimit`, default 10000). */
  streamMailbox?: number;
  /** Bytes one SSE stream may hold (ORDINAL_STREAM_BUFFER_BYTES; the log's `streamBufferBytes`, default 8 MiB). */
  streamBufferBytes?: number;
  /** Bytes of catch-up pages all SSE streams together may hold (ORDINAL_STREAMS_BUFFER_BYTES; the log's `streamsBufferBytes`, default 128 MiB). */
  streamsBufferBytes?: number;
  /**
   * The live router's safety-net poll (ms, ORDINAL_LIVE_POLL_MS). On a replica reader it is
   * the only way new messages are seen (a standby forwards no NOTIFY). The log's default: 1000, 200 for a replica reader.
   */
  livePollMs?: number;
  /** Concurrent mode: a hole in the log is abandoned after this long (ms, ORDINAL_GAP_TIMEOUT_MS; <= 0 abandons at once; the log's default 5000). */
  gapTimeoutMs?: number;
  /** Concurrent mode: release a hole as soon as every writer that could fill it has ended (ORDINAL_EXACT_RELEASE; the log's default true). */
  exactRelease?: boolean;
  /** Concurrent mode: how often readers' passed abandoned positions are looked up for late arrivals (ms, ORDINAL_LATE_RESCAN_MS; the log's default 2000). */
  lateRescanMs?: number;
  /** Concurrent mode: how long readers watch a passed position for a row written there later (ms, ORDINAL_LATE_WATCH_MS; the log's default 60000). */
  lateWatchMs?: number;
  /** Consumers (interfaces, projections, subscriptions) of a dead process run elsewhere within this bound (ms, ORDINAL_TAKEOVER_MS; the log's default 5000, at least 500). */
  takeoverMs?: number;
  /** A projection behind the head with no progress for this long shows as stuck in /health (ms, ORDINAL_STUCK_AFTER_MS; the subscriptions' default 60000). */
  stuckAfterMs?: number;
  /** How long the server waits for any one database answer (ms, ORDINAL_QUERY_TIMEOUT_MS); a write past it answers 503. @default 30000 */
  queryTimeoutMs: number;
}

/** The AMQP part of the configuration. */
export interface AmqpConfig {
  /** The input queue, `false` for none (ORDINAL_AMQP_INPUT_QUEUE, `off`). @default 'eventstore.input' */
  inputQueue: string | false;
  /** Input deliveries in flight (ORDINAL_AMQP_PREFETCH; the AMQP module's default 10000). */
  prefetch?: number;
  /** Declare quorum queues (ORDINAL_AMQP_QUORUM=true; the AMQP module's default false). */
  quorumQueues?: boolean;
  /** The connection name the broker shows (ORDINAL_AMQP_CONNECTION_NAME). @default ordinal-<host>-<pid> */
  connectionName: string | undefined;
  /** Push interfaces from the JSON or YAML file named by ORDINAL_INTERFACES. @default [] */
  interfaces: ResolvedInterfaceConfig[];
}

/** A configuration the server refuses to start with. The message says what to change. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new ConfigError(`${name} must be an integer >= ${min}, got '${raw}'`);
  return n;
}

/** An integer when set, else undefined: the library that owns the option applies its default and bound. */
function optionalInt(env: Env, name: string): number | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : int(env, name, 0, Number.MIN_SAFE_INTEGER);
}

/** `true` or `false` when set, else undefined (the owning library's default). */
function optionalBool(env: Env, name: string): boolean | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  return oneOf(env, name, ['true', 'false'] as const, 'false') === 'true';
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw as T))
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${raw}'`);
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
  const role = oneOf(env, 'ORDINAL_ROLE', ['primary', 'replica-reader'] as const, 'primary');
  if (production) {
    if (tokens.length === 0)
      throw new ConfigError(
        'ORDINAL_ENV=production needs ORDINAL_TOKENS (name:secret:scope+scope;...)',
      );
    if (tokens.some((t) => t.secret === DEV_TOKEN))
      throw new ConfigError(
        'ORDINAL_ENV=production refuses the development token; configure your own secrets in ORDINAL_TOKENS',
      );
    if (!env.DATABASE_URL) throw new ConfigError('ORDINAL_ENV=production needs DATABASE_URL');
  } else if (!tokens.some((t) => t.secret === DEV_TOKEN)) {
    tokens.push({
      name: 'development',
      secret: DEV_TOKEN,
      scopes: new Set(['read', 'write', 'admin']),
    });
  }
  if (role === 'replica-reader' && !env.DATABASE_URL) {
    throw new ConfigError(
      'ORDINAL_ROLE=replica-reader needs DATABASE_URL naming the streaming replica it reads (docs/scaling.md)',
    );
  }
  return {
    env: mode,
    // Development listens on the loopback interface only: it serves the development token.
    host: env.HOST || (production ? '0.0.0.0' : '127.0.0.1'),
    port: int(env, 'PORT', 8083, 0),
    databaseUrl: env.DATABASE_URL || DEV_DATABASE_URL,
    // A replica reader's database comes from the primary; it never creates one.
    createDatabase: !production && role === 'primary',
    dbPoolSize: int(env, 'ORDINAL_DB_POOL_SIZE', 10, 2),
    tokens,
    ordering: oneOf(env, 'ORDINAL_ORDERING', ['gapless', 'concurrent'] as const, 'gapless'),
    role,
    // The libraries' own options: parsed here, defaulted and bounded where they are defined.
    duplicateWindow: optionalInt(env, 'ORDINAL_DUPLICATE_WINDOW'),
    bodyLimitBytes: int(env, 'ORDINAL_BODY_LIMIT', 1024 * 1024, 1),
    bodyTimeoutMs: int(env, 'ORDINAL_BODY_TIMEOUT_MS', 10_000, 10),
    importIdleTimeoutMs: int(env, 'ORDINAL_IMPORT_IDLE_TIMEOUT_MS', 10_000, 10),
    streamTicketTtlMs: int(env, 'ORDINAL_STREAM_TICKET_TTL_MS', 30_000, 10),
    maxBatchMessages: int(env, 'ORDINAL_MAX_BATCH', 1000, 1),
    logFormat: oneOf(
      env,
      'ORDINAL_LOG_FORMAT',
      ['text', 'json'] as const,
      production ? 'json' : 'text',
    ),
    // AMQP input writes and push interfaces hold leases: neither runs on a replica reader.
    amqpUrl:
      role === 'replica-reader'
        ? null
        : env.AMQP_URL === undefined
          ? production
            ? null
            : DEV_AMQP_URL
          : env.AMQP_URL || null,
    amqp: loadAmqpConfig(env),
    heartbeatMs: int(env, 'ORDINAL_HEARTBEAT_MS', 5000, 10),
    streamMailbox: optionalInt(env, 'ORDINAL_STREAM_MAILBOX'),
    streamBufferBytes: optionalInt(env, 'ORDINAL_STREAM_BUFFER_BYTES'),
    streamsBufferBytes: optionalInt(env, 'ORDINAL_STREAMS_BUFFER_BYTES'),
    livePollMs: optionalInt(env, 'ORDINAL_LIVE_POLL_MS'),
    gapTimeoutMs: optionalInt(env, 'ORDINAL_GAP_TIMEOUT_MS'),
    exactRelease: optionalBool(env, 'ORDINAL_EXACT_RELEASE'),
    lateRescanMs: optionalInt(env, 'ORDINAL_LATE_RESCAN_MS'),
    lateWatchMs: optionalInt(env, 'ORDINAL_LATE_WATCH_MS'),
    takeoverMs: optionalInt(env, 'ORDINAL_TAKEOVER_MS'),
    stuckAfterMs: optionalInt(env, 'ORDINAL_STUCK_AFTER_MS'),
    queryTimeoutMs: int(env, 'ORDINAL_QUERY_TIMEOUT_MS', 30_000, 100),
    startMarkerIdentity: optionalBool(env, 'ORDINAL_START_MARKER_IDENTITY') ?? false,
  };
}

function loadAmqpConfig(env: Env): AmqpConfig {
  const queue = env.ORDINAL_AMQP_INPUT_QUEUE || 'eventstore.input';
  if (queue !== 'off' && !/^[A-Za-z0-9._-]{1,200}$/.test(queue))
    throw new ConfigError(
      `ORDINAL_AMQP_INPUT_QUEUE must be 1-200 characters of [A-Za-z0-9._-] or 'off', got '${queue}'`,
    );
  let interfaces: ResolvedInterfaceConfig[] = [];
  if (env.ORDINAL_INTERFACES) {
    try {
      interfaces = loadInterfacesFile(env.ORDINAL_INTERFACES);
    } catch (error) {
      if (error instanceof InterfaceConfigError)
        throw new ConfigError(`ORDINAL_INTERFACES: ${error.message}`);
      throw error;
    }
  }
  return {
    inputQueue: queue === 'off' ? false : queue,
    prefetch: optionalInt(env, 'ORDINAL_AMQP_PREFETCH'),
    quorumQueues: optionalBool(env, 'ORDINAL_AMQP_QUORUM'),
    connectionName: env.ORDINAL_AMQP_CONNECTION_NAME || undefined,
    interfaces,
  };
}
