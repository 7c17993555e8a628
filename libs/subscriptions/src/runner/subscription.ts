import { Logger } from '@nestjs/common';
import { type LogReader, type LogWatermark, type StoredMessage } from '@ordinal/log';
import { OwnershipLostError } from '@ordinal/ownership';
import { LateTracker } from '@ordinal/log/internal';
import { type Lease, type OwnedConsumer } from '@ordinal/ownership';
import type { DataSource, EntityManager } from 'typeorm';
import { CheckpointMovedError, HandlerFailedError } from '../errors/index.js';
import type { ResolvedSubscriptionsOptions } from '../subscriptions-options.js';
import type { SubscribeOptions, SubscriptionStatus } from '../subscription-context.js';
import { SourceReader } from '../source/source-reader.js';
import type { StreamSource } from '../source/shared-source.js';
import { describeStream, streamAccepts } from '../source/subscription-stream.js';
import { CheckpointStore } from './checkpoint-store.js';
import { PositionWaiters } from './position-waiters.js';
import { ParkedStore } from './parked-store.js';
import { PoisonTracker } from './poison-tracker.js';
import { replayParkedMessages, type ParkedReplay } from './parked-replay.js';
import { Wake } from './wake.js';
import { idleBackoffMs } from './idle-delay.js';
import { endSpan, handleTraced, startBatchSpan } from './consumer-spans.js';
import type { Span } from '@opentelemetry/api';

/** What a subscription runs on (provided by SubscriptionsService). */
export interface SubscriptionDeps {
  dataSource: DataSource;
  reader: LogReader;
  watermark: LogWatermark;
  concurrent: boolean;
  options: ResolvedSubscriptionsOptions;
  /** Whether other processes' commits wake it (NOTIFY reaches this process): its idle poll backs off then. */
  notified: () => boolean;
}

/**
 * One subscription's runner: reads its stream from its checkpoint and applies each
 * batch and the checkpoint in one transaction, so a same-database read model is effectively
 * exactly-once. Woken by commits, polled as a safety net (fast while the watermark holds
 * a hole). A failed batch rolls back and is retried with exponential back-off; the error
 * shows in `status()`. Positions passed without a row are watched and their late rows delivered late.
 *
 * Run under consumer ownership, it starts only when this process holds its lease
 * (`acquired`), checks the lease before every batch and message, and fences every commit
 * with it; once the lease is lost it stands by.
 */
export class Subscription implements OwnedConsumer {
  private readonly logger = new Logger(Subscription.name);
  private readonly source: StreamSource;
  private readonly checkpoints: CheckpointStore;
  private readonly late = new LateTracker();
  private readonly waiters: PositionWaiters;
  private readonly wake = new Wake();
  private readonly pause = new Wake();
  private position = 0;
  private liveFrom = 0;
  private state: SubscriptionStatus['state'] = 'starting';
  private lastError: string | null = null;
  private lastErrorAt: string | null = null;
  private retries = 0;
  private lateDelivered = 0;
  private initialised = false;
  private stopped = true;
  private loop: Promise<void> | null = null;
  private lateDueAt = 0;
  /** Idle reads in a row that found nothing and that no wake started (idleBackoffMs). */
  private idleRounds = 0;
  private lateSignalled = false;
  private lease: Lease | null = null;
  private readonly parked: ParkedStore;
  private readonly poison: PoisonTracker;
  /** Serialises batches with parked-message replays. */
  private serial: Promise<unknown> = Promise.resolve();
  private managed = false;

  constructor(
    readonly options: SubscribeOptions,
    private readonly deps: SubscriptionDeps,
    /** Its group's shared read (partitions of one projection); its own reader otherwise. */
    source?: StreamSource,
  ) {
    this.source =
      source ?? new SourceReader(options.stream, deps.reader, deps.concurrent, options.tenant);
    this.checkpoints = new CheckpointStore(
      deps.dataSource,
      options.name,
      options.kind ?? 'subscription',
    );
    this.waiters = new PositionWaiters(options.name);
    this.parked = new ParkedStore(deps.dataSource);
    this.poison = new PoisonTracker(options.onError);
  }

  get name(): string {
    return this.options.name;
  }

  /** This process now owns the subscription: run from the stored checkpoint under `lease`. */
  acquired(lease: Lease): void {
    this.lease = lease;
    this.initialised = false;
    this.start();
  }

  /** This process no longer owns it: stop after the batch in flight and stand by. */
  async released(): Promise<void> {
    await this.stop();
    this.lease = null;
    this.state = 'standby';
  }

  /** The lease it runs under, when run under consumer ownership and held. */
  get currentLease(): Lease | null {
    return this.lease?.isHeld() ? this.lease : null;
  }

  /**
   * Creates the checkpoint when new (its replay boundary is the head now), before ownership
   * decides where it runs, so events written after the application started count as live.
   */
  async prepare(): Promise<void> {
    const head = await this.deps.reader.safeHead();
    await this.checkpoints.ensure(this.options.startAt === 'end' ? head : 0, head);
    await this.checkpoints.describe(describeStream(this.options.stream));
  }

  /** From now on it runs only while this process holds its lease (ConsumerOwnership decides). */
  manage(): void {
    this.managed = true;
    if (!this.loop) this.state = 'standby';
  }

  /** Starts the loop (no-op when running, or when managed and this process holds no lease). */
  start(): void {
    if (this.loop || this.poison.halted) return;
    if (this.managed && !this.lease?.isHeld()) {
      this.state = 'standby';
      return;
    }
    this.stopped = false;
    this.loop = this.run();
  }

  /** Stops after the batch in flight (which commits or rolls back whole). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake.signal();
    this.pause.signal();
    await this.loop;
    this.loop = null;
    this.state = 'stopped';
  }

  /** Stops and clears the waiters' timers (shutdown). */
  async close(): Promise<void> {
    await this.stop();
    this.waiters.close();
  }

  /** New commits may be readable. */
  notify(): void {
    this.wake.signal();
  }

  /** A late arrival was reported somewhere in the log: look at the pending positions now. */
  notifyLate(): void {
    this.lateSignalled = true;
    this.wake.signal();
  }

  /** Resolves once every message up to `index` is applied; WaitTimeoutError after `timeoutMs`. */
  waitFor(index: number, timeoutMs: number): Promise<number> {
    return this.waiters.wait(this.initialised ? this.position : 0, index, timeoutMs);
  }

  /**
   * Rebuild, in the rebuild's transaction: the checkpoint goes back to the start with
   * `head` as the new replay boundary. The caller locked the checkpoint rows first, ran the
   * read model's reset hook once, and stopped this process's runner; it calls `rebuilt` after
   * the commit. A batch in flight in another process fails on the checkpoint's guard.
   */
  async resetCheckpoint(manager: EntityManager, head: number): Promise<void> {
    await this.checkpoints.reset(manager, this.options.startAt === 'end' ? head : 0, head);
  }

  /** The rebuild committed: forget the old run's state and run again (if this process owns it). */
  rebuilt(head: number): void {
    const start = this.options.startAt === 'end' ? head : 0;
    Object.assign(this, {
      position: start,
      liveFrom: head,
      lastError: null,
      lastErrorAt: null,
      retries: 0,
      initialised: false,
    });
    this.poison.clear();
    this.late.clear();
    this.logger.log(`'${this.name}' rebuilt: replaying from ${start}, live after ${head}`);
    this.state = 'rebuilding';
    this.start();
  }

  status(): SubscriptionStatus {
    return {
      name: this.name,
      kind: this.options.kind ?? 'subscription',
      stream: describeStream(this.options.stream),
      position: this.position,
      liveFrom: this.liveFrom,
      state: this.state,
      lastError: this.lastError,
      lastErrorAt: this.lastErrorAt,
      retries: this.retries,
      pendingLate: this.late.positions(),
      skipped: this.poison.skipped,
      parkedHere: this.poison.parked,
      lateDelivered: this.lateDelivered,
      watermarked: this.source.watermarked,
    };
  }

  private async run(): Promise<void> {
    // Its group's shared read maps what the members running here want (SharedSource).
    this.source.join?.(this.name);
    let haltedHere: boolean;
    try {
      haltedHere = await this.loopUntilStopped();
    } finally {
      this.source.leave?.(this.name);
    }
    // Ended by itself (lost ownership, stopped by its error policy) or by stop(): start() may run it again.
    this.loop = null;
    // The stop policy shows `stopped` before its stop is recorded; a resume in between found
    // this loop still here and could not start one. Run again for it (unless stop() was asked).
    if (haltedHere && !this.poison.halted && !this.stopped) this.start();
  }

  /** Runs until stopped or halted; true when the stop policy halted it here. */
  private async loopUntilStopped(): Promise<boolean> {
    const { retryInitialMs, retryMaxMs } = this.deps.options;
    let delay = retryInitialMs;
    let haltedHere = false;
    while (!this.stopped) {
      try {
        if (!this.initialised) await this.init();
        const progressed = await this.exclusive(() => this.tick());
        this.state = 'running';
        this.retries = 0;
        delay = retryInitialMs;
        if (progressed) this.idleRounds = 0;
        else if (!this.stopped)
          this.idleRounds = (await this.wake.wait(this.idleDelay())) ? 0 : this.idleRounds + 1;
      } catch (error) {
        if (this.stopped) break;
        if (error instanceof OwnershipLostError || (this.lease && !this.lease.isHeld())) {
          this.logger.warn(
            `'${this.name}' at position ${this.position}: this process no longer owns it; standing by (its batch in flight did not commit)`,
          );
          this.state = 'standby';
          break;
        }
        if (error instanceof CheckpointMovedError) {
          this.logger.warn(error.message);
          this.initialised = false;
          continue;
        }
        if (error instanceof HandlerFailedError) {
          const action = this.poison.failed(error, error.index <= this.liveFrom);
          if (action === 'stop') {
            haltedHere = true;
            await this.recordFailure(error, null);
            break;
          }
          if (action !== 'retry') {
            await this.recordFailure(error, 0);
            continue;
          }
        }
        await this.recordFailure(error, delay);
        await this.pause.wait(delay);
        delay = Math.min(delay * 2, retryMaxMs);
      }
    }
    return haltedHere;
  }

  private async init(): Promise<void> {
    const head = await this.deps.reader.safeHead();
    const checkpoint = await this.checkpoints.ensure(
      this.options.startAt === 'end' ? head : 0,
      head,
    );
    // From what it still owed when it last wrote its position, not from when it wrote it: an
    // arrival claimed before that write may not have been delivered yet. Read before the
    // tracker is replaced, so `pendingLate` never shows it owing nothing in between (a
    // previous build is left once none of its members here owes a late row).
    const open = this.source.watermarked
      ? await this.checkpoints.openSkipped(checkpoint.position, checkpoint.arrivedSince)
      : null;
    this.position = checkpoint.position;
    this.liveFrom = checkpoint.liveFrom;
    this.late.clear();
    if (open) this.late.add(open.positions, open.xmax, open.since);
    this.initialised = true;
    this.waiters.reached(this.position);
  }

  /** One read and, when it found anything, one batch. Returns whether the position moved. */
  private async tick(): Promise<boolean> {
    this.lease?.ensureHeld();
    if (this.late.size > 0 && (this.lateSignalled || Date.now() >= this.lateDueAt)) {
      this.lateSignalled = false;
      this.lateDueAt = Date.now() + this.deps.options.lateCheckMs;
      await this.deliverLate();
    }
    const read = await this.source.read(
      this.position,
      this.options.batchSize ?? this.deps.options.batchSize,
    );
    if (read.to <= this.position) return false;
    const from = this.position;
    const messages = this.options.accepts
      ? read.messages.filter(this.options.accepts)
      : read.messages;
    if (this.poison.setAside && read.to >= this.poison.setAside.index)
      return this.setMessageAside(messages, read.skipped, read.xmax, read.since);
    if (this.options.gate) return this.gatedBatch(messages, from, read);
    const owed = this.owedWith(read.skipped, read.since);
    if (messages.length > 0) {
      const span = startBatchSpan(
        this.name,
        this.options.kind ?? 'subscription',
        from + 1,
        read.to,
        messages,
      );
      try {
        await this.deps.dataSource.transaction(async (manager) => {
          for (const message of messages) await this.apply(message, manager, false, span);
          await this.lease?.fence(manager);
          await this.checkpoints.advance(manager, from, read.to, owed);
        });
        endSpan(span);
      } catch (error) {
        endSpan(span, error);
        throw error;
      }
    } else if (this.lease) {
      const lease = this.lease;
      await this.deps.dataSource.transaction(async (manager) => {
        await lease.fence(manager);
        await this.checkpoints.advance(manager, from, read.to, owed);
      });
    } else {
      await this.checkpoints.advance(this.deps.dataSource.manager, from, read.to, owed);
    }
    this.position = read.to;
    if (read.skipped.length > 0) {
      this.late.add(read.skipped, read.xmax, read.since);
      // Debug, not warn: exact releases (every rolled-back write) are watched too, and the
      // watermark already warns once per abandoned hole.
      this.logger.debug(
        `'${this.name}' passed positions without a row ${read.skipped.join(', ')}; watching them for late arrivals`,
      );
    }
    this.waiters.reached(this.position);
    return true;
  }

  /**
   * One batch under the gate: the gate runs first in the transaction and may hold the batch
   * back at `upTo` (a candidate build waits for the serving one; a previous build stops at
   * its hand-over) and move the replay boundary. Returns whether the position moved.
   */
  private async gatedBatch(
    messages: StoredMessage[],
    from: number,
    read: { to: number; skipped: number[]; xmax: string; since?: Date },
  ): Promise<boolean> {
    let to = read.to;
    const span =
      messages.length > 0
        ? startBatchSpan(
            this.name,
            this.options.kind ?? 'subscription',
            from + 1,
            read.to,
            messages,
          )
        : undefined;
    try {
      await this.deps.dataSource.transaction(async (manager) => {
        const gate = await this.options.gate!(manager);
        if (gate.upTo !== null) to = Math.max(from, Math.min(to, gate.upTo));
        if (to <= from) return;
        for (const message of messages)
          if (message.id <= to) await this.apply(message, manager, false, span, gate.liveFrom);
        await this.lease?.fence(manager);
        const passed = read.skipped.filter((p) => p <= to);
        await this.checkpoints.advance(manager, from, to, this.owedWith(passed, read.since));
      });
      if (span) endSpan(span);
    } catch (error) {
      if (span) endSpan(span, error);
      throw error;
    }
    if (to <= from) return false;
    this.position = to;
    const passed = read.skipped.filter((p) => p <= to);
    if (passed.length > 0) this.late.add(passed, read.xmax, read.since);
    this.waiters.reached(this.position);
    return true;
  }

  /** Delivers arrived positions this subscription passed, each in its own transaction, checkpoint unmoved. */
  private async deliverLate(): Promise<void> {
    const arrived = await this.late.check(this.deps.dataSource.manager);
    for (const message of arrived) {
      // Above the checkpoint (after a rebuild, say) it is read the ordinary way.
      if (
        message.id > this.position ||
        !streamAccepts(this.options.stream, message) ||
        (this.options.tenant !== undefined && message.tenant !== this.options.tenant) ||
        (this.options.accepts && !this.options.accepts(message))
      ) {
        this.late.forget(message.id);
        continue;
      }
      await this.deps.dataSource.transaction(async (manager) => {
        const gate = await this.options.gate?.(manager);
        await this.apply(message, manager, true, undefined, gate?.liveFrom);
        await this.lease?.fence(manager);
        await this.checkpoints.touch(manager, message.id, this.late.owedSince(message.id));
      });
      this.late.forget(message.id);
      this.lateDelivered += 1;
      this.logger.error(
        `Late arrival delivered to '${this.name}': index ${message.id} (${message.messageType}) committed after its position was passed`,
      );
    }
  }

  private async apply(
    message: StoredMessage,
    manager: EntityManager,
    isLate: boolean,
    batch?: Span,
    liveFrom?: number | null,
  ): Promise<void> {
    // A process frozen mid-batch finds out here, before the next handler runs, not only at the fence.
    this.lease?.ensureHeld();
    const ctx = {
      manager,
      index: message.id,
      isReplay: message.id <= (liveFrom ?? this.liveFrom),
      isLate,
      message,
      subscription: this.name,
      tenant: message.tenant,
      correlationId: message.correlationId,
      causationId: message.causationId,
      traceparent: message.traceparent,
    };
    try {
      await handleTraced(message, this.name, batch, async () => this.options.handle(message, ctx));
    } catch (error) {
      throw new HandlerFailedError(this.name, message.id, error);
    }
  }

  /**
   * The error policy set a message aside: first the messages before it commit (one batch),
   * then, in a transaction of its own, the checkpoint moves over it (and it is parked).
   */
  private async setMessageAside(
    messages: StoredMessage[],
    skipped: number[],
    xmax: string,
    since?: Date,
  ): Promise<boolean> {
    const aside = this.poison.setAside!;
    const from = this.position;
    const before = messages.filter((m) => m.id < aside.index);
    const message = messages.find((m) => m.id === aside.index);
    const to =
      before.length > 0 || from < aside.index - 1 || !message ? aside.index - 1 : aside.index;
    const passed = skipped.filter((p) => p <= to);
    await this.deps.dataSource.transaction(async (manager) => {
      const gate = await this.options.gate?.(manager);
      for (const m of before) await this.apply(m, manager, false, undefined, gate?.liveFrom);
      if (to === aside.index && aside.action === 'park')
        await this.parked.park(
          manager,
          this.name,
          aside.index,
          message!.messageType,
          aside.error,
          aside.failures,
        );
      await this.lease?.fence(manager);
      await this.checkpoints.advance(manager, from, to, this.owedWith(passed, since));
    });
    this.position = to;
    if (passed.length > 0) this.late.add(passed, xmax, since);
    if (to === aside.index || !message) {
      this.poison.passed(aside);
      if (message) {
        this.logger.warn(
          `'${this.name}' ${aside.action === 'park' ? 'parked' : 'skipped'} index ${aside.index} (${message.messageType}) after ${aside.failures} failures: ${aside.error}`,
        );
      }
    }
    this.waiters.reached(this.position);
    return true;
  }

  /** Resumes a subscription the `stop` error policy stopped (after a fix). */
  resume(): void {
    this.poison.resume();
    this.start();
  }

  /** Applies every parked message again, oldest first (see replayParkedMessages); runs between batches. */
  replayParked(): Promise<ParkedReplay> {
    return this.exclusive(async () => {
      const result = await replayParkedMessages({
        name: this.name,
        parked: this.parked,
        reader: this.deps.reader,
        dataSource: this.deps.dataSource,
        lease: this.lease,
        apply: async (message, manager) => {
          const gate = await this.options.gate?.(manager);
          await this.apply(message, manager, false, undefined, gate?.liveFrom);
        },
        logger: this.logger,
      });
      this.poison.parked = Math.max(0, this.poison.parked - result.replayed);
      return result;
    });
  }

  /** Runs `fn` after whatever batch or replay is in flight. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.serial.then(fn, fn);
    this.serial = run.catch(() => undefined);
    return run;
  }

  private async recordFailure(error: unknown, delay: number | null): Promise<void> {
    this.state = delay === null ? 'stopped' : 'failed';
    this.retries += 1;
    this.lastError = error instanceof Error ? error.message : String(error);
    this.lastErrorAt = new Date().toISOString();
    const next =
      delay === null
        ? 'stopped by its error policy'
        : delay === 0
          ? 'set aside by its error policy'
          : `next in ${delay} ms`;
    this.logger.error(
      `'${this.name}' at position ${this.position}: ${this.lastError} (attempt ${this.retries}, ${next})`,
    );
    await this.checkpoints
      .fail(this.lastError, delay === null ? 'stopped' : 'failed')
      .catch(() => undefined);
  }

  /**
   * What a checkpoint write that passes `skipped` (recorded no earlier than `since`) saves as
   * the earliest time the subscription still owes a late arrival from: the tracker's, and those
   * positions', which it watches once the write commits. Null when it owes none.
   */
  private owedWith(skipped: number[], since?: Date): Date | null {
    const owed = this.late.owedSince();
    if (skipped.length === 0) return owed;
    // Positions passed without a known time count from the epoch, as the tracker counts them.
    const passed = since ?? new Date(0);
    return owed === null || passed < owed ? passed : owed;
  }

  private idleDelay(): number {
    const { idlePollMs, holdPollMs, lateCheckMs } = this.deps.options;
    let ms =
      this.source.watermarked && this.deps.watermark.heldHole
        ? holdPollMs
        : idleBackoffMs(idlePollMs, this.idleRounds, this.deps.notified());
    if (this.late.size > 0) ms = Math.min(ms, lateCheckMs);
    return ms;
  }
}
