import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import type { Ordering } from '../log-options.js';
import type { ArchivedSegments } from '../archive/archived-segments.service.js';
import {
  appendBatch,
  appendConcurrent,
  appendConcurrentStreams,
  insertConcurrent,
  insertMessages,
  lockCategories,
  lockCategoriesAndTenants,
  lockLog,
  readWriteState,
} from '../sql/index.js';
import { executeOn, executePrepared, toPosition, type PgConnection } from '@ordinal/pg';
import { toStoredMessage, type MessageRow } from '../row-mapper.js';
import { batchTenants, categoryLockKeys, tenantLockKeys } from './category-locks.js';
import type { DuplicateWindow } from './duplicate-window.js';
import { planFlush, type FlushPlan, type StreamState, type WriteState } from './flush-plan.js';
import type { PendingAppend } from './pending-append.js';
import { driverError, isConnectionError, isQueryTimeout } from '@ordinal/pg';

/** The connection was lost, or the answer did not come in time, after the commit was sent: nobody knows whether it committed. */
export class CommitOutcomeUnknown extends Error {}

/** The answer to a statement before COMMIT did not come in time; the connection was dropped, so nothing commits. */
export class QueryTimedOut extends Error {}

/** Any failure to obtain a connection means the database is unavailable, whatever its code. */
export class ConnectFailed extends Error {
  readonly code = 'ECONNREFUSED';
}

const BEGIN = { text: 'BEGIN', values: [] };
const COMMIT = { text: 'COMMIT', values: [] };
const ROLLBACK = { text: 'ROLLBACK', values: [] };

const needsChecks = (batch: PendingAppend[]) =>
  batch.some(
    (p) =>
      p.request.stream ||
      p.request.tenant !== undefined ||
      p.prepared.some((m) => m.message.idempotencyKey),
  );

/**
 * `any` needs the current version: only the checked path knows it. So must a tenant's deletion
 * (docs/tenants.md#deleting-a-tenant): a batch of tenants' messages takes the checked path,
 * whatever else it holds; a batch of no tenant pays nothing for it. Idempotency keys do not:
 * the one statement checks that none is stored, and a stored one (a resend) sends the flush to
 * the checked path, which answers its repeat.
 */
const needsReads = (batch: PendingAppend[]) =>
  batch.some(
    (p) =>
      p.request.tenant !== undefined ||
      p.request.stream?.expectedVersion === 'any' ||
      p.request.stream?.expectedVersion === 'stream_exists' ||
      p.request.delete !== undefined,
  );

/** The version each stream must be at for the batch as queued: its first append's expectation. */
function expectations(batch: PendingAppend[]): Map<string, number> {
  const expected = new Map<string, number>();
  for (const { request } of batch) {
    const stream = request.stream;
    if (!stream || expected.has(stream.streamId)) continue;
    expected.set(
      stream.streamId,
      stream.expectedVersion === 'no_stream' ? 0 : (stream.expectedVersion as number),
    );
  }
  return expected;
}

/** What an optimistic plan assumes: every stream live at the version its first append expects. */
const assumedState = (assumed: Map<string, number>): WriteState => ({
  head: 0,
  now: '',
  repeats: new Map(),
  streams: new Map(
    [...assumed].map(([id, version]) => [id, { version, state: 'live', deletedThrough: 0 }]),
  ),
});

/**
 * The optimistic statement read an older snapshot of a stream head than the lock let it see,
 * or another flush stored one of its idempotency keys meanwhile (concurrent mode: flushes of
 * other categories do not wait for its locks).
 */
const isOptimisticRace = (error: unknown) => {
  const e =
    (error as { driverError?: { code?: string; constraint?: string } })?.driverError ??
    (error as { code?: string; constraint?: string });
  return (
    e?.code === '23505' &&
    (e?.constraint === 'messages_stream_version_uq' ||
      e?.constraint === 'messages_idempotency_key_uq')
  );
};

/**
 * How one flush reaches PostgreSQL, by mode and by what the batch must check. Each returns
 * the plan it committed (indices filled in) or throws; none settles the appends.
 */
export class FlushStrategies {
  constructor(
    private readonly dataSource: DataSource,
    private readonly ordering: Ordering,
    private readonly window: DuplicateWindow,
    private readonly archived: ArchivedSegments,
  ) {}

  /**
   * Writes the batch. `deadline` (a `performance.now()` time, or null): every statement that
   * may wait (for a lock, say) is given what is left until then as its query timeout, so the
   * flush answers by the deadline whatever it waits for; COMMIT and ROLLBACK keep the pool's.
   */
  write(batch: PendingAppend[], deadline: number | null = null): Promise<FlushPlan> {
    if (this.ordering === 'concurrent') return this.concurrent(batch, deadline);
    return needsReads(batch) ? this.checked(batch, deadline) : this.optimistic(batch, deadline);
  }

  /**
   * Gapless, no tenant, no `any`: the whole flush is one statement in autocommit (lock, head,
   * version assertion, keys check, insert, notify), planned as if every stream were at the
   * version its first append expects and no key were stored. If one is not, or one is, nothing
   * changed and the checked path decides each append's outcome. Sending the statement is sending the commit, so a connection lost
   * after that leaves the outcome unknown.
   */
  private async optimistic(batch: PendingAppend[], deadline: number | null): Promise<FlushPlan> {
    const assumed = expectations(batch);
    const plan = planFlush(batch, assumedState(assumed), this.window);
    if (plan.created.length === 0) return plan;
    const lease = await this.lease(deadline);
    let row: { ok: boolean; base: string | null; now: Date };
    try {
      const statement = appendBatch(
        plan.rows,
        { streamId: [...assumed.keys()], expected: [...assumed.values()] },
        plan.streamHeads,
      );
      [row] = await executePrepared<typeof row>(
        lease.connection,
        'ordinal_append_batch',
        statement,
      ).catch((error: unknown) => {
        if (isOptimisticRace(error)) return [{ ok: false, base: null, now: new Date() }];
        if (!isConnectionError(error) && !isQueryTimeout(error)) throw error;
        lease.broken ??= error;
        throw new CommitOutcomeUnknown(driverError(error).message);
      });
    } finally {
      lease.release();
    }
    if (!row.ok || row.base === null) return this.checked(batch, deadline);
    const base = toPosition(row.base);
    const createdAt = row.now.toISOString();
    for (const message of plan.created) {
      message.id += base;
      message.createdAt = createdAt;
    }
    plan.head += base;
    return plan;
  }

  /** Gapless with tenants, `any` versions, a stored idempotency key, or a stream not where the optimistic plan assumed: lock and read first, in a transaction. */
  private checked(batch: PendingAppend[], deadline: number | null): Promise<FlushPlan> {
    return this.inTransaction(deadline, async (connection) => {
      const [{ head, now }] = await executeOn<{ head: string; now: Date }>(connection, lockLog());
      const plan = planFlush(
        batch,
        await this.readState(connection, batch, toPosition(head), now),
        this.window,
      );
      if (plan.created.length > 0)
        await executeOn(
          connection,
          insertMessages(plan.rows, plan.streamHeads, plan.head, plan.stateChanges),
        );
      return plan;
    });
  }

  /**
   * Concurrent mode (L4): the transaction takes its id first, then the advisory locks of its
   * categories in sorted order (MessageDB's rule: one category's positions commit in order),
   * then checks, and draws positions from the sequence inside the INSERT, after the table
   * lock — which is what lets a reader tell which transactions could still fill a hole.
   * Without streams or idempotency keys that is one statement; with streams at exact expected
   * versions or keys, one statement that falls back to the transaction; otherwise the
   * transaction.
   */
  private concurrent(batch: PendingAppend[], deadline: number | null): Promise<FlushPlan> {
    if (!needsChecks(batch)) return this.concurrentAtOnce(batch, deadline);
    if (!needsReads(batch)) return this.concurrentOptimistic(batch, deadline);
    return this.concurrentChecked(batch, deadline);
  }

  /**
   * Concurrent mode with `any` or `stream_exists` versions, deletes, tenants' messages, a stored
   * idempotency key, or a stream not where the optimistic plan assumed: locks, reads and inserts in a
   * transaction. A batch of tenants' messages holds their tenant locks shared from before its
   * read to its commit (a tenant's deletion takes them exclusive).
   */
  private concurrentChecked(batch: PendingAppend[], deadline: number | null): Promise<FlushPlan> {
    return this.inTransaction(deadline, async (connection) => {
      const tenantKeys = tenantLockKeys(batch);
      const [{ now }] = await executeOn<{ now: Date }>(
        connection,
        tenantKeys.length === 0
          ? lockCategories(categoryLockKeys(batch))
          : lockCategoriesAndTenants(categoryLockKeys(batch), tenantKeys),
      );
      const state = await this.readState(connection, batch, 0, now);
      const plan = planFlush(batch, state, this.window);
      if (plan.created.length === 0) return plan;
      const [{ indices }] = await executeOn<{ indices: (string | number)[] }>(
        connection,
        insertConcurrent(plan.rows, plan.streamHeads, plan.stateChanges),
      );
      const sorted = indices.map(toPosition).sort((a, b) => a - b);
      plan.created.forEach((message, i) => {
        message.id = sorted[i];
      });
      plan.head = sorted[sorted.length - 1];
      return plan;
    });
  }

  /**
   * Concurrent mode, streams at exact expected versions or idempotency keys (the cases gapless
   * mode's `optimistic` covers): the flush is one statement in autocommit,
   * `appendConcurrentStreams`, planned as if every stream were at the version its first append
   * expects — id, category locks, a check of the streams in a fresh snapshot, then positions
   * drawn inside the INSERT and the stream heads moved. If a stream is elsewhere (or deleted,
   * tombstoned, or has a retention that hides on append), nothing changed and no position was
   * drawn, and the transactional path decides each append's outcome; so it does if the stream
   * version index refuses a row. Sending the statement is sending the commit, so a connection
   * lost after that leaves the outcome unknown.
   */
  private async concurrentOptimistic(
    batch: PendingAppend[],
    deadline: number | null,
  ): Promise<FlushPlan> {
    const assumed = expectations(batch);
    const plan = planFlush(batch, assumedState(assumed), this.window);
    if (plan.created.length === 0) return plan;
    const lease = await this.lease(deadline);
    let row: { ok: boolean; indices: string[] | null; now: Date };
    try {
      [row] = await executePrepared<typeof row>(
        lease.connection,
        'ordinal_append_concurrent_streams',
        appendConcurrentStreams(
          plan.rows,
          categoryLockKeys(batch),
          { streamId: [...assumed.keys()], expected: [...assumed.values()] },
          plan.streamHeads,
        ),
      ).catch((error: unknown) => {
        if (isOptimisticRace(error)) return [{ ok: false, indices: null, now: new Date() }];
        if (!isConnectionError(error) && !isQueryTimeout(error)) throw error;
        lease.broken ??= error;
        throw new CommitOutcomeUnknown(driverError(error).message);
      });
    } finally {
      lease.release();
    }
    if (!row.ok || row.indices === null) return this.concurrentChecked(batch, deadline);
    const indices = row.indices;
    const createdAt = row.now.toISOString();
    plan.created.forEach((message, i) => {
      message.id = toPosition(indices[i]);
      message.createdAt = createdAt;
    });
    plan.head = plan.created[plan.created.length - 1].id;
    return plan;
  }

  /**
   * Concurrent mode without streams or idempotency keys (nothing to read under the locks):
   * the flush is one statement in autocommit, `appendConcurrent` — the same order of id,
   * locks and positions as the transactional path, in one round trip and one commit. Sending
   * the statement is sending the commit, so a connection lost after that leaves the outcome
   * unknown.
   */
  private async concurrentAtOnce(
    batch: PendingAppend[],
    deadline: number | null,
  ): Promise<FlushPlan> {
    const plan = planFlush(
      batch,
      { head: 0, now: '', repeats: new Map(), streams: new Map() },
      this.window,
    );
    if (plan.created.length === 0) return plan;
    const lease = await this.lease(deadline);
    let row: { indices: string[]; now: Date };
    try {
      [row] = await executePrepared<typeof row>(
        lease.connection,
        'ordinal_append_concurrent',
        appendConcurrent(plan.rows, categoryLockKeys(batch)),
      ).catch((error: unknown) => {
        if (!isConnectionError(error) && !isQueryTimeout(error)) throw error;
        lease.broken ??= error;
        throw new CommitOutcomeUnknown(driverError(error).message);
      });
    } finally {
      lease.release();
    }
    const createdAt = row.now.toISOString();
    plan.created.forEach((message, i) => {
      message.id = toPosition(row.indices[i]);
      message.createdAt = createdAt;
    });
    plan.head = plan.created[plan.created.length - 1].id;
    return plan;
  }

  /**
   * Runs `work` in a transaction on a leased connection; a connection lost or timed out while
   * committing becomes CommitOutcomeUnknown. A timeout before COMMIT drops the connection (a
   * ROLLBACK would queue behind the statement still running there), so that transaction can
   * never commit: the lease hands it back broken and the pool destroys it.
   */
  private async inTransaction(
    deadline: number | null,
    work: (connection: PgConnection) => Promise<FlushPlan>,
  ): Promise<FlushPlan> {
    const lease = await this.lease(deadline);
    // BEGIN, COMMIT and ROLLBACK wait for nothing: they keep the pool's timeout (a COMMIT cut
    // short would turn a stored flush into an unknown outcome).
    const { connection, untimed } = lease;
    let begun = false;
    let commitSent = false;
    try {
      await executeOn(untimed, BEGIN);
      begun = true;
      const plan = await work(connection);
      commitSent = true;
      await executeOn(untimed, COMMIT);
      return plan;
    } catch (error) {
      if (isQueryTimeout(error) || isConnectionError(error)) lease.broken ??= error;
      else if (begun && !commitSent)
        await executeOn(untimed, ROLLBACK).catch((rollbackError: unknown) => {
          lease.broken ??= rollbackError;
        });
      if (commitSent && (isConnectionError(error) || isQueryTimeout(error)))
        throw new CommitOutcomeUnknown(driverError(error).message);
      if (isQueryTimeout(error))
        throw new QueryTimedOut(driverError(error).message, { cause: error });
      throw error;
    } finally {
      lease.release();
    }
  }

  /**
   * A pooled connection. `connection` gives each statement what is left until `deadline` as its
   * query timeout (at least 1 ms); `untimed` is the same connection with the pool's timeout.
   */
  private async lease(deadline: number | null): Promise<{
    connection: PgConnection;
    untimed: PgConnection;
    broken: unknown;
    release(): void;
  }> {
    const driver = this.dataSource.driver as PostgresDriver;
    // The driver's public pool door: a pg client and the callback that returns it (with an
    // error: destroyed).
    const [connection, giveBack] = (await driver
      .obtainMasterConnection()
      .catch((error: unknown) => {
        throw new ConnectFailed(driverError(error).message, { cause: error });
      })) as [PgConnection, (error?: unknown) => void];
    const timed: PgConnection =
      deadline === null
        ? connection
        : {
            query: <R>(config: Parameters<PgConnection['query']>[0]) =>
              connection.query<R>({
                ...config,
                query_timeout: Math.max(1, Math.ceil(deadline - performance.now())),
              }),
            on: (event, listener) => connection.on(event, listener),
            off: (event, listener) => connection.off(event, listener),
          };
    const lease = {
      connection: timed,
      untimed: connection,
      broken: undefined as unknown,
      release: () => {
        connection.off('error', onError);
        giveBack(lease.broken);
      },
    };
    const onError = (error: Error) => {
      lease.broken ??= error;
    };
    connection.on('error', onError);
    return lease;
  }

  private async readState(
    connection: PgConnection,
    batch: PendingAppend[],
    head: number,
    now: Date,
  ): Promise<WriteState> {
    const keys = new Set<string>();
    const streams = new Set<string>();
    for (const pending of batch) {
      if (pending.request.stream) streams.add(pending.request.stream.streamId);
      for (const p of pending.prepared)
        if (p.message.idempotencyKey) keys.add(p.message.idempotencyKey);
    }
    const [row] = await executeOn<{
      repeats: MessageRow[];
      archived_repeats: string[];
      streams: Record<string, [string, StreamState, string, string | null, string | null]>;
      deleted_tenants?: string[];
    }>(connection, readWriteState([...keys], [...streams], batchTenants(batch)));
    // A key of a message in an archived segment: its row comes from the archive (rare: a
    // resend after the archive age).
    const repeats = [...row.repeats];
    for (const index of row.archived_repeats) {
      const message = await this.archived.message(Number(index));
      if (message) repeats.push(message);
    }
    return {
      head,
      now: now.toISOString(),
      ...(row.deleted_tenants?.length ? { deletedTenants: new Set(row.deleted_tenants) } : {}),
      repeats: new Map(repeats.map((r) => [r.idempotency_key!, toStoredMessage(r)])),
      streams: new Map(
        Object.entries(row.streams).map(
          ([id, [version, state, deletedThrough, truncateBefore, maxCount]]) => [
            id,
            {
              version: toPosition(version),
              state,
              deletedThrough: toPosition(deletedThrough),
              retention:
                truncateBefore === null && maxCount === null
                  ? undefined
                  : {
                      truncateBefore: truncateBefore === null ? null : toPosition(truncateBefore),
                      maxCount: maxCount === null ? null : toPosition(maxCount),
                    },
            },
          ],
        ),
      ),
    };
  }
}
