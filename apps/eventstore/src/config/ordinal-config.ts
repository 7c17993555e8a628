import { DEVELOPMENT_TOKEN } from '@ordinal/contract';
import type { LogRole, Ordering } from '@ordinal/log';
import {
  InterfaceConfigError,
  loadInterfacesFile,
  type ResolvedInterfaceConfig,
} from '@ordinal/amqp';
import {
  connectionUrlProblem,
  maskCredentials,
  urlFromPgEnvironment,
  withPassword,
} from '@ordinal/pg';
import { parseTokens, type ApiToken } from '../auth/api-token.js';
import { SecretFileError, withSecretFiles } from './secret-files.js';
import type { ConsumerGroupDeclaration } from '@ordinal/subscriptions';
import { loadGroupsFile } from './consumer-groups-file.js';
import { loadJwtConfig, type JwtConfig } from '../auth/jwt/jwt-config.js';
import { loadAccessFile, type AccessConfig } from './access-file.js';
import { loadPersonalDataRulesFile } from './personal-data-rules-file.js';
import { parseMasterKey, type PersonalDataRule } from '@ordinal/log';

/** The development token: accepted only when ORDINAL_ENV=development (the default). */
export const DEV_TOKEN = DEVELOPMENT_TOKEN;
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
  /**
   * Origins whose pages may call the API from a browser (ORDINAL_CORS_ORIGINS, comma-separated,
   * each `scheme://host[:port]`). @default [] (no CORS)
   */
  corsOrigins: string[];
  port: number;
  databaseUrl: string;
  /** Create the database when it does not exist (development only). */
  createDatabase: boolean;
  /**
   * What a start does with the migrations (ORDINAL_MIGRATIONS): `run` them first; `skip` them
   * (someone else runs them; the start fails, naming them, when the schema lacks any); `only`
   * run them and exit 0. @default 'run'
   */
  migrations: MigrationsMode;
  dbPoolSize: number;
  tokens: ApiToken[];
  /** JWT bearer tokens verified against an identity provider's keys (ORDINAL_JWT_*; docs/security.md). @default null (off) */
  jwt: JwtConfig | null;
  /**
   * Signs stream tickets beside the token secrets (ORDINAL_STREAM_TICKET_SECRET): set the same
   * on every process when only JWTs are configured, so a ticket issued by one opens the stream on another.
   */
  streamTicketSecret?: string;
  /** Access rules and the audit trail (ORDINAL_ACCESS_RULES, ORDINAL_AUDIT; docs/security.md). */
  access: AccessConfig;
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
  /**
   * A scavenge runs this often (ms, ORDINAL_SCAVENGE_INTERVAL_MS; docs/lifecycle.md); 0: only
   * when asked. @default 0
   */
  scavengeIntervalMs: number;
  /** The share of its time a scavenge works, in percent (ORDINAL_SCAVENGE_THROTTLE_PERCENT, 1-100; the log's default 25). */
  scavengeThrottlePercent?: number;
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
  /** Indices per segment of the log (ORDINAL_SEGMENT_SIZE; fixed once the log holds a message; the log's default 10000000). */
  segmentSize?: number;
  /** The archive store's directory (ORDINAL_ARCHIVE_DIR; null: no archiving, docs/storage.md). */
  archiveDir: string | null;
  /** Age of a segment's newest message before it is archived (ms, ORDINAL_ARCHIVE_AFTER_MS; the log's default 30 days). */
  archiveAfterMs?: number;
  /** How often due segments are archived (ms, ORDINAL_ARCHIVE_CHECK_MS; 0: only on request; the log's default 1 hour). */
  archiveCheckMs?: number;
  /** The share of its time an archive works, in percent (ORDINAL_ARCHIVE_THROTTLE_PERCENT, 1-100; the log's default 25). */
  archiveThrottlePercent?: number;
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
  /** A consumer group member silent this long is declared dead (ms, ORDINAL_GROUP_MEMBER_TIMEOUT_MS; the subscriptions' default 10000). */
  groupMemberTimeoutMs?: number;
  /** A consumer group member dead this long is removed (ms, ORDINAL_GROUP_MEMBER_RETENTION_MS; the subscriptions' default 86400000). */
  groupMemberRetentionMs?: number;
  /** Consumer groups defined at start, from the JSON or YAML file named by ORDINAL_CONSUMER_GROUPS. @default [] */
  consumerGroups: ConsumerGroupDeclaration[];
  /** How long the server waits for any one database answer (ms, ORDINAL_QUERY_TIMEOUT_MS); a write past it answers 503. @default 30000 */
  queryTimeoutMs: number;
  /** Personal-data rules from the YAML or JSON file named by ORDINAL_PERSONAL_DATA_RULES (docs/personal-data.md). @default {} */
  personalDataRules: Record<string, PersonalDataRule>;
  /** The master key of personal data (ORDINAL_MASTER_KEY, 32 bytes base64), null when unset. */
  masterKey: Buffer | null;
  /** The personal-data key store's own database (ORDINAL_KEYSTORE_URL), null: the log's database. */
  keyStoreUrl: string | null;
}

/** ORDINAL_MIGRATIONS. */
export type MigrationsMode = 'skip' | 'run' | 'only';

/** The shortest secret production accepts in ORDINAL_TOKENS (`ordinal token` makes 43 characters). */
export const MIN_PRODUCTION_SECRET_LENGTH = 32;

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
export function loadConfig(variables: Env = process.env): OrdinalConfig {
  let env: Env;
  try {
    env = withSecretFiles(variables);
  } catch (error) {
    if (error instanceof SecretFileError) throw new ConfigError(error.message);
    throw error;
  }
  const mode = oneOf(env, 'ORDINAL_ENV', ['development', 'production'] as const, 'development');
  const production = mode === 'production';
  let tokens: ApiToken[];
  try {
    tokens = parseTokens(env.ORDINAL_TOKENS ?? '');
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  let jwt: JwtConfig | null;
  try {
    jwt = loadJwtConfig(env);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const role = oneOf(env, 'ORDINAL_ROLE', ['primary', 'replica-reader'] as const, 'primary');
  const migrations = oneOf(env, 'ORDINAL_MIGRATIONS', ['skip', 'run', 'only'] as const, 'run');
  if (role === 'replica-reader' && migrations === 'only')
    throw new ConfigError(
      'ORDINAL_MIGRATIONS=only runs the migrations on the primary: a replica reader never migrates (docs/scaling.md)',
    );
  if (production) {
    if (tokens.length === 0 && !jwt)
      throw new ConfigError(
        'ORDINAL_ENV=production needs ORDINAL_TOKENS (name:secret:scope+scope;...) or ORDINAL_JWT_JWKS_URL',
      );
    if (tokens.some((t) => t.secret === DEV_TOKEN))
      throw new ConfigError(
        'ORDINAL_ENV=production refuses the development token; configure your own secrets in ORDINAL_TOKENS',
      );
    const weak = tokens.filter((t) => t.secret.length < MIN_PRODUCTION_SECRET_LENGTH);
    if (weak.length > 0)
      throw new ConfigError(
        `ORDINAL_ENV=production needs token secrets of at least ${MIN_PRODUCTION_SECRET_LENGTH} random characters; ${weak
          .map((t) => `'${t.name}' has ${t.secret.length}`)
          .join(', ')}: make each with \`npx ordinal token --name NAME --scopes SCOPES\``,
      );
    if (!env.DATABASE_URL && !env.PGHOST)
      throw new ConfigError(
        'ORDINAL_ENV=production needs DATABASE_URL (or PGHOST with PGPORT, PGUSER, PGPASSWORD, PGDATABASE)',
      );
  } else if (!tokens.some((t) => t.secret === DEV_TOKEN)) {
    tokens.push({
      name: 'development',
      secret: DEV_TOKEN,
      scopes: new Set(['read', 'write', 'admin']),
    });
  }
  if (role === 'replica-reader' && !env.DATABASE_URL && !env.PGHOST) {
    throw new ConfigError(
      'ORDINAL_ROLE=replica-reader needs DATABASE_URL (or PGHOST…) naming the streaming replica it reads (docs/scaling.md)',
    );
  }
  const amqpUrl =
    role === 'replica-reader'
      ? null
      : env.AMQP_URL === undefined
        ? production
          ? null
          : DEV_AMQP_URL
        : env.AMQP_URL || null;
  if (amqpUrl !== null) checkUrl(amqpUrl, 'AMQP_URL', ['amqp:', 'amqps:']);
  return {
    env: mode,
    // Development listens on the loopback interface only: it serves the development token.
    host: env.HOST || (production ? '0.0.0.0' : '127.0.0.1'),
    port: int(env, 'PORT', 8083, 0),
    databaseUrl: databaseUrlOf(env),
    // A replica reader's database comes from the primary; it never creates one.
    createDatabase: !production && role === 'primary',
    migrations,
    dbPoolSize: int(env, 'ORDINAL_DB_POOL_SIZE', 10, 2),
    tokens,
    jwt,
    access: {
      ...(env.ORDINAL_ACCESS_RULES
        ? loadAccessFile(env.ORDINAL_ACCESS_RULES, (m) => new ConfigError(m))
        : { rules: [], auditedCategories: [] }),
      audit: oneOf(env, 'ORDINAL_AUDIT', ['on', 'off'] as const, 'off') === 'on',
    },
    streamTicketSecret: env.ORDINAL_STREAM_TICKET_SECRET || undefined,
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
    amqpUrl,
    amqp: loadAmqpConfig(env),
    heartbeatMs: int(env, 'ORDINAL_HEARTBEAT_MS', 5000, 10),
    scavengeIntervalMs: int(env, 'ORDINAL_SCAVENGE_INTERVAL_MS', 0, 0),
    scavengeThrottlePercent: optionalInt(env, 'ORDINAL_SCAVENGE_THROTTLE_PERCENT'),
    streamMailbox: optionalInt(env, 'ORDINAL_STREAM_MAILBOX'),
    streamBufferBytes: optionalInt(env, 'ORDINAL_STREAM_BUFFER_BYTES'),
    streamsBufferBytes: optionalInt(env, 'ORDINAL_STREAMS_BUFFER_BYTES'),
    livePollMs: optionalInt(env, 'ORDINAL_LIVE_POLL_MS'),
    gapTimeoutMs: optionalInt(env, 'ORDINAL_GAP_TIMEOUT_MS'),
    segmentSize: optionalInt(env, 'ORDINAL_SEGMENT_SIZE'),
    archiveDir: env.ORDINAL_ARCHIVE_DIR || null,
    archiveAfterMs: optionalInt(env, 'ORDINAL_ARCHIVE_AFTER_MS'),
    archiveCheckMs: optionalInt(env, 'ORDINAL_ARCHIVE_CHECK_MS'),
    archiveThrottlePercent: optionalInt(env, 'ORDINAL_ARCHIVE_THROTTLE_PERCENT'),
    exactRelease: optionalBool(env, 'ORDINAL_EXACT_RELEASE'),
    lateRescanMs: optionalInt(env, 'ORDINAL_LATE_RESCAN_MS'),
    lateWatchMs: optionalInt(env, 'ORDINAL_LATE_WATCH_MS'),
    takeoverMs: optionalInt(env, 'ORDINAL_TAKEOVER_MS'),
    stuckAfterMs: optionalInt(env, 'ORDINAL_STUCK_AFTER_MS'),
    groupMemberTimeoutMs: optionalInt(env, 'ORDINAL_GROUP_MEMBER_TIMEOUT_MS'),
    groupMemberRetentionMs: optionalInt(env, 'ORDINAL_GROUP_MEMBER_RETENTION_MS'),
    consumerGroups: env.ORDINAL_CONSUMER_GROUPS
      ? loadGroupsFile(env.ORDINAL_CONSUMER_GROUPS, (m) => new ConfigError(m))
      : [],
    masterKey: masterKeyOf(env),
    keyStoreUrl: env.ORDINAL_KEYSTORE_URL || null,
    personalDataRules: env.ORDINAL_PERSONAL_DATA_RULES
      ? loadPersonalDataRulesFile(env.ORDINAL_PERSONAL_DATA_RULES, (m) => new ConfigError(m))
      : {},
    queryTimeoutMs: int(env, 'ORDINAL_QUERY_TIMEOUT_MS', 30_000, 100),
    startMarkerIdentity: optionalBool(env, 'ORDINAL_START_MARKER_IDENTITY') ?? false,
    corsOrigins: corsOrigins(env),
  };
}

/** ORDINAL_MASTER_KEY, checked at start (a bad one names the variable and how to make one). */
function masterKeyOf(env: Env): Buffer | null {
  if (!env.ORDINAL_MASTER_KEY) return null;
  try {
    return parseMasterKey(env.ORDINAL_MASTER_KEY);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/** ORDINAL_CORS_ORIGINS: exact origins only (a wildcard would open the API to every page). */
function corsOrigins(env: Env): string[] {
  const list = (env.ORDINAL_CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const origin of list) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      /* reported below */
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || parsed.origin !== origin)
      throw new ConfigError(
        `ORDINAL_CORS_ORIGINS: '${origin}' is not an origin; give each as scheme://host[:port] (e.g. https://app.example.com), comma-separated, no path, no wildcard`,
      );
  }
  return list;
}

/**
 * The PostgreSQL URL: DATABASE_URL (PGPASSWORD fills in a password it leaves out), else one
 * built from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE (each percent-encoded), else the
 * development default. A URL that does not parse is a ConfigError naming DATABASE_URL and what
 * is wrong with it, never quoting its password.
 */
function databaseUrlOf(env: Env): string {
  const fromPg = urlFromPgEnvironment(env, 'ordinal');
  if (!env.DATABASE_URL && env.PGHOST?.startsWith('/'))
    throw new ConfigError(
      `PGHOST is a socket directory ('${env.PGHOST}'), which the server does not connect through; give a host name or address, or set DATABASE_URL`,
    );
  const raw = env.DATABASE_URL || fromPg || DEV_DATABASE_URL;
  checkUrl(raw, env.DATABASE_URL ? 'DATABASE_URL' : fromPg ? 'PGHOST…' : 'DATABASE_URL', [
    'postgres:',
    'postgresql:',
  ]);
  return env.DATABASE_URL ? withPassword(raw, env.PGPASSWORD) : raw;
}

function checkUrl(raw: string, name: string, protocols: readonly string[]): void {
  const problem = connectionUrlProblem(raw, name, protocols);
  if (problem) throw new ConfigError(maskCredentials(problem));
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
