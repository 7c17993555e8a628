import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, HttpAdapterHost } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { LOG_MODULE_OPTIONS } from './log.module-definition.js';
import type { ResolvedLogOptions } from './log-options.js';
import { LOG_MIGRATIONS } from './migrations/index.js';
import { Segments1766100000000 } from './migrations/1766100000000-segments.js';
import { OWNERSHIP_MIGRATIONS } from '@ordinal/ownership';
import { runMigrations, type MigrationClass } from '@ordinal/pg';
import { MigrationSet } from '@ordinal/pg';
import { alignPositions, latestHashes, type LatestHashRow } from './sql/index.js';
import { storedResendKey } from './content-hash.js';
import { execute, readAppliedMigrations } from '@ordinal/pg';
import { MigrationFailedError } from '@ordinal/pg';
import { LogWriter } from './writer/log-writer.service.js';
import { SegmentKeeper } from './segments/segment-keeper.service.js';
import { START_MARKER_TYPE, SYSTEM_USER } from './log.constants.js';
import type { AppendResult, StoredMessage } from './message.js';
import { LogFullError } from './errors/index.js';
import { PersonalData } from './personal/personal-data.service.js';
import { SubjectErasure } from './personal/subject-erasure.service.js';

interface ListeningServer {
  listening?: boolean;
  once(event: 'listening', listener: () => void): unknown;
  off(event: 'listening', listener: () => void): unknown;
}

/**
 * Brings the log up in order: migrations (the log's, `options.migrations` and those of
 * `MigrationSet` providers, in one run under the migration lock), then the duplicate window's memory (the latest messages' resend keys, read
 * before anything new is written). With `startMarker: true` it writes a StartMarker once the
 * application has really started: when its HTTP server is listening (a start that fails, say
 * on a port in use, writes none), or at bootstrap for an application without HTTP.
 */
@Injectable()
export class LogLifecycle implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LogLifecycle.name);
  private marker: StoredMessage | null = null;
  private resolveStarted!: (marker: StoredMessage | null) => void;
  private readonly started = new Promise<StoredMessage | null>(
    (resolve) => (this.resolveStarted = resolve),
  );
  private pending: { server: ListeningServer; listener: () => void } | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly writer: LogWriter,
    private readonly segments: SegmentKeeper,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
    private readonly discovery: DiscoveryService,
    private readonly personal: PersonalData,
    private readonly erasure: SubjectErasure,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {}

  async onModuleInit(): Promise<void> {
    const options = this.options;
    if (options.role === 'replica-reader') {
      await this.checkReplicaSchema();
      return this.personal.loadRules();
    }
    if (options.migrate) {
      const applied = await runMigrations(this.dataSource, this.migrations(), {
        lockTimeoutMs: options.migrationLockTimeoutMs,
      });
      if (applied.length > 0) this.logger.log(`Applied migrations: ${applied.join(', ')}`);
    } else {
      await this.checkSkippedMigrations();
    }
    await execute(this.dataSource.manager, alignPositions(options.ordering));
    // Segments cover the head and what lies ahead of it before anything is written.
    await this.segments.start();
    // The key store, the master key's check and the erasure ledger reapplied: a key store
    // restored from a backup older than an erasure forgets again before anything is read.
    await this.personal.start(() => this.erasure.erasedSubjects());
    // Deleted tenants are a ledger too (docs/tenants.md#deleting-a-tenant).
    const reapplied = await this.personal.reapplyDeletedTenants();
    if (reapplied.keys > 0)
      this.logger.log(
        `Deleted tenants reapplied: ${reapplied.keys} keys of ${reapplied.tenants} deleted tenants destroyed again`,
      );
    if (options.duplicateWindow > 0) {
      const rows = await execute<LatestHashRow>(
        this.dataSource.manager,
        latestHashes(options.duplicateWindow),
      );
      this.writer.window.load(rows.map(storedResendKey));
      this.logger.log(
        `Duplicate window loaded ${rows.length} messages (open for the next ${options.duplicateWindow} messages)`,
      );
    }
  }

  /**
   * A replica reader runs no migrations (the primary does, and they replicate): it checks that
   * every migration it knows has been applied, so an instance newer than its primary's schema
   * fails at start with what to do rather than on its first read.
   */
  private async checkReplicaSchema(): Promise<void> {
    const known = this.migrations().map((m) => new m().name ?? m.name);
    let applied: Set<string>;
    try {
      const rows = await execute<{ name: string }>(
        this.dataSource.manager,
        readAppliedMigrations(),
      );
      applied = new Set(rows.map((r) => r.name));
    } catch (error) {
      throw new MigrationFailedError(
        `The replica's database has no Ordinal schema yet (${(error as Error).message}); start a primary instance on the primary database first: it runs the migrations, and they replicate`,
        { cause: error },
      );
    }
    const missing = known.filter((name) => !applied.has(name));
    if (missing.length > 0) {
      throw new MigrationFailedError(
        `The replica's schema lacks migrations ${missing.join(', ')}; upgrade and start a primary instance first (replica readers never migrate)`,
      );
    }
    this.logger.log(
      `Replica reader: schema has all ${known.length} migrations; no migrations, StartMarker or appends from this process`,
    );
  }

  /** The known migrations not recorded in `ordinal_migrations`; rejects when the table cannot be read. */
  private async pendingMigrations(): Promise<string[]> {
    const known = this.migrations().map((m) => new m().name ?? m.name);
    const rows = await execute<{ name: string }>(this.dataSource.manager, readAppliedMigrations());
    const applied = new Set(rows.map((r) => r.name));
    return known.filter((name) => !applied.has(name));
  }

  /**
   * `migrate: false` (the server's ORDINAL_MIGRATIONS=skip): someone else runs the migrations
   * (`ordinal migrate`, a job before the deploy). A schema that lacks any of them fails the
   * start here, naming them, rather than a query later.
   */
  private async checkSkippedMigrations(): Promise<void> {
    const fix =
      'run them first (`npx ordinal migrate`, or one start with migrations on: ORDINAL_MIGRATIONS=run or only on the server, migrate: true in OrdinalModule.forRoot)';
    let missing: string[];
    try {
      missing = await this.pendingMigrations();
    } catch (error) {
      throw new MigrationFailedError(
        `Migrations are off for this start, and the database has no Ordinal schema yet (${(error as Error).message}): ${fix}`,
        { cause: error },
      );
    }
    if (missing.length > 0)
      throw new MigrationFailedError(
        `Migrations are off for this start, and the schema lacks ${missing.length} of them (${missing.join(', ')}): ${fix}`,
      );
    this.logger.log(
      'Migrations are off for this start; the schema has every one this version needs',
    );
  }

  /** The log's migrations (consumer ownership's among them), then `options.migrations`, then those of every `MigrationSet` provider (each class once). */
  private migrations(): MigrationClass[] {
    const contributed = this.discovery
      .getProviders()
      .flatMap((wrapper) =>
        wrapper.instance instanceof MigrationSet ? wrapper.instance.migrations : [],
      );
    // The log is segmented at the configured size, an existing one too.
    const log = LOG_MIGRATIONS.map((m) =>
      m === Segments1766100000000
        ? Segments1766100000000.withSegmentSize(this.options.segmentSize)
        : m,
    );
    return [
      ...new Set([...log, ...OWNERSHIP_MIGRATIONS, ...this.options.migrations, ...contributed]),
    ];
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.startMarker || this.options.role === 'replica-reader')
      return this.resolveStarted(null);
    const server = this.adapterHost?.httpAdapter?.getHttpServer?.() as ListeningServer | undefined;
    if (server && typeof server.once === 'function' && !server.listening) {
      const listener = (): void => {
        this.pending = null;
        this.writeStartMarker().then(this.resolveStarted, (error: unknown) => {
          this.logger.error(`StartMarker not written: ${(error as Error).message}`);
          this.resolveStarted(null);
        });
      };
      this.pending = { server, listener };
      server.once('listening', listener);
      return;
    }
    this.resolveStarted(await this.writeStartMarker());
  }

  onApplicationShutdown(): void {
    if (this.pending) this.pending.server.off('listening', this.pending.listener);
    this.pending = null;
  }

  /**
   * Resolves once the application has started: with the StartMarker this process wrote, or
   * null when `startMarker` is off. Never resolves for an HTTP application that does not listen.
   */
  whenStarted(): Promise<StoredMessage | null> {
    return this.started;
  }

  /** The StartMarker this process wrote, once written. */
  get startMarker(): StoredMessage | null {
    return this.marker;
  }

  private async writeStartMarker(): Promise<StoredMessage | null> {
    const result = await this.appendStartMarker().catch((error: unknown) => {
      // A full log still serves its readers: start without a marker rather than not at all.
      if (!(error instanceof LogFullError)) throw error;
      this.logger.warn(`StartMarker not written: ${error.message}`);
      return null;
    });
    if (result === null) return null;
    const entry = result.entries[0];
    if (entry.status !== 'created') return null;
    this.marker = entry.message;
    this.logger.log(`StartMarker written at index ${entry.message.id}`);
    return this.marker;
  }

  private appendStartMarker(): Promise<AppendResult> {
    return this.writer.append({
      skipDuplicateWindow: true,
      // The first message of this start: nothing appended once the server listens goes before it.
      inOrder: true,
      messages: [
        {
          messageType: START_MARKER_TYPE,
          userId: SYSTEM_USER,
          // Only when it started: every reader sees this message, and the host and pid are
          // for an operator to add (startMarkerBody), not for each client to learn.
          body: {
            startedAt: new Date().toISOString(),
            ...this.options.startMarkerBody,
          },
        },
      ],
    });
  }
}
