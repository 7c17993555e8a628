import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  categoryOf,
  InvalidMessageError,
  LogWriter,
  STREAM_DELETED_TYPE,
  StreamDeletedError,
  StreamTombstonedError,
  VersionConflictError,
  type CorrelationContext,
  type DeleteMode,
  type ExpectedVersion,
  type StreamDeletedBody,
  type TombstoneReason,
  PersonalData,
  type PersonalDataRule,
  ArchivedSegments,
  qualify,
  TenantSessions,
  unqualify,
} from '@ordinal/log';
import type { SqlQuery } from '@ordinal/pg';
import { execute, hasNulEscape, toPosition } from '@ordinal/pg';
import { EVENT_SOURCING_OPTIONS } from '../event-sourcing.constants.js';
import type { ResolvedEventSourcingOptions } from '../event-sourcing-options.js';
import { SnapshotVersionExceedsStreamError } from '../errors/index.js';
import {
  readSnapshot,
  readStreamEvents,
  readStreamSlice,
  listStreams,
  saveSnapshot,
  deleteSnapshots,
  readStreamState,
  toRecordedEvents,
  toStreamEvents,
  type EventTuple,
  type SaveSnapshotRow,
  type SnapshotRow,
  type StreamListRow,
  type StreamPageRow,
  type StreamSliceRow,
  type StreamStateRow,
  type StreamWindowRow,
} from '../sql/index.js';
import {
  assertReadableStreamId,
  assertStreamId,
  assertTenant,
  tenantOfStoredId,
} from './stream-id.js';
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
  ListStreamsOptions,
  StreamSummary,
  StreamStatus,
  DeleteStreamOptions,
  DeletedStream,
} from './stream-event.js';

/** Throws the lifecycle error of a deleted or tombstoned stream. */
function assertLive(streamId: string, state: StreamWindowRow['state'], lastVersion: number): void {
  if (state === 'tombstoned') throw new StreamTombstonedError(streamId);
  if (state === 'deleted') throw new StreamDeletedError(streamId, lastVersion);
}

/** Why the versions below `first` are hidden (the window's row). */
function hiddenReason(row: StreamWindowRow): TombstoneReason {
  const floor = toPosition(row.floor);
  if (toPosition(row.first_visible) > floor) return 'expired';
  return floor === toPosition(row.deleted_through) + 1 && floor > 1 ? 'deleted' : 'truncated';
}

/**
 * Aggregate streams on the log: appends go through the group-commit `LogWriter`
 * (version checked inside its locked transaction), reads page by (stream_id, stream_version),
 * versions come from the `streams` heads table, snapshots from `snapshots`. Works with raw
 * events; the typed domain API is `AggregateRepository`.
 *
 * The store injected is that of no tenant; `forTenant('acme')` is tenant `acme`'s
 * (docs/tenants.md): the same methods, on the tenant's own stream ids.
 */
@Injectable()
export class StreamStore {
  /**
   * The tenant whose streams this store reads and writes (`forTenant`), null for the store of
   * no tenant: its stream ids are that tenant's plain ids, stored as `<tenant>/<id>`.
   */
  readonly tenant: string | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly writer: LogWriter,
    @Inject(EVENT_SOURCING_OPTIONS) private readonly options: ResolvedEventSourcingOptions,
    private readonly personal: PersonalData,
    private readonly archived: ArchivedSegments,
    private readonly tenants: TenantSessions,
  ) {}

  /**
   * The store of `tenant`'s streams (docs/tenants.md): the same methods, whose stream ids are
   * the tenant's own (`order-1`, stored as `acme/order-1`), so two tenants' streams of one id
   * have their own versions, deletes, metadata and snapshots. Results name the plain id and
   * the tenant; its stream reads run behind the log's row-level security (`TenantSessions`).
   * `undefined` or null: the store of no tenant (the injected one). A cheap view: take one
   * per request.
   */
  forTenant(tenant?: string | null): StreamStore {
    const root = this.tenant === null ? this : (Object.getPrototypeOf(this) as StreamStore);
    if (tenant === undefined || tenant === null) return root;
    assertTenant(tenant);
    return Object.create(root, {
      tenant: { value: tenant, enumerable: true },
    }) as StreamStore;
  }

  /** The stored form of one of this store's stream ids (`qualify`). */
  private stored(streamId: string): string {
    return qualify(this.tenant, streamId);
  }

  /**
   * Runs a read of the messages of one stream (`stored`: its stored id): a tenant's behind its
   * row-level security (`TenantSessions.read`).
   */
  private readStreamRows<R>(stored: string, query: SqlQuery): Promise<R[]> {
    const tenant = this.tenant;
    return this.archived.readStream<R>(
      tenant === null ? this.dataSource.manager : (read) => this.tenants.read<R>(tenant, read),
      stored,
      query,
    );
  }

  /**
   * Declares the personal data of an event type (`@DomainEvent(…, {personal})`): its events are
   * sealed on append like any message of a ruled type (docs/personal-data.md).
   */
  declarePersonalData(eventType: string, rule: PersonalDataRule): void {
    this.personal.declareRule(eventType, rule);
  }

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
    // The writer qualifies a tenant's stream id (and errors name it plain).
    const result = await this.writer.append({
      stream: { streamId, expectedVersion },
      ...(this.tenant !== null && { tenant: this.tenant }),
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
      tenant: this.tenant,
      version: result.streamVersion ?? 0,
      firstIndex: messages[0].id,
      lastIndex: messages[messages.length - 1].id,
      messages,
    };
  }

  /**
   * Streams in id order (a page of the heads table's primary key): those whose id starts with
   * `prefix`, after `after`; continue with the last id as `after`.
   *
   * A tenant's store lists that tenant's streams only, by their plain ids. The store of no
   * tenant lists every stream, each with its `tenant` (null for none) and its plain id: its
   * `prefix` and `after` are stored ids (`acme/` lists tenant acme's streams), so continue
   * with `qualify(last.tenant, last.streamId)`. Categories match the plain category.
   */
  async list(options: ListStreamsOptions = {}): Promise<StreamSummary[]> {
    const limit = options.limit ?? 100;
    const tenant = this.tenant;
    // A tenant id holds no '/': the qualified prefix is exactly the tenant's streams.
    const prefix = tenant === null ? options.prefix || null : qualify(tenant, options.prefix ?? '');
    const after = options.after ? qualify(tenant, options.after) : null;
    return guardDatabase(async () => {
      const rows = await execute<StreamListRow>(
        this.dataSource.manager,
        listStreams(
          prefix,
          after,
          limit,
          options.categories ?? null,
          options.exceptCategories?.length ? options.exceptCategories : null,
        ),
      );
      return rows.map((r) => {
        const owner = tenant ?? tenantOfStoredId(r.stream_id);
        return {
          streamId: unqualify(owner, r.stream_id),
          tenant: owner,
          version: toPosition(r.version),
          updatedAt: r.updated_at,
        };
      });
    });
  }

  /**
   * The stream's current version, 0 when it has no events (an index lookup on the heads table).
   * A deleted stream throws `StreamDeletedError`, a tombstoned one `StreamTombstonedError`.
   */
  async version(streamId: string): Promise<number> {
    const status = await this.status(streamId);
    assertLive(streamId, status.state, status.version);
    return status.version;
  }

  /** The stream's version and lifecycle state (never throws for a deleted or tombstoned one). */
  async status(streamId: string): Promise<StreamStatus> {
    assertStreamId(streamId);
    const [row] = await guardDatabase(() =>
      execute<StreamStateRow>(this.dataSource.manager, readStreamState(this.stored(streamId))),
    );
    return {
      streamId,
      tenant: this.tenant,
      version: toPosition(row.version),
      state: row.state,
      deletedThrough: toPosition(row.deleted_through),
    };
  }

  /**
   * Deletes a stream (docs/lifecycle.md): `soft` hides its events from stream reads and loads
   * and from every log reader (as tombstones), and a later `no_stream` or `any` append
   * re-creates it at `lastVersion + 1`; `tombstone` ends it for ever. A `$stream-deleted`
   * marker is appended to the log in the same transaction, and its snapshots are deleted.
   * `expectedVersion` (optional) must be the stream's version. Deleting a soft-deleted stream
   * again (soft) changes nothing.
   */
  async delete(
    streamId: string,
    options: DeleteStreamOptions = {},
    correlation?: CorrelationContext | null,
  ): Promise<DeletedStream> {
    const mode: DeleteMode = options.mode ?? 'soft';
    if (mode !== 'soft' && mode !== 'tombstone')
      throw new InvalidMessageError(`mode must be 'soft' or 'tombstone', got '${String(mode)}'`);
    const expected = options.expectedVersion ?? 'any';
    if (expected !== 'any') assertExpectedVersion(expected);
    for (let attempt = 1; ; attempt++) {
      const status = await this.status(streamId);
      if (status.state === 'tombstoned') throw new StreamTombstonedError(streamId);
      if (mode === 'soft' && status.state === 'deleted')
        return { streamId, tenant: this.tenant, mode, lastVersion: status.version, index: null };
      const current = status.state === 'deleted' ? 0 : status.version;
      if (
        expected === 'stream_exists' ? current === 0 : expected !== 'any' && expected !== current
      ) {
        if (status.state === 'deleted') throw new StreamDeletedError(streamId, status.version);
        throw new VersionConflictError(streamId, current, expected);
      }
      const body: StreamDeletedBody = { streamId, mode, lastVersion: status.version };
      try {
        const result = await this.writer.append({
          stream: { streamId, expectedVersion: status.version },
          ...(this.tenant !== null && { tenant: this.tenant }),
          delete: mode,
          skipDuplicateWindow: true,
          correlation,
          messages: [{ messageType: STREAM_DELETED_TYPE, userId: 'system', body }],
        });
        const entry = result.entries[0];
        await guardDatabase(() =>
          execute(this.dataSource.manager, deleteSnapshots(this.stored(streamId), status.version)),
        );
        return {
          streamId,
          tenant: this.tenant,
          mode,
          lastVersion: status.version,
          index: entry.status === 'duplicate' ? null : entry.message.id,
        };
      } catch (error) {
        // Another append moved the stream between the read and the flush: look again (with an
        // exact expected version, the caller's check above fails the second time).
        if (!(error instanceof VersionConflictError) || attempt >= 5) throw error;
      }
    }
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
    return {
      streamId,
      tenant: this.tenant,
      version: first.version,
      snapshot: first.snapshot,
      events,
      hidden: first.hidden,
    };
  }

  private async sliceOf<E extends RecordedEvent>(
    streamId: string,
    fromVersion: number,
    withSnapshot: boolean,
    limit: number,
    details: boolean,
  ): Promise<StreamSlice<E>> {
    assertReadableStreamId(streamId);
    const stored = this.stored(streamId);
    // A tenant's read is behind row-level security, whose role does not read the snapshots
    // table: the newest snapshot is read first, and the slice uses it if its window allows.
    const walled = this.tenant !== null && (await guardDatabase(() => this.tenants.hasWall()));
    const apart = !walled
      ? undefined
      : withSnapshot
        ? await this.snapshotRow(stored, fromVersion)
        : null;
    // Rows of archived segments are read from the archive store (docs/storage.md).
    const [row] = await guardDatabase(() =>
      this.readStreamRows<StreamSliceRow>(
        stored,
        readStreamSlice(
          stored,
          categoryOf(stored),
          fromVersion,
          withSnapshot,
          limit,
          details,
          apart === undefined ? undefined : apart ? toPosition(apart.version) : null,
        ),
      ),
    );
    if (apart && row.snapshot_version !== null) {
      row.snapshot_state = apart.state;
      row.snapshot_schema_version = apart.schema_version;
      row.snapshot_created_at = apart.created_at;
    }
    const version = toPosition(row.version);
    assertLive(streamId, row.state, version);
    const events = (
      details
        ? toStreamEvents(row.events as EventTuple[])
        : await this.personal.revealEvents(toRecordedEvents(row.events as EventTuple[]))
    ) as E[];
    const firstVersion = toPosition(row.first_visible);
    const hidden =
      firstVersion > 1 ? { beforeVersion: firstVersion, reason: hiddenReason(row) } : null;
    if (row.snapshot_version === null) return { version, snapshot: null, events, hidden };
    const snapshot: Snapshot = {
      version: toPosition(row.snapshot_version),
      state: row.snapshot_state,
      schemaVersion: row.snapshot_schema_version ?? 1,
      createdAt: new Date(row.snapshot_created_at!).toISOString(),
    };
    if (snapshot.version > version)
      throw new SnapshotVersionExceedsStreamError(streamId, snapshot.version, version);
    return { version, snapshot, events, hidden };
  }

  private async *pagesOf<E extends RecordedEvent>(
    streamId: string,
    afterVersion: number,
    toVersion: number,
    pageSize: number,
    details: boolean,
  ): AsyncGenerator<E[]> {
    const stored = this.stored(streamId);
    let after = afterVersion;
    while (after < toVersion) {
      const limit = Math.min(pageSize, toVersion - after);
      const [row] = await guardDatabase(() =>
        this.readStreamRows<StreamPageRow>(
          stored,
          readStreamEvents(stored, categoryOf(stored), after, toVersion, limit, details),
        ),
      );
      const tuples = row.events as EventTuple[];
      if (tuples.length === 0) return;
      // Loads (domain code) get personal fields in clear; REST reads decide by the reader's scope.
      const page = (
        details
          ? toStreamEvents(tuples)
          : await this.personal.revealEvents(toRecordedEvents(tuples))
      ) as E[];
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
        saveSnapshot(this.stored(streamId), version, stateJson, schemaVersion),
      ),
    );
    assertLive(streamId, row.state, toPosition(row.current));
    if (row.created_at === null)
      throw new SnapshotVersionExceedsStreamError(streamId, version, toPosition(row.current));
    return { version, state, schemaVersion, createdAt: new Date(row.created_at).toISOString() };
  }

  /** The newest snapshot of a stream, or null. */
  async readSnapshot(streamId: string): Promise<Snapshot | null> {
    const status = await this.status(streamId);
    assertLive(streamId, status.state, status.version);
    const row = await this.snapshotRow(this.stored(streamId), 1);
    if (!row) return null;
    return {
      version: toPosition(row.version),
      state: row.state,
      schemaVersion: row.schema_version,
      createdAt: new Date(row.created_at).toISOString(),
    };
  }

  /** The newest snapshot row of a stream (`stored`: its stored id) at a version >= `fromVersion`. */
  private async snapshotRow(stored: string, fromVersion: number): Promise<SnapshotRow | null> {
    const [row] = await guardDatabase(() =>
      execute<SnapshotRow>(this.dataSource.manager, readSnapshot(stored, fromVersion)),
    );
    return row ?? null;
  }
}
