import { hostname } from 'node:os';
import type { OrdinalModuleOptions } from '@ordinal/nestjs';
import type { OrdinalConfig } from './ordinal-config.js';
import { FilesystemArchiveStore, StaticKeyProvider } from '@ordinal/log';

/** The server's OrdinalModule options from its configuration: the same module a service uses, with the server's settings. */
export function ordinalOptionsFrom(config: OrdinalConfig): OrdinalModuleOptions {
  return {
    url: config.databaseUrl,
    // ORDINAL_MIGRATIONS=skip: someone else runs them; the start checks that the schema has them all.
    migrate: config.migrations !== 'skip',
    // The server creates its development database before it starts (prepare-database.ts).
    createDatabase: config.createDatabase,
    typeorm: {
      retryAttempts: 1,
      retryDelay: 500,
      extra: {
        max: config.dbPoolSize,
        connectionTimeoutMillis: 5000,
        query_timeout: config.queryTimeoutMs,
        application_name: 'ordinal',
      },
    },
    // The server's log says when it started; it is written once the HTTP server listens.
    startMarker: config.role === 'primary',
    log: {
      // Where the server runs is for operators who ask for it: readers see the marker too.
      startMarkerBody: config.startMarkerIdentity
        ? { host: hostname(), pid: process.pid }
        : undefined,
      ordering: config.ordering,
      role: config.role,
      duplicateWindow: config.duplicateWindow,
      // A REST batch is stored by one flush, so a flush holds at least the largest batch.
      maxBatchMessages: Math.max(2000, config.maxBatchMessages),
      mailboxLimit: config.streamMailbox,
      streamBufferBytes: config.streamBufferBytes,
      streamsBufferBytes: config.streamsBufferBytes,
      // A publish is answered within the query timeout of reaching the writer, queued or not.
      appendTimeoutMs: config.queryTimeoutMs,
      livePollMs: config.livePollMs,
      gapTimeoutMs: config.gapTimeoutMs,
      segmentSize: config.segmentSize,
      // Sealed segments go to files in ORDINAL_ARCHIVE_DIR (docs/storage.md).
      archive: {
        store: config.archiveDir ? new FilesystemArchiveStore(config.archiveDir) : null,
        afterMs: config.archiveAfterMs,
        checkMs: config.archiveCheckMs,
        throttlePercent: config.archiveThrottlePercent,
      },
      exactRelease: config.exactRelease,
      lateRescanMs: config.lateRescanMs,
      lateWatchMs: config.lateWatchMs,
      scavengeThrottlePercent: config.scavengeThrottlePercent,
      // A dead process's consumers (interfaces, projections, subscriptions) run elsewhere within this bound.
      takeoverMs: config.takeoverMs,
      // Personal data (docs/personal-data.md): production refuses to start without a master
      // key when rules exist.
      personalData: {
        rules: config.personalDataRules,
        keyProvider: config.masterKey ? new StaticKeyProvider(config.masterKey) : undefined,
        keyStoreUrl: config.keyStoreUrl,
        production: config.env === 'production' || process.env.NODE_ENV === 'production',
      },
    },
    // The access rules of ORDINAL_ACCESS_RULES: the one AccessRules every path asks.
    access: { rules: config.access.rules },
    // A projection behind the head with no progress for this long shows as stuck in /health.
    subscriptions: {
      stuckAfterMs: config.stuckAfterMs,
      groupMemberTimeoutMs: config.groupMemberTimeoutMs,
      groupMemberRetentionMs: config.groupMemberRetentionMs,
      consumerGroups: config.consumerGroups,
    },
  };
}
