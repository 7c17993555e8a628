import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource, type QueryRunner } from 'typeorm';
import type { AppendRequest, AppendResult, StoredMessage } from '../message.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import { resolveLogOptions, type LogModuleOptions, type ResolvedLogOptions } from '../log-options.js';
import {
  DatabaseUnavailableError,
  InvalidMessageError,
  OrdinalError,
  WriterClosedError,
  WriterOverloadedError,
} from '../errors/index.js';
import { appendBatch, execute, insertConcurrent, insertMessages, lockCategories, lockLog, readWriteState } from '../sql/index.js';
import { categoryLockKeys } from './category-locks.js';
import { toPosition, toStoredMessage, type MessageRow } from '../row-mapper.js';
import { DuplicateWindow } from './duplicate-window.js';
import { planFlush, type FlushPlan, type WriteState } from './flush-plan.js';
import { prepareMessage, type PendingAppend } from './pending-append.js';
import { driverError, isConnectionError, isDataError } from './pg-errors.js';

/** Called with every committed batch, in index order, after the commit. */
export type CommitListener = (messages: StoredMessage[]) => void;

/** Figures of one flush, for metrics. */
export interface FlushStats {
  appends: number;
  messages: number;
  durationMs: number;
  ok: boolean;
}

class CommitOutcomeUnknown extends Error {}

/** Any failure to obtain a connection means the database is unavailable, whatever its code. */
class ConnectFailed extends Error {
  readonly code = 'ECONNREFUSED';
}

/**
 * The log's single write path (L2, L3): appends queue in memory and are flushed in one
 * transaction per batch, one flush in flight at a time. Under the global advisory lock a
 * flush reads the head, resolves version checks and idempotency keys, inserts every row in
 * one `unnest` statement and commits; then its batch goes to the commit listeners (the live
 * router) and NOTIFY tells other processes. A failed flush commits nothing, so its numbers are
 * used again by the next one; several processes can write to one database.
 */
@Injectable()
export class LogWriter implements OnApplicationShutdown {
  private readonly logger = new Logger(LogWriter.name);
  private readonly options: ResolvedLogOptions;
  private readonly queue: PendingAppend[] = [];
  private queuedMessages = 0;
  private scheduled = false;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  private readonly commitListeners = new Set<CommitListener>();
  private readonly flushListeners = new Set<(stats: FlushStats) => void>();
  readonly window: DuplicateWindow;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) options: LogModuleOptions,
  ) {
    this.options = resolveLogOptions(options);
    this.window = new DuplicateWindow(this.options.duplicateWindow);
  }

  /** Queues an append; resolves once its messages are committed (or rejects with why not). */
  append(request: AppendRequest): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new WriterClosedError());
    const count = request.messages.length;
    if (count === 0) return Promise.resolve({ entries: [] });
    if (this.queuedMessages + count > this.options.maxQueuedMessages) {
      return Promise.reject(new WriterOverloadedError(this.queuedMessages));
    }
    const prepared = request.messages.map(prepareMessage);
    const bytes = prepared.reduce((sum, p) => sum + p.bodyJson.length + (p.metadataJson?.length ?? 0), 0);
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ request, prepared, bytes, resolve, reject });
      this.queuedMessages += count;
      this.schedule();
    });
  }

  /** Listens to committed batches; returns the function that stops listening. */
  onCommit(listener: CommitListener): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /** Listens to flush figures (metrics); returns the function that stops listening. */
  onFlush(listener: (stats: FlushStats) => void): () => void {
    this.flushListeners.add(listener);
    return () => this.flushListeners.delete(listener);
  }

  /** Messages waiting for a flush. */
  get queued(): number {
    return this.queuedMessages;
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    if (this.inFlight === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // Let every request parsed in this turn of the event loop join the next flush.
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /**
   * Starts flushes while the mode allows: one at a time in gapless mode (the log lock would
   * serialise them anyway), several in concurrent mode (they serialise per category only).
   */
  private pump(): void {
    const limit = this.options.ordering === 'concurrent' ? this.options.maxConcurrentFlushes : 1;
    while (this.inFlight < limit && this.queue.length > 0) {
      const batch = this.take();
      this.inFlight += 1;
      void this.flush(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
        if (this.inFlight === 0 && this.queue.length === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
      });
    }
  }

  private take(): PendingAppend[] {
    const batch: PendingAppend[] = [];
    let messages = 0;
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0];
      const count = next.prepared.length;
      if (batch.length > 0 && (messages + count > this.options.maxBatchMessages || bytes + next.bytes > this.options.maxBatchBytes)) break;
      batch.push(this.queue.shift()!);
      messages += count;
      bytes += next.bytes;
    }
    this.queuedMessages -= messages;
    return batch;
  }

  /** Writes one batch and settles every append in it; never throws. */
  private async flush(batch: PendingAppend[]): Promise<void> {
    const started = performance.now();
    const messages = batch.reduce((n, p) => n + p.prepared.length, 0);
    let ok = false;
    try {
      const plan = await this.writeWithRetry(batch);
      ok = true;
      this.window.record(plan.windowHashes);
      plan.outcomes.forEach((outcome, i) =>
        outcome.ok ? batch[i].resolve({ entries: outcome.entries, streamVersion: outcome.streamVersion }) : batch[i].reject(outcome.error),
      );
      if (plan.created.length > 0) this.announce(plan.created);
    } catch (error) {
      if (isDataError(error) && batch.length > 1) {
        // One append's bad data must not fail its neighbours: write each on its own.
        for (const pending of batch) await this.flush([pending]);
        return;
      }
      const failure = this.toLibraryError(error);
      for (const pending of batch) pending.reject(failure);
    } finally {
      const stats = { appends: batch.length, messages, durationMs: performance.now() - started, ok };
      for (const listener of this.flushListeners) listener(stats);
    }
  }

  private async writeWithRetry(batch: PendingAppend[]): Promise<FlushPlan> {
    try {
      return await this.write(batch);
    } catch (error) {
      // A connection lost before COMMIT was sent committed nothing: one retry on a fresh one.
      if (error instanceof CommitOutcomeUnknown || !isConnectionError(error)) throw error;
      this.logger.warn(`Flush of ${batch.length} appends lost its connection (${driverError(error).message}); retrying once`);
      return await this.write(batch);
    }
  }

  private write(batch: PendingAppend[]): Promise<FlushPlan> {
    if (this.options.ordering === 'concurrent') return this.writeConcurrent(batch);
    const needsChecks = batch.some((p) => p.request.stream || p.prepared.some((m) => m.message.idempotencyKey));
    return needsChecks ? this.writeChecked(batch) : this.writeSimple(batch);
  }

  /**
   * Concurrent mode (L4): the transaction takes its id first, then the advisory locks of its
   * categories in sorted order (MessageDB's rule: one category's positions commit in order),
   * then checks, and draws positions from the sequence inside the INSERT, after the table
   * lock — which is what lets a reader tell which transactions could still fill a hole.
   */
  private async writeConcurrent(batch: PendingAppend[]): Promise<FlushPlan> {
    const runner = await this.connect();
    let commitSent = false;
    try {
      await runner.startTransaction();
      const [{ now }] = await execute<{ now: Date }>(runner, lockCategories(categoryLockKeys(batch)));
      const needsChecks = batch.some((p) => p.request.stream || p.prepared.some((m) => m.message.idempotencyKey));
      const state = needsChecks
        ? await this.readState(runner, batch, 0, now)
        : { head: 0, now: now.toISOString(), repeats: new Map(), streams: new Map() };
      const plan = planFlush(batch, state, this.window);
      if (plan.created.length > 0) {
        const [{ indices }] = await execute<{ indices: (string | number)[] }>(runner, insertConcurrent(plan.rows, plan.streamHeads));
        const sorted = indices.map(toPosition).sort((a, b) => a - b);
        plan.created.forEach((message, i) => {
          message.id = sorted[i];
        });
        plan.head = sorted[sorted.length - 1];
      }
      commitSent = true;
      await runner.commitTransaction();
      return plan;
    } catch (error) {
      if (runner.isTransactionActive && !commitSent) await runner.rollbackTransaction().catch(() => undefined);
      if (commitSent && isConnectionError(error)) throw new CommitOutcomeUnknown(driverError(error).message);
      throw error;
    } finally {
      await runner.release().catch(() => undefined);
    }
  }

  /**
   * No version checks, no keys: the whole flush is one statement (lock, head, insert,
   * notify) in autocommit, one round trip. Sending it is sending the commit, so a
   * connection lost after that leaves the outcome unknown.
   */
  private async writeSimple(batch: PendingAppend[]): Promise<FlushPlan> {
    const plan = planFlush(batch, { head: 0, now: '', repeats: new Map(), streams: new Map() }, this.window);
    if (plan.created.length === 0) return plan;
    const runner = await this.connect();
    try {
      const [row] = await execute<{ base: string; now: Date }>(runner, appendBatch(plan.rows)).catch((error: unknown) => {
        throw isConnectionError(error) ? new CommitOutcomeUnknown(driverError(error).message) : error;
      });
      const base = toPosition(row.base);
      const createdAt = row.now.toISOString();
      for (const message of plan.created) {
        message.id += base;
        message.createdAt = createdAt;
      }
      plan.head += base;
      return plan;
    } finally {
      await runner.release().catch(() => undefined);
    }
  }

  /** Version checks or idempotency keys: lock and read under an explicit transaction first. */
  private async writeChecked(batch: PendingAppend[]): Promise<FlushPlan> {
    const runner = await this.connect();
    let commitSent = false;
    try {
      await runner.startTransaction();
      const [{ head, now }] = await execute<{ head: string; now: Date }>(runner, lockLog());
      const state = await this.readState(runner, batch, toPosition(head), now);
      const plan = planFlush(batch, state, this.window);
      if (plan.created.length > 0) await execute(runner, insertMessages(plan.rows, plan.streamHeads, plan.head));
      commitSent = true;
      await runner.commitTransaction();
      return plan;
    } catch (error) {
      if (runner.isTransactionActive && !commitSent) await runner.rollbackTransaction().catch(() => undefined);
      if (commitSent && isConnectionError(error)) throw new CommitOutcomeUnknown(driverError(error).message);
      throw error;
    } finally {
      await runner.release().catch(() => undefined);
    }
  }

  private async connect(): Promise<QueryRunner> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect().catch((error: unknown) => {
      throw new ConnectFailed(driverError(error).message, { cause: error });
    });
    return runner;
  }

  private async readState(runner: QueryRunner, batch: PendingAppend[], head: number, now: Date): Promise<WriteState> {
    const keys = new Set<string>();
    const streams = new Set<string>();
    for (const pending of batch) {
      if (pending.request.stream) streams.add(pending.request.stream.streamId);
      for (const p of pending.prepared) if (p.message.idempotencyKey) keys.add(p.message.idempotencyKey);
    }
    const [row] = await execute<{ repeats: MessageRow[]; streams: Record<string, string> }>(
      runner,
      readWriteState([...keys], [...streams]),
    );
    return {
      head,
      now: now.toISOString(),
      repeats: new Map(row.repeats.map((r) => [r.idempotency_key!, toStoredMessage(r)])),
      streams: new Map(Object.entries(row.streams).map(([id, v]) => [id, toPosition(v)])),
    };
  }

  private announce(created: StoredMessage[]): void {
    for (const listener of this.commitListeners) {
      try {
        listener(created);
      } catch (error) {
        this.logger.error(`Commit listener failed after index ${created[created.length - 1].id}: ${String(error)}`);
      }
    }
  }

  private toLibraryError(error: unknown): OrdinalError {
    if (error instanceof OrdinalError) return error;
    if (error instanceof CommitOutcomeUnknown) {
      return new DatabaseUnavailableError(
        'The database connection was lost while committing; the outcome is unknown. Retry with an idempotency key',
        true,
        { cause: error },
      );
    }
    if (isConnectionError(error)) {
      return new DatabaseUnavailableError(`The database is unavailable (${driverError(error).message}); retry later`, false, { cause: error });
    }
    if (isDataError(error)) {
      return new InvalidMessageError(`The database rejected the message: ${driverError(error).message}`, { cause: error });
    }
    this.logger.error(`Flush failed: ${driverError(error).message}`);
    return new OrdinalError('append_failed', `The append failed: ${driverError(error).message}`, { cause: error });
  }
}
