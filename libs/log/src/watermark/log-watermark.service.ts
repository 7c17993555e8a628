import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions } from '../log-options.js';
import {
  claimLateArrivals,
  countFinalBetween,
  countRunning,
  persistWatermark,
  raisePassedPosition,
  readDrawnPosition,
  readFinalPositionsAfter,
  readHead,
  readLogWriters,
  readPersistedWatermark,
  readPositionsBetween,
  recordFinalHoles,
  recordSkipped,
  snapshotPassed,
} from '../sql/index.js';
import { execute } from '@ordinal/pg';
import { toPosition } from '@ordinal/pg';
import type { Hole, HoleWriter, WatermarkCounters } from './hole.js';

const SCAN = 1000;
/** First and largest range the scan counts at once past a full page (a bulk import, a long catch-up). */
const GALLOP_FROM = 8 * SCAN;
const GALLOP_MAX = 1_048_576;
/** The watermark is written down at most this often (a start hint: a stale one costs a scan). */
const PERSIST_MS = 1000;
/** Most positions the start-up shortcut records one by one (a longer jump is passed unrecorded). */
const BARRIER_RECORD_MAX = GALLOP_MAX;

/**
 * The safe head every reader reads up to (ARCHITECTURE.md, "The low watermark").
 *
 * Gapless mode: the committed head; it never waits (S6). Concurrent mode: the end of the
 * contiguous run of committed positions. At the first missing position it holds; the hole is
 * released exactly as soon as every transaction that held the log table when the hole was
 * first seen has ended (S4) — only those can still fill it — or abandoned after
 * `gapTimeoutMs` (S3) with a warning and a durable record. "Writers" are the transactions
 * holding the log table or the position sequence (a `nextval` by hand counts). A row that
 * commits at a passed position later — abandoned, or released exactly and written anyway (a
 * position drawn by a transaction that has ended, an index chosen by hand) — is found by a
 * periodic re-scan and reported as a late arrival; readers watch those positions too.
 *
 * Every position the watermark passes without a row is recorded in `log_skipped` before it
 * moves past it (abandoned or released exactly), and the position reached is written down
 * now and then, so a new process (after a restart, or a second replica) starts where the
 * others are, passes the same holes without holding them again, and never reports a lower
 * head than a reader already saw.
 *
 * On a replica reader (`role: 'replica-reader'`) the writers' locks are the primary's and
 * cannot be seen, so it never decides on a hole: it follows. It starts from the position the
 * primary wrote down, moves over the contiguous run of rows and of positions the primary
 * recorded in `log_skipped` (a standby replays in the primary's commit order, so what it sees
 * below a visible position is what the primary had committed), and at a missing position it
 * waits until the row arrives or the primary's record of it does. It writes nothing.
 */
@Injectable()
export class LogWatermark implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(LogWatermark.name);
  private position = 0;
  private persisted: number | null = null;
  private persistedAt = 0;
  private hole: Hole | null = null;
  /** The scan running now (concurrent mode): one at a time. */
  private advancing: Promise<number> | null = null;
  /** What the callers who came while `advancing` ran wait for: the scan started when it ends. */
  private queued: { head: Promise<number>; settle: (scan: Promise<number>) => void } | null = null;
  /** Start-up shortcut: once these writers end, every position up to `position` is final. */
  private barrier: { position: number; hole: Hole } | null | undefined = undefined;
  private rescanTimer: NodeJS.Timeout | null = null;
  /** Re-scans under way: the shutdown waits for them (a claim that commits is counted and told). */
  private readonly rescans = new Set<Promise<number[]>>();
  private stopping = false;
  private readonly lateListeners = new Set<(positions: number[]) => void>();
  readonly counters: WatermarkCounters = {
    holesHeld: 0,
    holesReleasedExactly: 0,
    holesAbandoned: 0,
    lateArrivals: 0,
  };

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
  ) {}

  onModuleInit(): void {
    if (this.options.ordering !== 'concurrent' || this.follower) return;
    this.rescanTimer = setInterval(() => void this.rescanLate(), this.options.lateRescanMs);
    this.rescanTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.rescanTimer) clearInterval(this.rescanTimer);
    // A claim in flight may commit: its answer must be read before the pool closes, or the
    // positions it marked arrived are counted and logged by no process.
    await Promise.all(this.rescans);
    // The next process starts where this one got to (the periodic write may be a second behind).
    if (
      this.options.ordering === 'concurrent' &&
      !this.follower &&
      this.position > (this.persisted ?? 0)
    ) {
      await execute(this.dataSource.manager, persistWatermark(this.position)).catch(
        () => undefined,
      );
    }
  }

  /**
   * The highest position below which nothing can appear any more; it covers every commit that
   * ended before the call. In concurrent mode one scan runs at a time: a caller that comes
   * while one runs gets the next one, started the moment it ends and shared by every caller
   * that came meanwhile. The running scan may have read the log before the caller's own
   * commit, and a head without the caller's message would break reading one's own writes
   * (archive.int-spec saw 2,499 after the 2,500th append returned).
   */
  async safeHead(): Promise<number> {
    if (this.options.ordering === 'gapless') {
      const [row] = await execute<{ head: string }>(this.dataSource.manager, readHead());
      return toPosition(row.head);
    }
    if (this.advancing === null) return this.startAdvance();
    if (this.queued === null) {
      let settle!: (scan: Promise<number>) => void;
      const head = new Promise<number>((resolve) => (settle = resolve));
      this.queued = { head, settle };
    }
    return this.queued.head;
  }

  /**
   * Starts a scan. When it ends, the queued one (if any caller came meanwhile) starts in the
   * same step, so no caller finds none running in between and starts a second one beside it.
   */
  private startAdvance(): Promise<number> {
    const advancing = this.advance();
    this.advancing = advancing;
    const ended = () => {
      this.advancing = null;
      const queued = this.queued;
      this.queued = null;
      if (queued) queued.settle(this.startAdvance());
    };
    advancing.then(ended, ended);
    return advancing;
  }

  /** The hole held now, if any (for status and metrics). */
  get heldHole(): (Hole & { heldMs: number }) | null {
    return this.hole ? { ...this.hole, heldMs: Date.now() - this.hole.firstSeenAt } : null;
  }

  /** Listens to late arrivals (rows committed at positions the watermark had passed). */
  onLate(listener: (positions: number[]) => void): () => void {
    this.lateListeners.add(listener);
    return () => this.lateListeners.delete(listener);
  }

  /** Looks for late arrivals now (also runs every `lateRescanMs`); none once shutting down. */
  rescanLate(): Promise<number[]> {
    if (this.stopping) return Promise.resolve([]);
    const rescan = this.claimLate();
    this.rescans.add(rescan);
    void rescan.finally(() => this.rescans.delete(rescan));
    return rescan;
  }

  private async claimLate(): Promise<number[]> {
    try {
      const rows = await execute<{ position: string; exact: boolean }>(
        this.dataSource.manager,
        claimLateArrivals(),
      );
      const positions = rows.map((r) => toPosition(r.position)).sort((a, b) => a - b);
      if (positions.length === 0) return positions;
      this.counters.lateArrivals += positions.length;
      const exact = rows.filter((r) => r.exact).map((r) => toPosition(r.position));
      this.logger.error(
        `Late arrival: positions ${positions.join(', ')} committed after the watermark passed them; delivering them as late` +
          (exact.length > 0
            ? ` (${exact.join(', ')} had been released exactly: a position drawn outside Ordinal's INSERT, or an index written by hand)`
            : ''),
      );
      for (const listener of this.lateListeners) listener(positions);
      return positions;
    } catch (error) {
      this.logger.warn(`Late-arrival re-scan failed: ${String(error)}`);
      return [];
    }
  }

  /** A replica reader follows the primary's decisions on holes instead of making its own. */
  private get follower(): boolean {
    return this.options.role === 'replica-reader';
  }

  private async advance(): Promise<number> {
    if (this.follower) return this.follow();
    if (this.persisted === null) {
      const [row] = await execute<{ position: string }>(
        this.dataSource.manager,
        readPersistedWatermark(),
      );
      this.persisted = row ? toPosition(row.position) : 0;
      this.position = Math.max(this.position, this.persisted);
    }
    await this.passBarrier();
    const reached = await this.scan();
    this.persist(reached);
    return reached;
  }

  /**
   * The replica reader's advance: the primary's written-down position (its start-up barrier
   * passes holes without recording them one by one, and writes this first), then the
   * contiguous run after it. Never past a position that is neither a row nor recorded.
   */
  private async follow(): Promise<number> {
    const [row] = await execute<{ position: string }>(
      this.dataSource.manager,
      readPersistedWatermark(),
    );
    this.position = Math.max(this.position, row ? toPosition(row.position) : 0);
    return this.scan();
  }

  /** Writes the position down when it moved and the last write is old enough; never awaited. */
  private persist(position: number): void {
    if (position <= (this.persisted ?? 0) || Date.now() - this.persistedAt < PERSIST_MS) return;
    this.persistedAt = Date.now();
    execute(this.dataSource.manager, persistWatermark(position)).then(
      () => (this.persisted = Math.max(this.persisted ?? 0, position)),
      (error: unknown) =>
        this.logger.warn(`Cannot write the watermark down at ${position}: ${String(error)}`),
    );
  }

  private async scan(): Promise<number> {
    for (;;) {
      const rows = await execute<{ index: string }>(
        this.dataSource.manager,
        readFinalPositionsAfter(this.position, SCAN),
      );
      let next: number | null = null;
      for (const row of rows) {
        const index = toPosition(row.index);
        // A late arrival is both a row and a recorded position.
        if (index <= this.position) continue;
        if (index === this.position + 1) {
          this.position = index;
          continue;
        }
        next = index;
        break;
      }
      if (this.hole && this.hole.to <= this.position) this.hole = null;
      if (next === null) {
        if (rows.length < SCAN) return this.position;
        await this.gallop();
        continue;
      }
      // Positions position+1 .. next-1 are missing while `next` is committed.
      if (this.follower) return this.holdAsFollower(this.position + 1, next - 1);
      if (!(await this.settleHole(this.position + 1, next - 1))) return this.position;
    }
  }

  /**
   * After a full page with no hole, a long run is likely (a bulk import commits a million
   * positions at once): move over ranges of doubling length while every position in them is
   * final, counted in the database, instead of reading them a page at a time. The first range
   * that is not wholly final is left to the page scan, which finds the hole exactly.
   */
  private async gallop(): Promise<void> {
    for (let step = GALLOP_FROM; ; step = Math.min(step * 2, GALLOP_MAX)) {
      const [row] = await execute<{ final: string }>(
        this.dataSource.manager,
        countFinalBetween(this.position + 1, this.position + step),
      );
      if (toPosition(row.final) !== step) return;
      this.position += step;
    }
  }

  /**
   * A new watermark need not scan the log from 1: every position drawn up to the sequence's
   * value at a moment t0 was drawn by a transaction holding the table at t0, so once the
   * writers listed after t0 have ended, all of them are final (committed or rolled back).
   */
  private async passBarrier(): Promise<void> {
    // Without exact release nothing may be skipped before its timeout: scan from the start.
    if (!this.options.exactRelease || this.options.gapTimeoutMs <= 0) this.barrier = null;
    if (this.barrier === null) return;
    if (this.barrier === undefined) {
      const [row] = await execute<{ drawn: string }>(this.dataSource.manager, readDrawnPosition());
      const writers = await this.listWriters();
      const hole: Hole = { from: 0, to: 0, firstSeenAt: Date.now(), ...writers };
      this.barrier = { position: toPosition(row.drawn), hole };
    }
    if (await this.writersEnded(this.barrier.hole)) {
      // The shortcut passes holes at once: record them, so readers watch them for a row
      // inserted there by hand later (a bounded jump; a longer one is passed unrecorded), and
      // write its position down first, so a process that starts later does not hold them again.
      if (this.barrier.position > this.position) {
        await execute(this.dataSource.manager, raisePassedPosition(this.barrier.position));
        if (this.barrier.position - this.position <= BARRIER_RECORD_MAX) {
          await execute(
            this.dataSource.manager,
            recordFinalHoles(this.position + 1, this.barrier.position, this.options.lateWatchMs),
          );
        }
        await execute(this.dataSource.manager, persistWatermark(this.barrier.position));
        this.persisted = Math.max(this.persisted ?? 0, this.barrier.position);
      }
      this.position = Math.max(this.position, this.barrier.position);
      this.barrier = null;
    }
  }

  /** A replica reader at a hole: it waits (the hole is shown in status), the primary decides. */
  private holdAsFollower(from: number, to: number): number {
    if (!this.hole || this.hole.from !== from) {
      this.hole = { from, to, firstSeenAt: Date.now(), writers: [], xmax: '0', exact: false };
      this.counters.holesHeld += 1;
    } else {
      this.hole.to = to;
    }
    return this.position;
  }

  /** Decides on the hole [from, to]: returns true if the watermark may move past it now. */
  private async settleHole(from: number, to: number): Promise<boolean> {
    if (!this.hole || this.hole.from > from || this.hole.to < from) {
      const writers = await this.listWriters();
      // A writer may have committed between our read and the list: look again.
      if (await this.anyCommitted(from, to)) return true;
      this.hole = { from, to, firstSeenAt: Date.now(), ...writers };
      this.counters.holesHeld += 1;
    } else {
      this.hole.from = from;
    }
    const hole = this.hole;
    const heldMs = Date.now() - hole.firstSeenAt;
    if (
      this.options.gapTimeoutMs > 0 &&
      this.options.exactRelease &&
      (await this.writersEnded(hole))
    ) {
      if (await this.anyCommitted(from, to)) return true;
      await execute(this.dataSource.manager, raisePassedPosition(to));
      await execute(
        this.dataSource.manager,
        recordSkipped(from, to, heldMs, this.options.lateWatchMs, true),
      );
      this.counters.holesReleasedExactly += 1;
      this.position = to;
      this.hole = null;
      return true;
    }
    if (heldMs >= this.options.gapTimeoutMs) {
      if (await this.anyCommitted(from, to)) return true;
      await execute(this.dataSource.manager, raisePassedPosition(to));
      await execute(
        this.dataSource.manager,
        recordSkipped(from, to, heldMs, this.options.lateWatchMs),
      );
      this.counters.holesAbandoned += 1;
      this.logger.warn(
        `Hole ${from}..${to} abandoned after ${heldMs} ms (gapTimeoutMs ${this.options.gapTimeoutMs}); a row committing there later is reported as a late arrival`,
      );
      this.position = to;
      this.hole = null;
      return true;
    }
    return false;
  }

  private async listWriters(): Promise<Pick<Hole, 'writers' | 'xmax' | 'exact'>> {
    const rows = await execute<{
      pid: number | null;
      xact_start: string | null;
      application_name: string | null;
      xmax: string;
    }>(this.dataSource.manager, readLogWriters());
    const xmax = rows[0].xmax;
    const writers: HoleWriter[] = rows
      .filter((r) => r.pid !== null)
      .map((r) => ({
        pid: r.pid!,
        xactStart: r.xact_start ?? '',
        applicationName: r.application_name ?? '',
      }));
    // Without the xact_start of other sessions (no privilege to see them) fall back to xmax.
    const exact = writers.every((w) => w.xactStart !== '');
    return { writers: writers.sort((a, b) => a.xactStart.localeCompare(b.xactStart)), xmax, exact };
  }

  private async writersEnded(hole: Hole): Promise<boolean> {
    if (!hole.exact) {
      const [row] = await execute<{ passed: boolean }>(
        this.dataSource.manager,
        snapshotPassed(hole.xmax),
      );
      return row.passed;
    }
    if (hole.writers.length === 0) return true;
    const [row] = await execute<{ running: number }>(
      this.dataSource.manager,
      countRunning(
        hole.writers.map((w) => w.pid),
        hole.writers.map((w) => w.xactStart),
      ),
    );
    return row.running === 0;
  }

  private async anyCommitted(from: number, to: number): Promise<boolean> {
    const rows = await execute(this.dataSource.manager, readPositionsBetween(from, to));
    return rows.length > 0;
  }
}
