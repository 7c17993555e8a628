import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  context as otelContext,
  trace,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Span,
} from '@opentelemetry/api';
import { DataSource } from 'typeorm';
import type { AppendRequest, AppendResult, StoredMessage } from '../message.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions } from '../log-options.js';
import {
  InvalidMessageError,
  LogFullError,
  WriterClosedError,
  WriterOverloadedError,
} from '../errors/index.js';
import { DatabaseUnavailableError, OrdinalError, ReadOnlyReplicaError } from '@ordinal/pg';
import { DuplicateWindow } from './duplicate-window.js';
import { PersonalData } from '../personal/personal-data.service.js';
import { ArchivedSegments } from '../archive/archived-segments.service.js';
import { SegmentKeeper } from '../segments/segment-keeper.service.js';
import type { FlushPlan } from './flush-plan.js';
import { CommitOutcomeUnknown, FlushStrategies, QueryTimedOut } from './flush-strategies.js';
import { prepareMessage, type PendingAppend, type PreparedMessage } from './pending-append.js';
import { isTenantId, qualify } from '../tenant.js';
import {
  driverError,
  insufficientResources,
  isConnectionError,
  isDataError,
  isReadOnlyError,
  isSequenceExhausted,
  StorageFullError,
} from '@ordinal/pg';
import { currentCorrelation, type CorrelationContext } from '../trace/correlation-context.js';
import { formatTraceparent } from '../trace/traceparent.js';
import { ATTRIBUTES, SPANS } from '../trace/span-names.js';
import { contextFromTraceparent, ordinalTracer } from '../trace/tracer.js';

/** Ends an append's span with its outcome. */
function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    // A thrown value that is not an Error: its String() is the only description there is.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({
      code: SpanStatusCode.ERROR,
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- as above
      message: error instanceof Error ? error.message : String(error),
    });
  }
  span.end();
}

/**
 * Called with every committed batch after its commit, its messages in index order (and the
 * bytes of each one's body and metadata JSON). In
 * concurrent mode two batches may arrive out of order; the watermark restores the order.
 */
export type CommitListener = (
  messages: StoredMessage[],
  bytes: readonly number[],
  /** Some of them are hidden the moment they commit (their stream's retention): read them back as tombstones. */
  hiddenAtAppend: boolean,
) => void;

/** Figures of one flush, for metrics. */
export interface FlushStats {
  appends: number;
  messages: number;
  durationMs: number;
  ok: boolean;
}

/** The writer's last flush failed for want of disk space. */
export interface StorageFull {
  since: Date;
  /** What the database said (it names the file that could not grow). */
  error: string;
}

/**
 * An append that is sent only when no flush is in flight: an `inOrder` one in either mode (its
 * order is a promise to its source), and a delete in gapless mode (see `pump`).
 */
const runsAlone = (request: AppendRequest, gapless: boolean) =>
  request.inOrder === true || (gapless && request.delete !== undefined);

/** Concurrent mode: messages queued that justify another flush beside those in flight. */
const FILL_MESSAGES = 64;
/** The longest an append waits for company while another flush is in flight (ms). */
const FILL_WAIT_MS = 2;

/**
 * The log's single write path (L2-L4): appends queue in memory and are flushed in one
 * transaction per batch, several flushes in flight at once (serialised by the log lock in
 * PostgreSQL in gapless mode, per category in concurrent mode; FlushStrategies says how each
 * reaches PostgreSQL). After the commit the
 * batch goes to the commit listeners (the live router) and NOTIFY tells other processes. A
 * failed flush commits nothing, so in gapless mode its numbers are used again by the next
 * one; several processes can write to one database.
 */
@Injectable()
export class LogWriter implements OnApplicationShutdown {
  private readonly logger = new Logger(LogWriter.name);
  private readonly queue: PendingAppend[] = [];
  private queuedMessages = 0;
  private scheduled = false;
  private fillTimer: NodeJS.Timeout | null = null;
  private inFlight = 0;
  /**
   * Appends queued that must not be flushed beside another (`runsAlone`), and whether one is
   * being flushed (nothing starts beside it).
   */
  private queuedSerial = 0;
  private exclusiveInFlight = false;
  private idleWaiters: (() => void)[] = [];
  private closed = false;
  private readonly commitListeners = new Set<CommitListener>();
  private readonly flushListeners = new Set<(stats: FlushStats) => void>();
  readonly window: DuplicateWindow;
  private readonly strategies: FlushStrategies;
  private full: StorageFull | null = null;
  private refusedFull = false;

  constructor(
    dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
    private readonly personal: PersonalData,
    private readonly segments: SegmentKeeper,
    archived: ArchivedSegments,
  ) {
    this.window = new DuplicateWindow(this.options.duplicateWindow);
    this.strategies = new FlushStrategies(dataSource, this.options.ordering, this.window, archived);
  }

  /**
   * Queues an append; resolves once its messages are committed (or rejects with why not). A
   * message whose type has a personal-data rule is sealed first (docs/personal-data.md): its
   * personal fields are stored only encrypted, whatever path it came by.
   */
  append(request: AppendRequest): Promise<AppendResult> {
    if (
      this.personal.applies(request) &&
      this.options.role !== 'replica-reader' &&
      // A bad tenant id is refused by `enqueue` before any key is made for it.
      (request.tenant === undefined || isTenantId(request.tenant))
    )
      return this.personal.seal(request).then((sealed) => this.enqueue(sealed));
    return this.enqueue(request);
  }

  private enqueue(request: AppendRequest): Promise<AppendResult> {
    if (this.options.role === 'replica-reader') return Promise.reject(new ReadOnlyReplicaError());
    if (this.closed) return Promise.reject(new WriterClosedError());
    const count = request.messages.length;
    if (count === 0) return Promise.resolve({ entries: [] });
    if (this.queuedMessages + count > this.options.maxQueuedMessages) {
      return Promise.reject(new WriterOverloadedError(this.queuedMessages));
    }
    const { span, lineage } = this.startAppend(request);
    const prepared: PreparedMessage[] = [];
    for (const [i, message] of request.messages.entries()) {
      try {
        prepared.push(prepareMessage(message, lineage));
      } catch (error) {
        // In a batch, say which message: the append is refused as a whole.
        const refused =
          error instanceof InvalidMessageError && count > 1
            ? new InvalidMessageError(`messages.${i}: ${error.message}`)
            : error;
        endSpan(span, refused);
        return Promise.reject(refused);
      }
    }
    if (request.tenant !== undefined) {
      // A tenant's names are stored qualified: from here on, the writer knows only those.
      const tenant = request.tenant;
      if (!isTenantId(tenant)) {
        const refused = new InvalidMessageError(
          `tenant must be 1-63 letters, digits, '_' or '.' (not starting with '_' or '.'), not ${JSON.stringify(tenant)}`,
        );
        endSpan(span, refused);
        return Promise.reject(refused);
      }
      for (const p of prepared) {
        p.tenant = tenant;
        if (p.message.idempotencyKey)
          p.message.idempotencyKey = qualify(tenant, p.message.idempotencyKey);
      }
      if (request.stream)
        request = {
          ...request,
          stream: { ...request.stream, streamId: qualify(tenant, request.stream.streamId) },
        };
    }
    const bytes = prepared.reduce(
      (sum, p) => sum + p.bodyJson.length + (p.metadataJson?.length ?? 0),
      0,
    );
    return new Promise<AppendResult>((resolve, reject) => {
      const settle = {
        resolve: (result: AppendResult) => (endSpan(span), resolve(result)),
        reject: (error: unknown) => (endSpan(span, error), reject(error)),
      };
      this.queue.push({ request, prepared, bytes, span, queuedAt: performance.now(), ...settle });
      this.queuedMessages += count;
      if (this.runsAlone(request)) this.queuedSerial += 1;
      this.schedule();
    });
  }

  /**
   * The append's span (a child of the active span, else of the stored trace context the
   * correlation carries) and the ids its messages get unless they name their own: the
   * context's correlation, else a new one that this append starts.
   */
  private startAppend(request: AppendRequest): { span: Span; lineage: CorrelationContext } {
    const current =
      request.correlation === undefined ? currentCorrelation() : (request.correlation ?? undefined);
    const active = otelContext.active();
    const parent = trace.getSpan(active)
      ? active
      : contextFromTraceparent(current?.traceparent, active);
    const span = ordinalTracer().startSpan(SPANS.append, { kind: SpanKind.PRODUCER }, parent);
    const correlationId = current?.correlationId ?? randomUUID();
    if (span.isRecording()) {
      // Only for a recording span: without an SDK the request path builds nothing it would drop.
      // The correlation is the one the messages get, a new one too (the StartMarker's, say).
      span
        .setAttribute(ATTRIBUTES.appendMessages, request.messages.length)
        .setAttribute(ATTRIBUTES.messagingSystem, 'ordinal')
        .setAttribute(ATTRIBUTES.correlationId, correlationId);
      if (request.stream) span.setAttribute(ATTRIBUTES.streamId, request.stream.streamId);
    }
    const lineage = {
      correlationId,
      causationId: current?.causationId ?? correlationId,
      // Without an SDK the API's span carries its parent's context on: the stored one continues.
      traceparent: formatTraceparent(span.spanContext()) ?? current?.traceparent ?? null,
    };
    return { span, lineage };
  }

  /** Listens to committed batches; returns the function that stops listening. */
  onCommit(listener: CommitListener): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /** Flushes sent and not yet settled (their commit callbacks and flush listeners not yet run). */
  get flushesInFlight(): number {
    return this.inFlight;
  }

  /** Listens to flush figures (metrics); returns the function that stops listening. */
  onFlush(listener: (stats: FlushStats) => void): () => void {
    this.flushListeners.add(listener);
    return () => this.flushListeners.delete(listener);
  }

  /**
   * Whether the database's disk is full for the writer: set when a flush fails for want of
   * space (`StorageFullError`), cleared by the next flush that commits. Null otherwise.
   */
  get storageFull(): StorageFull | null {
    return this.full;
  }

  /**
   * Whether an append was refused because the log is full (`LogFullError`: it would pass
   * index 2^53 − 1). Permanent for the log, so never cleared.
   */
  get logFull(): boolean {
    return this.refusedFull;
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
   * Starts flushes, up to `maxConcurrentFlushes` at once in either mode. In gapless mode
   * PostgreSQL serialises them on the log lock, which each holds from its head update to its
   * commit — on the database's side, where that costs a commit, not a network round trip:
   * a flush sent while another is in flight waits there for its commit and follows at once,
   * instead of waiting here for the answer to travel back (issue 30). The exception is the
   * duplicate window while it is open: a flush is planned against the hashes committed
   * before it, so it waits for the one in flight. And a gapless flush that changes a stream's
   * state (a delete) runs alone: the one-statement flush of plain appends checks stream states
   * in the snapshot its statement began with, so one sent beside a delete could miss it and
   * append to a stream the delete had just ended; alone, every flush after it sees it. An
   * `inOrder` append (the AMQP input queue, the StartMarker) is flushed alone in either mode,
   * so it is stored after everything queued before it and before everything queued after it,
   * whichever connection's statement would have reached the log lock (gapless) or drawn its
   * positions (concurrent: two flushes of different categories draw in any order) first.
   */
  private pump(): void {
    const gapless = this.options.ordering === 'gapless';
    const limit =
      this.exclusiveInFlight || (gapless && this.window.isOpen())
        ? 1
        : this.options.maxConcurrentFlushes;
    while (this.inFlight < limit && this.queue.length > 0) {
      if (this.inFlight > 0 && this.queuedSerial > 0) break;
      if (this.inFlight > 0 && !this.filled()) break;
      const batch = this.take();
      const exclusive = batch.some((p) => this.runsAlone(p.request));
      if (exclusive) this.exclusiveInFlight = true;
      this.inFlight += 1;
      void this.flush(batch).finally(() => {
        this.inFlight -= 1;
        if (exclusive) this.exclusiveInFlight = false;
        // Not at once: first let the answers go out and the requests already waiting in the
        // sockets be read, so they join the next flush (bigger batches under load).
        this.schedule();
        if (this.inFlight === 0 && this.queue.length === 0)
          this.idleWaiters.splice(0).forEach((resolve) => resolve());
      });
    }
  }

  /**
   * With a flush in flight already: whether to start another now. Not for a handful of
   * messages — flushes of one category (in gapless mode, all flushes) wait for each other's
   * lock anyway, and every flush costs a statement, a commit and a watermark step — but once
   * the oldest has waited FILL_WAIT_MS (the flush in flight is slow: a far database, or stuck
   * on a lock that must not hold up other categories longer), or in concurrent mode once
   * FILL_MESSAGES are queued. Otherwise a timer looks again then; a finishing flush pumps
   * sooner.
   */
  private filled(): boolean {
    // Gapless mode waits for the time only: its flushes all take the one log lock, so on a
    // database nearby (a flush shorter than FILL_WAIT_MS) one flush in flight still collects
    // everything queued, as before pipelining; only a slow flush (a far database) gets company.
    if (this.options.ordering === 'concurrent' && this.queuedMessages >= FILL_MESSAGES) return true;
    const waitMs = FILL_WAIT_MS - (performance.now() - (this.queue[0].queuedAt ?? 0));
    if (waitMs <= 0) return true;
    this.fillTimer ??= setTimeout(() => {
      this.fillTimer = null;
      this.pump();
    }, Math.ceil(waitMs));
    return false;
  }

  private runsAlone(request: AppendRequest): boolean {
    return runsAlone(request, this.options.ordering === 'gapless');
  }

  private take(): PendingAppend[] {
    const batch: PendingAppend[] = [];
    let messages = 0;
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0];
      const count = next.prepared.length;
      if (
        batch.length > 0 &&
        (messages + count > this.options.maxBatchMessages ||
          bytes + next.bytes > this.options.maxBatchBytes)
      )
        break;
      batch.push(this.queue.shift()!);
      messages += count;
      bytes += next.bytes;
      if (this.runsAlone(next.request)) this.queuedSerial -= 1;
    }
    this.queuedMessages -= messages;
    return batch;
  }

  /** Writes one batch and settles every append in it; never throws. */
  private async flush(batch: PendingAppend[]): Promise<void> {
    const started = performance.now();
    const messages = batch.reduce((n, p) => n + p.prepared.length, 0);
    const span = ordinalTracer().startSpan(SPANS.flush, { kind: SpanKind.INTERNAL }, ROOT_CONTEXT);
    if (span.isRecording()) {
      span.setAttributes({
        [ATTRIBUTES.flushBatchSize]: messages,
        [ATTRIBUTES.flushAppends]: batch.length,
        [ATTRIBUTES.flushMode]: this.options.ordering,
      });
      for (const pending of batch) {
        const linked = pending.span.spanContext();
        if (trace.isSpanContextValid(linked)) span.addLink({ context: linked });
      }
    }
    let ok = false;
    try {
      const deadline = this.deadlineOf(batch);
      if (deadline !== null && deadline <= performance.now()) {
        // Its time ran out while earlier flushes waited (for an import, say): never sent, nothing stored.
        const failure = new DatabaseUnavailableError(
          `The database did not take the write within ${this.options.appendTimeoutMs} ms (a long import or a held lock?); nothing was stored, retry later`,
          false,
        );
        span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
        for (const pending of batch) pending.reject(failure);
        return;
      }
      const plan = await this.writeWithRetry(batch, deadline);
      ok = true;
      if (this.full)
        this.logger.log(`The database stores again (full since ${this.full.since.toISOString()})`);
      this.full = null;
      this.window.record(plan.windowHashes);
      plan.outcomes.forEach((outcome, i) => {
        if (outcome.ok)
          batch[i].resolve({ entries: outcome.entries, streamVersion: outcome.streamVersion });
        else {
          if (outcome.error instanceof LogFullError) this.noteFull(outcome.error);
          batch[i].reject(outcome.error);
        }
      });
      if (span.isRecording()) span.setAttribute(ATTRIBUTES.flushCreated, plan.created.length);
      if (plan.created.length > 0) {
        this.segments.noteHead(plan.created[plan.created.length - 1].id);
        this.announce(plan.created, plan.createdBytes, plan.hiddenAtAppend);
      }
    } catch (error) {
      // An exhausted sequence is a data error too, but no append can fit any more (nextval is
      // not rolled back: the flush used up what was left), so every append gets log_full now.
      if (isDataError(error) && !isSequenceExhausted(error) && batch.length > 1) {
        // One append's bad data must not fail its neighbours: write each on its own.
        for (const pending of batch) await this.flush([pending]);
        return;
      }
      const failure = this.toLibraryError(error);
      if (failure instanceof LogFullError) this.noteFull(failure);
      if (failure instanceof StorageFullError && !this.full) {
        this.full = { since: new Date(), error: driverError(error).message };
        this.logger.error(
          `The database's disk is full: appends answer storage_full until a flush commits again (${this.full.error})`,
        );
      }
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
      for (const pending of batch) pending.reject(failure);
    } finally {
      span.end();
      const stats = {
        appends: batch.length,
        messages,
        durationMs: performance.now() - started,
        ok,
      };
      for (const listener of this.flushListeners) listener(stats);
    }
  }

  /** Remembers (and logs, once) that the log is full. */
  private noteFull(error: LogFullError): void {
    if (this.refusedFull) return;
    this.refusedFull = true;
    this.logger.error(`${error.message}; every append is refused from now on (507 log_full)`);
  }

  /** When the batch's oldest append has waited `appendTimeoutMs` (a `performance.now()` time); null: no bound. */
  private deadlineOf(batch: PendingAppend[]): number | null {
    if (this.options.appendTimeoutMs <= 0) return null;
    let oldest = Number.POSITIVE_INFINITY;
    for (const pending of batch) oldest = Math.min(oldest, pending.queuedAt ?? performance.now());
    return oldest + this.options.appendTimeoutMs;
  }

  private async writeWithRetry(
    batch: PendingAppend[],
    deadline: number | null,
  ): Promise<FlushPlan> {
    try {
      return await this.strategies.write(batch, deadline);
    } catch (error) {
      // A position no segment covered (the head moved faster than segments were added, or
      // was moved by hand): nothing was stored; one retry once segments cover it.
      if (await this.segments.repairs(error)) return await this.strategies.write(batch, deadline);
      // A connection lost before COMMIT was sent committed nothing: one retry on a fresh one.
      if (error instanceof CommitOutcomeUnknown || !isConnectionError(error)) throw error;
      this.logger.warn(
        `Flush of ${batch.length} appends lost its connection (${driverError(error).message}); retrying once`,
      );
      return await this.strategies.write(batch, deadline);
    }
  }

  private announce(
    created: StoredMessage[],
    bytes: readonly number[],
    hiddenAtAppend: boolean,
  ): void {
    for (const listener of this.commitListeners) {
      try {
        listener(created, bytes, hiddenAtAppend);
      } catch (error) {
        this.logger.error(
          `Commit listener failed after index ${created[created.length - 1].id}: ${String(error)}`,
        );
      }
    }
  }

  private toLibraryError(error: unknown): OrdinalError {
    if (error instanceof OrdinalError) return error;
    if (error instanceof CommitOutcomeUnknown) {
      return new DatabaseUnavailableError(
        `The database did not confirm the commit (${error.message}); the outcome is unknown: the messages may be stored. Retry with an idempotency key`,
        true,
        { cause: error },
      );
    }
    if (error instanceof QueryTimedOut) {
      return new DatabaseUnavailableError(
        `The database did not answer in time (${error.message}); nothing was stored, retry later`,
        false,
        { cause: error },
      );
    }
    if (isConnectionError(error)) {
      return new DatabaseUnavailableError(
        `The database is unavailable (${driverError(error).message}); retry later`,
        false,
        { cause: error },
      );
    }
    if (isReadOnlyError(error)) {
      return new ReadOnlyReplicaError(
        `The database is read-only (a standby?): ${driverError(error).message}; nothing was stored, send writes to the primary`,
        { cause: error },
      );
    }
    if (isSequenceExhausted(error)) {
      return new LogFullError('the sequence that gives positions has reached its maximum', {
        cause: error,
      });
    }
    if (isDataError(error)) {
      return new InvalidMessageError(
        `The database rejected the message: ${driverError(error).message}`,
        { cause: error },
      );
    }
    const lacking = insufficientResources(error, 'The append');
    if (lacking) return lacking;
    this.logger.error(`Flush failed: ${driverError(error).message}`);
    return new OrdinalError('append_failed', `The append failed: ${driverError(error).message}`, {
      cause: error,
    });
  }
}
