import type { MigrationInterface } from 'typeorm';
import { ownershipTimings } from '@ordinal/ownership';

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
  /** Most body bytes one flush writes. @default 8 MiB */
  maxBatchBytes?: number;
  /** Most messages waiting for a flush before appends are refused. @default 100000 */
  maxQueuedMessages?: number;
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
   * Flushes in flight at once in concurrent mode (gapless mode always has one). Beside one in
   * flight another starts once 64 messages wait or the oldest waited 2 ms. @default 4
   */
  maxConcurrentFlushes?: number;
  /** Concurrent mode: how long a hole in the log is held before it is abandoned ; <= 0 abandons at once. @default 5000 */
  gapTimeoutMs?: number;
  /** Concurrent mode: release a hole as soon as every writer that could fill it has ended. @default true */
  exactRelease?: boolean;
  /** Concurrent mode: how often abandoned holes are re-scanned for late arrivals (ms). @default 2000 */
  lateRescanMs?: number;
  /** Extra fields of the StartMarker's body (e.g. the server's version). */
  startMarkerBody?: Record<string, unknown>;
  /** The live router's safety-net poll of the head, besides NOTIFY and own commits (ms). @default 1000 */
  livePollMs?: number;
  /** Most live messages one feed buffers before it falls back to database catch-up. @default 10000 */
  mailboxLimit?: number;
  /** Rows per database read of a feed's replay and of the router. @default 1000 */
  replayBatchSize?: number;
  /**
   * Consumer ownership: a consumer (subscription, projection partition, push interface) whose
   * owning process died runs in another process within this bound (ms). @default 5000
   */
  takeoverMs?: number;
}

export type ResolvedLogOptions = Required<Omit<LogModuleOptions, 'startMarkerBody'>> &
  Pick<LogModuleOptions, 'startMarkerBody'>;

export function resolveLogOptions(options: LogModuleOptions = {}): ResolvedLogOptions {
  return {
    ordering: options.ordering ?? 'gapless',
    role: options.role ?? 'primary',
    duplicateWindow: options.duplicateWindow ?? 2000,
    maxBatchMessages: options.maxBatchMessages ?? 2000,
    maxBatchBytes: options.maxBatchBytes ?? 8 * 1024 * 1024,
    maxQueuedMessages: options.maxQueuedMessages ?? 100_000,
    startMarker: options.startMarker ?? false,
    migrate: options.migrate ?? true,
    migrations: options.migrations ?? [],
    migrationLockTimeoutMs: options.migrationLockTimeoutMs ?? 60_000,
    startMarkerBody: options.startMarkerBody,
    maxConcurrentFlushes: options.maxConcurrentFlushes ?? 4,
    gapTimeoutMs: options.gapTimeoutMs ?? 5000,
    exactRelease: options.exactRelease ?? true,
    lateRescanMs: options.lateRescanMs ?? 2000,
    livePollMs: options.livePollMs ?? 1000,
    mailboxLimit: options.mailboxLimit ?? 10_000,
    replayBatchSize: options.replayBatchSize ?? 1000,
    // Checked where the defaults are applied: a bad bound fails at start, naming the option
    takeoverMs: ownershipTimings(options.takeoverMs ?? 5000).takeoverMs,
  };
}
