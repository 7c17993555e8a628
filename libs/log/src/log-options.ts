import { DEFAULT_SEGMENT_SIZE, MIN_SEGMENT_SIZE } from './segments/segment-range.js';
import type { MigrationInterface } from 'typeorm';
import { MIN_TAKEOVER_MS } from '@ordinal/ownership';
import { numberOption, OrdinalError } from '@ordinal/pg';
import { EnvKeyProvider, type KeyProvider } from './personal/key-provider.js';
import type { PersonalDataRule } from './personal/personal-data-rule.js';
import type { ArchiveStore } from './archive/archive-store.js';

/** Personal data (docs/personal-data.md): rules, the master key, the key store. */
export interface PersonalDataOptions {
  /** Rules per message type, beside those set over REST and by `@DomainEvent(…, {personal})`. @default {} */
  rules?: Record<string, PersonalDataRule>;
  /** Where the master key comes from. @default ORDINAL_MASTER_KEY (EnvKeyProvider) */
  keyProvider?: KeyProvider;
  /** The key store's own database (a connection string). @default ORDINAL_KEYSTORE_URL, else the log's database */
  keyStoreUrl?: string | null;
  /** The key store's schema. @default 'ordinal_keys' */
  keyStoreSchema?: string;
  /**
   * Refuse to start without a configured master key when rules exist (otherwise a development
   * key is used, with a warning). @default NODE_ENV === 'production'
   */
  production?: boolean;
}

/** How positions are assigned: `gapless` (one writer at a time, no holes) or `concurrent` (parallel writers; readers wait at holes). */
export type Ordering = 'gapless' | 'concurrent';

/**
 * What a process does with its database: `primary` reads and writes (the default);
 * `replica-reader` serves reads from a PostgreSQL streaming replica (or any database it must
 * not write to): no migrations, no appends, no consumers, and in concurrent mode a watermark
 * that follows the primary's instead of releasing holes itself (docs/scaling.md).
 */
export type LogRole = 'primary' | 'replica-reader';

/** Options of `LogModule.forRoot`. Every default lives in `resolveLogOptions`. */
export interface LogModuleOptions {
  /** @default 'gapless' */
  ordering?: Ordering;
  /** `replica-reader`: read-only, for a streaming replica; see `LogRole`. @default 'primary' */
  role?: LogRole;
  /** Messages remembered by the duplicate window; 0 turns it off. @default 2000 */
  duplicateWindow?: number;
  /** Most messages one flush writes. @default 2000 */
  maxBatchMessages?: number;
  /**
   * Indices per segment (a partition of the messages table, docs/storage.md): fixed once the
   * log holds a message; a start with another size then fails with `invalid_configuration`.
   * The Ordinal server sets it from `ORDINAL_SEGMENT_SIZE`. @default 10000000
   */
  segmentSize?: number;
  /** Most body bytes one flush writes. @default 8 MiB */
  maxBatchBytes?: number;
  /** Most messages waiting for a flush before appends are refused. @default 100000 */
  maxQueuedMessages?: number;
  /**
   * Longest an append waits for the database, from when it is queued (ms): each statement of a
   * flush that may wait (for a lock held by an import, say) gets what is left of its oldest
   * append's time as its query timeout, and an append whose time ran out while it was queued
   * behind other flushes is refused without being sent (`DatabaseUnavailableError`, nothing
   * stored). 0: no bound but the pool's own per-query `query_timeout`. The Ordinal server sets
   * it to `ORDINAL_QUERY_TIMEOUT_MS`. @default 0
   */
  appendTimeoutMs?: number;
  /**
   * Write a StartMarker (type `StartMarker`, user `system`) once the application has started:
   * when its HTTP server listens, or at bootstrap without HTTP. The Ordinal server turns it on;
   * a library user rarely wants one. @default false
   */
  startMarker?: boolean;
  /** Run the log's migrations (and `migrations`) at start. @default true */
  migrate?: boolean;
  /** More TypeORM migrations to run with the log's, in the same run under the migration lock (a read model's tables, say). @default [] */
  migrations?: (new () => MigrationInterface)[];
  /** How long a start waits for another process's migration run (the advisory lock) before it fails (ms). @default 60000 */
  migrationLockTimeoutMs?: number;
  /**
   * Flushes in flight at once (gapless mode: one while the duplicate window is open). Beside
   * one in flight another starts once the oldest append waited 2 ms (concurrent mode: or 64
   * messages wait). Appends in flushes in flight together are stored in the order the flushes
   * reach the database's lock; 1 keeps the queue order strictly, at a round trip more per
   * append when the database is across a network. @default 4
   */
  maxConcurrentFlushes?: number;
  /** Concurrent mode: how long a hole in the log is held before it is abandoned ; <= 0 abandons at once. @default 5000 */
  gapTimeoutMs?: number;
  /** Concurrent mode: release a hole as soon as every writer that could fill it has ended. @default true */
  exactRelease?: boolean;
  /** Concurrent mode: how often abandoned holes are re-scanned for late arrivals (ms). @default 2000 */
  lateRescanMs?: number;
  /**
   * Concurrent mode: how long readers keep watching a position the watermark passed without a
   * row, exact releases included (ms). A row inserted there within this bound is delivered
   * late to every reader that passed it; abandoned positions are also watched for as long as
   * a transaction with an id that could fill them runs. @default 60000
   */
  lateWatchMs?: number;
  /**
   * Extra fields of the StartMarker's body, beside `startedAt` (e.g. the server's version, or
   * its host and pid: every reader of the log sees them).
   */
  startMarkerBody?: Record<string, unknown>;
  /**
   * The live router's safety-net poll of the head, besides NOTIFY and own commits (ms). On a
   * replica reader it is the only way new messages are seen (a standby forwards no NOTIFY).
   * @default 1000, 200 for a replica reader
   */
  livePollMs?: number;
  /** Most live messages one feed buffers before it falls back to database catch-up. @default 10000 */
  mailboxLimit?: number;
  /** Rows per database read of a feed's replay and of the router. @default 1000 */
  replayBatchSize?: number;
  /**
   * Bytes of messages one feed may hold: every feed's live mailbox at most half of it (beyond,
   * it falls back to the database as after an overflow), and each catch-up page of a rendered
   * feed (an SSE stream) at most a sixth (three at a time, at least one message each), so a
   * stream holds at most this much, plus one message. @default 8 MiB
   */
  streamBufferBytes?: number;
  /**
   * Bytes of catch-up pages all such streams together may hold (a page shared by several counts
   * once). Beyond it the stream holding the most is dropped (`onDropped`: an SSE stream is
   * closed, and the client resumes from its Last-Event-ID). @default 128 MiB
   */
  streamsBufferBytes?: number;
  /**
   * Consumer ownership: a consumer (subscription, projection partition, push interface) whose
   * owning process died runs in another process within this bound (ms). @default 5000
   */
  takeoverMs?: number;
  /** Personal data: rules, the master key and the key store (docs/personal-data.md). */
  personalData?: PersonalDataOptions;
  /**
   * The share of its time a scavenge works (1-100, percent): after a batch that took t ms it
   * rests t × (100 − p) / p ms, so that appends and reads keep most of the database while it
   * runs (docs/lifecycle.md). 100: full speed. A run may set its own (`ScavengeOptions`).
   * @default 25
   */
  scavengeThrottlePercent?: number;
  /** Archiving sealed segments to an archive store, and reading them back (docs/storage.md). */
  archive?: ArchiveOptions;
}

/** Where archived segments go and when (docs/storage.md, "Archive"). */
export interface ArchiveOptions {
  /**
   * The archive store. Without one nothing is archived or restored, and a read of an archived
   * range fails with `archive_not_configured`. The Ordinal server sets a
   * `FilesystemArchiveStore` in `ORDINAL_ARCHIVE_DIR`. @default null
   */
  store?: ArchiveStore | null;
  /** A segment is archived (by the schedule, or on request) only once its newest message is this old (ms). The server: ORDINAL_ARCHIVE_AFTER_MS. @default 30 days */
  afterMs?: number;
  /** How often sealed segments older than `afterMs` are archived (ms); 0: only on request. The server: ORDINAL_ARCHIVE_CHECK_MS. @default 1 hour */
  checkMs?: number;
  /** Indices per archive file. @default 10000 */
  chunkSpan?: number;
  /** Characters of archived rows kept in memory for readers (the most recently read chunks). @default 64 Mi */
  cacheChars?: number;
  /**
   * The share of its time an archive works, in percent (1-100): after a chunk that took t ms to
   * export (or to check) it rests t × (100 − p) / p ms, so publishes and reads keep most of the
   * machine while it runs; 100 is full speed. The server: ORDINAL_ARCHIVE_THROTTLE_PERCENT.
   * @default 25
   */
  throttlePercent?: number;
}

/** `ArchiveOptions` with every default applied. */
export interface ResolvedArchiveOptions {
  store: ArchiveStore | null;
  afterMs: number;
  checkMs: number;
  chunkSpan: number;
  cacheChars: number;
  throttlePercent: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** The archive options with their defaults (the only place they are applied). */
export function resolveArchiveOptions(options: ArchiveOptions = {}): ResolvedArchiveOptions {
  return {
    store: options.store ?? null,
    afterMs: numberOption(options.afterMs, {
      option: 'log.archive.afterMs',
      env: 'ORDINAL_ARCHIVE_AFTER_MS',
      fallback: 30 * DAY_MS,
      min: 0,
      unit: 'ms',
    }),
    checkMs: numberOption(options.checkMs, {
      option: 'log.archive.checkMs',
      env: 'ORDINAL_ARCHIVE_CHECK_MS',
      fallback: 60 * 60 * 1000,
      min: 0,
      unit: 'ms',
    }),
    chunkSpan: numberOption(options.chunkSpan, {
      option: 'log.archive.chunkSpan',
      fallback: 10_000,
      min: 10,
    }),
    cacheChars: numberOption(options.cacheChars, {
      option: 'log.archive.cacheChars',
      fallback: 64 * 1024 * 1024,
      min: 0,
    }),
    throttlePercent: throttlePercent(options.throttlePercent, {
      option: 'log.archive.throttlePercent',
      env: 'ORDINAL_ARCHIVE_THROTTLE_PERCENT',
    }),
  };
}

/** `PersonalDataOptions` with every default applied. */
export interface ResolvedPersonalDataOptions {
  rules: Record<string, PersonalDataRule>;
  keyProvider: KeyProvider;
  /** Whether a master key was configured (a provider given, or ORDINAL_MASTER_KEY set). */
  keyConfigured: boolean;
  keyStoreUrl: string | null;
  keyStoreSchema: string;
  production: boolean;
}

export type ResolvedLogOptions = Required<
  Omit<LogModuleOptions, 'startMarkerBody' | 'personalData' | 'archive'>
> &
  Pick<LogModuleOptions, 'startMarkerBody'> & {
    personalData: ResolvedPersonalDataOptions;
    archive: ResolvedArchiveOptions;
  };

/** The personal-data options with their defaults (the only place they are applied). */
export function resolvePersonalDataOptions(
  options: PersonalDataOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): ResolvedPersonalDataOptions {
  const schema = options.keyStoreSchema ?? 'ordinal_keys';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new TypeError(`personalData.keyStoreSchema '${schema}' must be a lower-case SQL name`);
  const fromEnv = new EnvKeyProvider('ORDINAL_MASTER_KEY', env);
  return {
    rules: options.rules ?? {},
    keyProvider: options.keyProvider ?? fromEnv,
    keyConfigured: options.keyProvider !== undefined || fromEnv.configured,
    keyStoreUrl:
      options.keyStoreUrl === undefined ? env.ORDINAL_KEYSTORE_URL || null : options.keyStoreUrl,
    keyStoreSchema: schema,
    production: options.production ?? env.NODE_ENV === 'production',
  };
}

export function resolveLogOptions(options: LogModuleOptions = {}): ResolvedLogOptions {
  const role = options.role ?? 'primary';
  return {
    ordering: options.ordering ?? 'gapless',
    role,
    duplicateWindow: numberOption(options.duplicateWindow, {
      option: 'log.duplicateWindow',
      env: 'ORDINAL_DUPLICATE_WINDOW',
      fallback: 2000,
      min: 0,
    }),
    maxBatchMessages: options.maxBatchMessages ?? 2000,
    segmentSize: numberOption(options.segmentSize, {
      option: 'log.segmentSize',
      env: 'ORDINAL_SEGMENT_SIZE',
      fallback: DEFAULT_SEGMENT_SIZE,
      min: MIN_SEGMENT_SIZE,
    }),
    maxBatchBytes: options.maxBatchBytes ?? 8 * 1024 * 1024,
    maxQueuedMessages: options.maxQueuedMessages ?? 100_000,
    appendTimeoutMs: options.appendTimeoutMs ?? 0,
    startMarker: options.startMarker ?? false,
    migrate: options.migrate ?? true,
    migrations: options.migrations ?? [],
    migrationLockTimeoutMs: options.migrationLockTimeoutMs ?? 60_000,
    startMarkerBody: options.startMarkerBody,
    maxConcurrentFlushes: options.maxConcurrentFlushes ?? 4,
    gapTimeoutMs: numberOption(options.gapTimeoutMs, {
      option: 'log.gapTimeoutMs',
      env: 'ORDINAL_GAP_TIMEOUT_MS',
      fallback: 5000,
      unit: 'ms',
    }),
    exactRelease: options.exactRelease ?? true,
    lateRescanMs: numberOption(options.lateRescanMs, {
      option: 'log.lateRescanMs',
      env: 'ORDINAL_LATE_RESCAN_MS',
      fallback: 2000,
      min: 10,
      unit: 'ms',
    }),
    lateWatchMs: numberOption(options.lateWatchMs, {
      option: 'log.lateWatchMs',
      env: 'ORDINAL_LATE_WATCH_MS',
      fallback: 60_000,
      min: 0,
      unit: 'ms',
    }),
    // A standby forwards no NOTIFY: a replica reader sees new messages only by polling.
    livePollMs: numberOption(options.livePollMs, {
      option: 'log.livePollMs',
      env: 'ORDINAL_LIVE_POLL_MS',
      fallback: role === 'replica-reader' ? 200 : 1000,
      min: 10,
      unit: 'ms',
    }),
    mailboxLimit: numberOption(options.mailboxLimit, {
      option: 'log.mailboxLimit',
      env: 'ORDINAL_STREAM_MAILBOX',
      fallback: 10_000,
      min: 1,
    }),
    replayBatchSize: options.replayBatchSize ?? 1000,
    streamBufferBytes: numberOption(options.streamBufferBytes, {
      option: 'log.streamBufferBytes',
      env: 'ORDINAL_STREAM_BUFFER_BYTES',
      fallback: 8 * 1024 * 1024,
      min: 64 * 1024,
    }),
    streamsBufferBytes: numberOption(options.streamsBufferBytes, {
      option: 'log.streamsBufferBytes',
      env: 'ORDINAL_STREAMS_BUFFER_BYTES',
      fallback: 128 * 1024 * 1024,
      min: 1024 * 1024,
    }),
    takeoverMs: numberOption(options.takeoverMs, {
      option: 'log.takeoverMs',
      env: 'ORDINAL_TAKEOVER_MS',
      fallback: 5000,
      min: MIN_TAKEOVER_MS,
      unit: 'ms',
    }),
    personalData: resolvePersonalDataOptions(options.personalData),
    archive: resolveArchiveOptions(options.archive),
    scavengeThrottlePercent: throttlePercent(options.scavengeThrottlePercent, {
      option: 'log.scavengeThrottlePercent',
      env: 'ORDINAL_SCAVENGE_THROTTLE_PERCENT',
    }),
  };
}

/** A scavenge's or an archive's throttle: a whole percent from 1 to 100 (25 when left out). */
export function throttlePercent(
  value: number | undefined,
  rule: { option: string; env?: string },
): number {
  const percent = numberOption(value, { ...rule, fallback: 25, min: 1 });
  if (percent > 100)
    throw new OrdinalError(
      'invalid_configuration',
      `${rule.option} must be a whole percent from 1 to 100, got ${percent}` +
        (rule.env ? ` (the server: ${rule.env})` : ''),
    );
  return percent;
}
