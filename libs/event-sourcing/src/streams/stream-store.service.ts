import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  InvalidMessageError,
  LogWriter,
  type CorrelationContext,
  type ExpectedVersion,
} from '@ordinal/log';
import { execute, hasNulEscape, toPosition } from '@ordinal/pg';
import { EVENT_SOURCING_OPTIONS } from '../event-sourcing.constants.js';
import type { ResolvedEventSourcingOptions } from '../event-sourcing-options.js';
import { SnapshotVersionExceedsStreamError } from '../errors/index.js';
import {
  readSnapshot,
  readStreamEvents,
  readStreamSlice,
  readStreamVersion,
  saveSnapshot,
  toRecordedEvents,
  toStreamEvents,
  type EventTuple,
  type SaveSnapshotRow,
  type SnapshotRow,
  type StreamPageRow,
  type StreamSliceRow,
} from '../sql/index.js';
import { assertStreamId } from './stream-id.js';
import { assertExpectedVersion, assertVersion } from './versions.js';
import { guardDatabase } from './guard-database.js';
import type {
  AppendedEvents,
  NewStreamEvent,
  ReadStreamOptions,
  RecordedEvent,
  Snapshot,
  StreamEvent,
  StreamRead,
  StreamSlice,
} from './stream-event.js';

/**
 * Aggregate streams on the log: appends go through the group-commit `LogWriter`
 * (version checked inside its locked transaction), reads page by (stream_id, stream_version),
 * versions come from the `streams` heads table, snapshots from `snapshots`. Works with raw
 * events; the typed domain API is `AggregateRepository`.
 */
@Injectable()
export class StreamStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly writer: LogWriter,
    @Inject(EVENT_SOURCING_OPTIONS) private readonly options: ResolvedEventSourcingOptions,
  ) {}

  /**
   * Appends events atomically with contiguous versions and indices. `expectedVersion` is the
   * version the stream must be at (0 = must not exist), `'no_stream'` or `'any'`; a mismatch
   * rejects with `VersionConflictError`.
   */
  async append(
    streamId: string,
    expectedVersion: ExpectedVersion,
    events: NewStreamEvent[],
    correlation?: CorrelationContext | null,
  ): Promise<AppendedEvents> {
    assertStreamId(streamId);
    assertExpectedVersion(expectedVersion);
    if (events.length === 0) throw new InvalidMessageError('An append needs at least one event');
    for (const e of events) {
      if (typeof e.eventType !== 'string' || e.eventType.length === 0)
        throw new InvalidMessageError('Every event needs an eventType');
    }
    const result = await this.writer.append({
      stream: { streamId, expectedVersion },
      skipDuplicateWindow: true,
      correlation,
      messages: events.map((e) => ({
        messageType: e.eventType,
        body: e.data,
        metadata: e.metadata ?? null,
        schemaVersion: e.schemaVersion ?? 1,
        correlationId: e.correlationId ?? null,
        causationId: e.causationId ?? null,
      })),
    });
    const messages = result.entries.flatMap((entry) =>
      entry.status === 'duplicate' ? [] : [entry.message],
    );
    return {
      streamId,
      version: result.streamVersion ?? 0,
      firstIndex: messages[0].id,
      lastIndex: messages[messages.length - 1].id,
      messages,
    };
  }

  /** The stream's current version, 0 when it has no events (an index lookup on the heads table). */
  async version(streamId: string): Promise<number> {
    assertStreamId(streamId);
    return guardDatabase(async () => {
      const [row] = await execute<{ version: string }>(
        this.dataSource.manager,
        readStreamVersion(streamId),
      );
      return toPosition(row.version);
    });
  }

  /**
   * The start of a read in one round trip: the stream's version, its newest snapshot at a
   * version >= `fromVersion` (when `withSnapshot`), and up to `limit` events after it.
   * A snapshot above the version throws `SnapshotVersionExceedsStreamError`.
   */
  async slice(
    streamId: string,
    fromVersion: number,
    withSnapshot: boolean,
    limit = this.options.readPageSize,
  ): Promise<StreamSlice> {
    assertVersion('fromVersion', fromVersion);
    return this.sliceOf(streamId, fromVersion, withSnapshot, limit, false);
  }

  /** Events with `afterVersion < version <= toVersion`, one query per page, lazily. */
  pages(
    streamId: string,
    afterVersion: number,
    toVersion: number,
    pageSize = this.options.readPageSize,
  ): AsyncGenerator<RecordedEvent[]> {
    return this.pagesOf(streamId, afterVersion, toVersion, pageSize, false);
  }

  /** Reads a stream (Cursus READ_STREAM): the newest usable snapshot plus the events after it. */
  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StreamRead> {
    const fromVersion = options.fromVersion ?? 1;
    assertVersion('fromVersion', fromVersion);
    const limit = options.limit ?? Number.MAX_SAFE_INTEGER;
    const first = await this.sliceOf<StreamEvent>(
      streamId,
      fromVersion,
      options.snapshot ?? true,
      Math.min(limit, this.options.readPageSize),
      true,
    );
    const events = first.events;
    const after =
      events.length > 0
        ? events[events.length - 1].version
        : first.snapshot
          ? first.snapshot.version
          : fromVersion - 1;
    const to = Math.min(first.version, after + (limit - events.length));
    if (events.length === Math.min(limit, this.options.readPageSize)) {
      for await (const page of this.pagesOf<StreamEvent>(
        streamId,
        after,
        to,
        this.options.readPageSize,
        true,
      ))
        events.push(...page);
    }
    return { streamId, version: first.version, snapshot: first.snapshot, events };
  }

  private async sliceOf<E extends RecordedEvent>(
    streamId: string,
    fromVersion: number,
    withSnapshot: boolean,
    limit: number,
    details: boolean,
  ): Promise<StreamSlice<E>> {
    assertStreamId(streamId);
    const [row] = await guardDatabase(() =>
      execute<StreamSliceRow>(
        this.dataSource.manager,
        readStreamSlice(streamId, fromVersion, withSnapshot, limit, details),
      ),
    );
    const version = toPosition(row.version);
    const events = (
      details
        ? toStreamEvents(row.events as EventTuple[])
        : toRecordedEvents(row.events as EventTuple[])
    ) as E[];
    if (row.snapshot_version === null) return { version, snapshot: null, events };
    const snapshot: Snapshot = {
      version: toPosition(row.snapshot_version),
      state: row.snapshot_state,
      schemaVersion: row.snapshot_schema_version ?? 1,
      createdAt: new Date(row.snapshot_created_at!).toISOString(),
    };
    if (snapshot.version > version)
      throw new SnapshotVersionExceedsStreamError(streamId, snapshot.version, version);
    return { version, snapshot, events };
  }

  private async *pagesOf<E extends RecordedEvent>(
    streamId: string,
    afterVersion: number,
    toVersion: number,
    pageSize: number,
    details: boolean,
  ): AsyncGenerator<E[]> {
    let after = afterVersion;
    while (after < toVersion) {
      const limit = Math.min(pageSize, toVersion - after);
      const [row] = await guardDatabase(() =>
        execute<StreamPageRow>(
          this.dataSource.manager,
          readStreamEvents(streamId, after, toVersion, limit, details),
        ),
      );
      const tuples = row.events as EventTuple[];
      if (tuples.length === 0) return;
      const page = (details ? toStreamEvents(tuples) : toRecordedEvents(tuples)) as E[];
      yield page;
      after = page[page.length - 1].version;
      if (tuples.length < limit) return;
    }
  }

  /** Saves a snapshot at `version` (<= the current version, else `SnapshotVersionExceedsStreamError`). */
  async saveSnapshot(
    streamId: string,
    version: number,
    state: unknown,
    schemaVersion = 1,
  ): Promise<Snapshot> {
    assertStreamId(streamId);
    assertVersion('version', version);
    const stateJson = JSON.stringify(state);
    if (stateJson === undefined) throw new InvalidMessageError('A snapshot state must be JSON');
    if (hasNulEscape(stateJson))
      throw new InvalidMessageError(
        "A snapshot state must not hold a NUL character (\\u0000): PostgreSQL's jsonb cannot store it",
      );
    const [row] = await guardDatabase(() =>
      execute<SaveSnapshotRow>(
        this.dataSource.manager,
        saveSnapshot(streamId, version, stateJson, schemaVersion),
      ),
    );
    if (row.created_at === null)
      throw new SnapshotVersionExceedsStreamError(streamId, version, toPosition(row.current));
    return { version, state, schemaVersion, createdAt: new Date(row.created_at).toISOString() };
  }

  /** The newest snapshot of a stream, or null. */
  async readSnapshot(streamId: string): Promise<Snapshot | null> {
    assertStreamId(streamId);
    const [row] = await guardDatabase(() =>
      execute<SnapshotRow>(this.dataSource.manager, readSnapshot(streamId)),
    );
    if (!row) return null;
    return {
      version: toPosition(row.version),
      state: row.state,
      schemaVersion: row.schema_version,
      createdAt: new Date(row.created_at).toISOString(),
    };
  }
}
