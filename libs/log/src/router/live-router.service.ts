import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { STREAM_DELETED_TYPE, type StoredMessage } from '../message.js';
import { LIFECYCLE_NOTICE, LOG_CHANNEL } from '../log.constants.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions } from '../log-options.js';
import { LogReader } from '../reader/log-reader.service.js';
import { LogWriter } from '../writer/log-writer.service.js';
import { LogWatermark } from '../watermark/log-watermark.service.js';
import { LateTracker } from '../late/late-tracker.js';
import { notifyLog, readOpenSkipped } from '../sql/index.js';
import { execute } from '@ordinal/pg';
import { toPosition } from '@ordinal/pg';
import { listenerClientConfig } from './listener-config.js';
import type { FeedOptions, LogFeed } from './log-feed.js';
import { Mailbox, type PassedMark } from './mailbox.js';
import { NotifyListener } from './notify-listener.js';
import { RouterFeed, type FeedSource } from './router-feed.js';
import { SharedReads } from './shared-reads.js';
import { PageBudget } from './page-budget.js';
import { renderedJson } from '../row-mapper.js';
import type { CoveredRead } from '../reader/log-reader.service.js';

/** Figures of the router, for metrics and tests. */
export interface LiveRouterStats {
  /** The highest index handed to the feeds' mailboxes (or known to exist, with no feed open). */
  deliveredUpTo: number;
  feeds: number;
  /** Live messages waiting in all mailboxes now. */
  queued: number;
  /** The most messages one mailbox ever held (never above its bound). */
  peakMailbox: number;
  /** Mailboxes dropped for exceeding their bound (their feeds caught up from the database). */
  overflows: number;
  /** Page reads of new rows (a batch of the process's own commits needs none). */
  databaseReads: number;
  /** Own committed batches delivered without a read. */
  directDeliveries: number;
  /** Catch-up pages a feed took from another feed's read of the same range instead of the database. */
  sharedReads: number;
  /** Catch-up pages kept for feeds just behind (dropped 2 s after they were read). */
  sharedPagesKept: number;
  /** Lifecycle changes (a delete, metadata, a category rule, from any process) told by NOTIFY: each dropped the kept pages. */
  lifecycleNotices: number;
  /** Feeds suspended by their consumer (an SSE stream whose socket was full): they left live and caught up from the database. */
  suspensions: number;
  /** Droppable feeds (SSE streams) dropped to keep their catch-up pages within `streamsBufferBytes`. */
  drops: number;
  /** Bytes of catch-up pages droppable feeds hold now (a shared page once). */
  pagesHeldBytes: number;
  /** Passed positions without a row (abandoned or released exactly) that some open feed watches for a late arrival. */
  lateWatched: number;
  /** Late arrivals handed to feeds (one per feed that had passed the position). */
  lateDeliveries: number;
  /** LISTEN is established (else only own commits and the poll wake the router). */
  listening: boolean;
  /** The router is at work now (delivering, or reading the database); false when idle. */
  busy: boolean;
}

/**
 * What the router tells the other services of its process (`onNotice`), so that they wait for
 * NOTIFY instead of polling the database:
 * - `head`: the log reached `head` beyond anything the router had heard of (another process's
 *   commit, told by NOTIFY as soon as it arrives, or found by the router's own poll);
 * - `notice`: a NOTIFY on the log's channel that is neither a head nor the router's own
 *   (another library's: a consumer request, a projection build changed);
 * - `delivery`: `notifyVerified` changed (NOTIFY is heard now, or no longer: poll meanwhile).
 */
export type RouterNotice =
  | { kind: 'head'; head: number }
  | { kind: 'notice'; payload: string }
  | { kind: 'delivery'; verified: boolean };

/** Payloads of the router's delivery probes start with this (followed by the router's id and a count). */
const PROBE_PREFIX = 'probe:';
/**
 * How often the router checks that NOTIFY reaches it (a NOTIFY of its own through the pool,
 * heard on its LISTEN connection), and how long it waits for it. A LISTEN that succeeded may
 * still hear nothing: through a transaction pooler (PgBouncer) it lands on a lent server
 * connection, and a connection that died silently reports no error until TCP gives up. Until a
 * probe is heard, and from a probe not heard in time, `notifyVerified` is false.
 */
const PROBE_EVERY_MS = 30_000;
const PROBE_TIMEOUT_MS = 2_000;

/** Own batches kept while a read is in flight; beyond this the read covers them. */
const MAX_PENDING_OWN = 256;
/**
 * A NOTIFY can overtake the writer's own commit callback (two sockets). Waiting this long
 * before trusting it lets the own batch arrive first, so an own commit is not read back.
 */
const NOTIFY_GRACE_MS = 10;

/**
 * When this process has a flush in flight as the grace ends, the NOTIFY may be that flush's
 * commit, whose callback is late (a loaded event loop): wait for the flush to settle, at most
 * this long (a NOTIFY of another process's commit must not wait on a slow flush of ours).
 */
const NOTIFY_FLUSH_WAIT_MS = 250;
/**
 * Concurrent mode with no feed open: the router still reads the safe head (its position stays
 * a recent safe head for a feed that joins, and the watermark goes on recording holes, which
 * replica readers follow), but at most this often, not after every own commit: each read is a
 * watermark step, which cost about a third of PostgreSQL's CPU per message under load.
 */
const IDLE_READ_MS = 50;
/** What a message's fields besides body and metadata take in a buffer, about (bytes). */
const MESSAGE_OVERHEAD_BYTES = 400;

/** The bytes of JSON text of a page read rendered. */
function pageBytes(read: CoveredRead): number {
  let bytes = 0;
  for (const message of read.messages) bytes += renderedJson(message)?.length ?? 0;
  return bytes;
}

/**
 * The one live router of a process (L5). Woken by its own commits (LogWriter.onCommit), by
 * NOTIFY from other processes and by a slow poll, it reads `(deliveredUpTo, safeHead]` once
 * and hands the rows to every feed's mailbox, strictly in index order. Own commits that
 * continue `deliveredUpTo` are delivered without reading (gapless mode). Feeds come from
 * `open`.
 *
 * `deliveredUpTo` is a safe head the router has read up to (or, in gapless mode, a committed
 * head: nothing below it can appear): never merely the highest index heard of. A feed that
 * registers takes it as the start of its mailbox, so a position above the safe head there
 * would be a position nobody reads. In concurrent mode the router also keeps the one late
 * watch of all its feeds: positions they passed without a row (abandoned holes, exact
 * releases while watched), looked up every
 * `lateRescanMs` (and when the watermark reports an arrival); an arrival goes to each feed
 * that passed it, marked late.
 */
@Injectable()
export class LiveRouter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LiveRouter.name);
  private readonly mailboxes = new Set<Mailbox>();
  private readonly listener: NotifyListener;
  private readonly stopCommits: () => void;
  private readonly stopFlushes: () => void;
  private readonly source: FeedSource;
  private markReady!: () => void;
  private readonly ready = new Promise<void>((resolve) => (this.markReady = resolve));
  private delivered = 0;
  private knownHead = 0;
  private own: StoredMessage[][] = [];
  private started = false;
  private closed = false;
  private wakeRequested = false;
  private readRequested = false;
  private pumping = false;
  private pumpDone: Promise<void> = Promise.resolve();
  private failing = false;
  private pollTimer: NodeJS.Timeout | null = null;
  private graceTimer: NodeJS.Timeout | null = null;
  private notifyWaitsOnFlush = false;
  private notifiedHead = 0;
  private idleReadAt = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly counters = {
    peakMailbox: 0,
    overflows: 0,
    databaseReads: 0,
    lifecycleNotices: 0,
    directDeliveries: 0,
    lateDeliveries: 0,
    suspensions: 0,
  };
  private readonly late = new LateTracker();
  private readonly watchers = new Map<number, Set<RouterFeed>>();
  private lateTimer: NodeJS.Timeout | null = null;
  private lateChecking: Promise<void> | null = null;
  private lateAgain = false;
  private readonly stopLate: () => void;
  private readonly sharedReads = new SharedReads();
  private readonly budget: PageBudget;
  private readonly noticeListeners = new Set<(notice: RouterNotice) => void>();
  private readonly probeId = randomUUID();
  private probeSeq = 0;
  /** The payload of the probe sent and not heard yet. */
  private probePending: string | null = null;
  private probeTimer: NodeJS.Timeout | null = null;
  private probeDeadline: NodeJS.Timeout | null = null;
  private verified = false;
  /** Bytes of own committed messages (the writer knows them), for the mailboxes' byte bound. */
  private readonly liveBytes = new WeakMap<StoredMessage, number>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly writer: LogWriter,
    private readonly reader: LogReader,
    watermark: LogWatermark,
    @Inject(LOG_MODULE_OPTIONS) private readonly options: ResolvedLogOptions,
  ) {
    this.budget = new PageBudget(this.options.streamsBufferBytes);
    this.stopCommits = writer.onCommit((batch, bytes, hidden) =>
      this.onOwnCommit(batch, bytes, hidden),
    );
    // A flush settles after its commit callback: a NOTIFY waiting on it can be trusted then.
    this.stopFlushes = writer.onFlush(() => {
      if (this.notifyWaitsOnFlush) this.trustNotify();
    });
    this.stopLate = watermark.onLate(() => this.checkLate());
    this.listener = new NotifyListener({
      client: listenerClientConfig(dataSource),
      channel: LOG_CHANNEL,
      onNotify: (payload) => this.onNotify(payload),
      onConnected: () => {
        this.wake(true);
        void this.probe();
      },
      onLost: () => {
        // A probe in flight is not heard now: the next connection sends its own.
        this.probePending = null;
        if (this.probeDeadline) clearTimeout(this.probeDeadline);
        this.probeDeadline = null;
        this.setVerified(false);
      },
    });
    this.source = {
      ready: this.ready,
      replayBatchSize: this.options.replayBatchSize,
      mailboxLimit: this.options.mailboxLimit,
      attach: (limit, accepts, onPassed) => this.attach(limit, accepts, onPassed),
      detach: (mailbox) => this.mailboxes.delete(mailbox),
      suspended: () => this.counters.suspensions++,
      safeHead: () => this.reader.safeHead(),
      // A rendered page (an SSE stream's) is bounded in bytes too: three in hand make half a stream's bound.
      pageBytes: Math.floor(this.options.streamBufferBytes / 6),
      read: (after, limit, filter, upTo, rendered) => {
        const maxBytes = rendered ? this.source.pageBytes : Number.MAX_SAFE_INTEGER;
        return this.sharedReads.read(after, limit, filter, upTo, rendered, maxBytes, () =>
          this.reader.readUpTo(after, limit, filter, upTo, rendered, maxBytes),
        );
      },
      hold: (feed, read) => {
        if (read.messages.length > 0) this.budget.hold(feed, read.messages[0], pageBytes(read));
      },
      release: (feed, read) => {
        if (read.messages.length > 0) this.budget.release(feed, read.messages[0]);
      },
      releaseAll: (feed) => this.budget.releaseAll(feed),
      openSkipped: async (upTo, arrivedSince) => {
        if (this.options.ordering !== 'concurrent') return { positions: [], xmax: '0' };
        const rows = await execute<{ position: string; xmax: string; recorded_at: Date }>(
          this.dataSource.manager,
          readOpenSkipped(upTo, arrivedSince),
        );
        // No claim of an arrival at one of them is stamped before its record.
        let since: Date | undefined;
        for (const r of rows)
          if (since === undefined || r.recorded_at < since) since = r.recorded_at;
        return {
          positions: rows.map((r) => toPosition(r.position)),
          xmax: rows[0]?.xmax ?? '0',
          since,
        };
      },
      watch: (feed, positions, xmax, since) => this.watch(feed, positions, xmax, since),
      unwatch: (feed) => this.unwatch(feed),
      missingSince: (position) => this.late.missingSince(position),
    };
  }

  /**
   * Opens a feed from `fromIndex`: history, then live, without a seam. Throws a RangeError
   * for a malformed shard. The feed must be closed (or iterated to its end).
   */
  open(options: FeedOptions): LogFeed {
    return new RouterFeed(this.source, options);
  }

  /**
   * Whether NOTIFY reaches this process now: LISTEN is established and the last probe (a
   * NOTIFY of its own through the pool, every PROBE_EVERY_MS) was heard in time. While true,
   * other processes' commits and notices are told at once (`onNotice`), and a service may poll
   * the database rarely; while false it must poll as often as it wants to react.
   */
  get notifyVerified(): boolean {
    return this.verified && this.listener.connected;
  }

  /**
   * Listens to what the router hears (RouterNotice): heads beyond what it knew, other
   * libraries' notices, and changes of `notifyVerified`. Returns the unsubscribe.
   */
  onNotice(listener: (notice: RouterNotice) => void): () => void {
    this.noticeListeners.add(listener);
    return () => this.noticeListeners.delete(listener);
  }

  /** The highest index handed to the feeds so far. */
  get deliveredUpTo(): number {
    return this.delivered;
  }

  stats(): LiveRouterStats {
    let queued = 0;
    for (const mailbox of this.mailboxes) queued += mailbox.size;
    return {
      deliveredUpTo: this.delivered,
      feeds: this.mailboxes.size,
      queued,
      lateWatched: this.watchers.size,
      listening: this.listener.connected,
      busy: this.pumping,
      sharedReads: this.sharedReads.shared,
      sharedPagesKept: this.sharedReads.kept,
      drops: this.budget.dropped,
      pagesHeldBytes: this.budget.bytes,
      ...this.counters,
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    // The safe head, not the highest index heard of: own commits before this (a StartMarker
    // in concurrent mode, say) may sit above a hole.
    this.delivered = await this.reader.safeHead();
    this.knownHead = Math.max(this.knownHead, this.delivered);
    this.started = true;
    this.markReady();
    this.listener.start();
    this.pollTimer = setInterval(() => this.wake(true), this.options.livePollMs);
    this.pollTimer.unref();
    this.probeTimer = setInterval(() => void this.probe(), PROBE_EVERY_MS);
    this.probeTimer.unref();
    this.wake(false);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.stopCommits();
    this.stopFlushes();
    this.stopLate();
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.probeTimer) clearInterval(this.probeTimer);
    if (this.probeDeadline) clearTimeout(this.probeDeadline);
    this.noticeListeners.clear();
    if (this.lateTimer) clearInterval(this.lateTimer);
    if (this.graceTimer) clearTimeout(this.graceTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    for (const mailbox of this.mailboxes) mailbox.close();
    this.mailboxes.clear();
    this.sharedReads.clear();
    this.markReady();
    await this.listener.stop();
    await this.pumpDone;
  }

  private attach(
    limit: number,
    accepts: ((message: StoredMessage) => boolean) | null,
    onPassed: (mark: PassedMark) => void,
  ): Mailbox | null {
    if (this.closed) return null;
    // Half a stream's byte bound: its catch-up pages may take the other half.
    const mailbox = new Mailbox(
      this.delivered,
      limit,
      accepts,
      Math.floor(this.options.streamBufferBytes / 2),
      onPassed,
    );
    this.mailboxes.add(mailbox);
    return mailbox;
  }

  /**
   * Drops the catch-up pages kept for feeds a little behind: a delete or a retention rule has
   * just hidden messages (docs/lifecycle.md), and a read that starts after it must get their
   * tombstones, not a page read before it.
   */
  forgetKeptReads(): void {
    this.sharedReads.clear();
  }

  private onOwnCommit(
    batch: StoredMessage[],
    bytes: readonly number[],
    hiddenAtAppend: boolean,
  ): void {
    if (this.closed || batch.length === 0) return;
    if (batch.some((m) => m.messageType === STREAM_DELETED_TYPE)) this.forgetKeptReads();
    // A batch with messages hidden as they commit is read back (as tombstones), never handed out.
    if (hiddenAtAppend) {
      this.knownHead = Math.max(this.knownHead, batch[batch.length - 1].id);
      return this.wake(true);
    }
    if (this.mailboxes.size > 0)
      for (let i = 0; i < batch.length; i++) this.liveBytes.set(batch[i], bytes[i]);
    this.knownHead = Math.max(this.knownHead, batch[batch.length - 1].id);
    if (this.options.ordering !== 'gapless' || this.own.length >= MAX_PENDING_OWN)
      return this.wake(true);
    // Flushes in flight at once may answer out of order: keep own batches in index order.
    let at = this.own.length;
    while (at > 0 && this.own[at - 1][0].id > batch[0].id) at -= 1;
    this.own.splice(at, 0, batch);
    this.wake(false);
  }

  private onNotify(payload: string): void {
    if (payload.startsWith(PROBE_PREFIX)) {
      if (payload === this.probePending) {
        this.probePending = null;
        if (this.probeDeadline) clearTimeout(this.probeDeadline);
        this.probeDeadline = null;
        this.setVerified(true);
      }
      return;
    }
    if (payload === LIFECYCLE_NOTICE) {
      // Messages were hidden (or shown) by another transaction, maybe in another process:
      // pages read before it must not serve a read that starts after it.
      this.counters.lifecycleNotices++;
      this.forgetKeptReads();
      return;
    }
    const head = Number(payload);
    // Not a head: another library's notice (consumer requests, projection builds), for them.
    if (!Number.isSafeInteger(head)) return this.tell({ kind: 'notice', payload });
    // Told at once, without the grace: a listener reads the database, where the commit is.
    if (head > Math.max(this.delivered, this.knownHead, this.notifiedHead))
      this.tell({ kind: 'head', head });
    if (head <= this.delivered || this.closed) return;
    this.notifiedHead = Math.max(this.notifiedHead, head);
    if (this.graceTimer || this.notifyWaitsOnFlush) return;
    this.graceTimer = setTimeout(() => {
      this.graceTimer = null;
      if (this.writer.flushesInFlight === 0) return this.trustNotify();
      this.notifyWaitsOnFlush = true;
      this.graceTimer = setTimeout(() => {
        this.graceTimer = null;
        this.trustNotify();
      }, NOTIFY_FLUSH_WAIT_MS);
    }, NOTIFY_GRACE_MS);
  }

  /** Takes the notified head as known (an own commit applied meanwhile is not read back). */
  private trustNotify(): void {
    this.notifyWaitsOnFlush = false;
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = null;
    if (this.closed) return;
    this.knownHead = Math.max(this.knownHead, this.notifiedHead);
    this.wake(false);
  }

  private wake(read: boolean): void {
    if (read) this.readRequested = true;
    this.wakeRequested = true;
    if (this.pumping || !this.started || this.closed) return;
    this.pumpDone = this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.wakeRequested && !this.closed) {
        this.wakeRequested = false;
        this.applyOwn();
        // Gapless: every index up to a committed head is final, so with nobody listening the
        // router may move there without reading. Concurrent: only a read of the safe head may.
        if (
          this.mailboxes.size === 0 &&
          !this.readRequested &&
          this.options.ordering === 'gapless'
        ) {
          this.delivered = Math.max(this.delivered, this.knownHead);
          continue;
        }
        if (!this.readRequested && this.delivered >= this.knownHead) continue;
        if (
          this.mailboxes.size === 0 &&
          this.options.ordering !== 'gapless' &&
          this.deferIdleRead()
        )
          continue;
        this.readRequested = false;
        await this.readNew();
      }
      if (this.failing) this.logger.log(`Live router reads again from index ${this.delivered + 1}`);
      this.failing = false;
    } catch (error) {
      this.readRequested = true;
      if (!this.failing)
        this.logger.warn(
          `Live router cannot read after index ${this.delivered} (${String(error)}); retrying at the next poll`,
        );
      this.failing = true;
    } finally {
      this.pumping = false;
    }
  }

  /**
   * With nobody listening in concurrent mode, true while the last read is under IDLE_READ_MS
   * old: the read is put off to a timer (the request stays). False when it may read now.
   */
  private deferIdleRead(): boolean {
    const wait = this.idleReadAt + IDLE_READ_MS - Date.now();
    if (wait <= 0) {
      this.idleReadAt = Date.now();
      return false;
    }
    this.readRequested = true;
    this.idleTimer ??= setTimeout(() => {
      this.idleTimer = null;
      this.wake(true);
    }, wait);
    this.idleTimer.unref();
    return true;
  }

  /** Reads `(delivered, safeHead]` once, in pages, for every feed at once. */
  private async readNew(): Promise<void> {
    const head = await this.reader.safeHead();
    // A head no NOTIFY told of (it was lost, or never sent: a row written by hand): the poll is the net.
    if (head > Math.max(this.delivered, this.knownHead, this.notifiedHead))
      this.tell({ kind: 'head', head });
    this.knownHead = Math.max(this.knownHead, head);
    while (this.delivered < head && !this.closed) {
      if (this.mailboxes.size === 0) {
        // Nobody listens: nothing to hand out; a feed registering later replays from the database.
        this.delivered = head;
        return;
      }
      const read = await this.reader.readUpTo(
        this.delivered,
        this.options.replayBatchSize,
        {},
        head,
      );
      this.counters.databaseReads++;
      this.deliver(
        read.messages,
        read.to,
        read.skipped.length > 0
          ? { passed: read.skipped, xmax: read.xmax, since: read.since }
          : undefined,
      );
      this.applyOwn();
    }
  }

  private tell(notice: RouterNotice): void {
    if (this.closed) return;
    for (const listener of this.noticeListeners) listener(notice);
  }

  private setVerified(verified: boolean): void {
    if (this.verified === verified) return;
    this.verified = verified;
    this.tell({ kind: 'delivery', verified });
  }

  /**
   * Sends a NOTIFY of its own through the pool and waits PROBE_TIMEOUT_MS to hear it on the
   * LISTEN connection (onNotify): heard, `notifyVerified` is true; not heard, false.
   */
  private async probe(): Promise<void> {
    if (this.closed || !this.listener.connected || this.probePending !== null) return;
    // A standby refuses NOTIFY and forwards none: a replica reader polls (and runs no consumer).
    if (this.options.role === 'replica-reader') return;
    const payload = `${PROBE_PREFIX}${this.probeId}:${++this.probeSeq}`;
    this.probePending = payload;
    this.probeDeadline = setTimeout(() => {
      this.probeDeadline = null;
      if (this.probePending !== payload) return;
      this.probePending = null;
      if (this.verified || this.probeSeq === 1)
        this.logger.warn(
          `NOTIFY ${LOG_CHANNEL} was not heard back within ${PROBE_TIMEOUT_MS} ms; consumers poll until it is`,
        );
      this.setVerified(false);
    }, PROBE_TIMEOUT_MS);
    this.probeDeadline.unref();
    // A failed send is a probe not heard: the deadline says so.
    await execute(this.dataSource.manager, notifyLog(payload)).catch(() => undefined);
  }

  /** Delivers own committed batches that continue the delivered run; stops at a gap (a read fills it). */
  private applyOwn(): void {
    while (this.own.length > 0) {
      const batch = this.own[0];
      const last = batch[batch.length - 1].id;
      if (last <= this.delivered) {
        this.own.shift();
        continue;
      }
      if (this.mailboxes.size === 0) {
        this.delivered = last;
        this.own.shift();
        continue;
      }
      const fresh = batch.filter((m) => m.id > this.delivered);
      if (fresh[0].id !== this.delivered + 1) return;
      this.own.shift();
      this.counters.directDeliveries++;
      this.deliver(fresh);
    }
  }

  /** Hands messages (and the positions read past without a row) to every mailbox; moves `delivered` to `upTo`. */
  private deliver(
    messages: StoredMessage[],
    upTo = messages.at(-1)?.id ?? this.delivered,
    passed?: PassedMark,
  ): void {
    let start = 0;
    while (start < messages.length && messages[start].id <= this.delivered) start++;
    const fresh = start === 0 ? messages : messages.slice(start);
    if (upTo <= this.delivered) return;
    this.delivered = upTo;
    const sizes = this.mailboxes.size > 0 ? fresh.map((m) => this.sizeOf(m)) : [];
    for (const mailbox of this.mailboxes) {
      if (mailbox.offer(fresh, this.delivered, passed, sizes)) {
        if (mailbox.size > this.counters.peakMailbox) this.counters.peakMailbox = mailbox.size;
      } else {
        this.mailboxes.delete(mailbox);
        if (mailbox.overflowed) this.counters.overflows++;
      }
    }
  }

  /**
   * About the bytes a message takes in a mailbox: the writer's count for an own commit, else
   * (a row another process committed) its body and metadata serialised once.
   */
  private sizeOf(message: StoredMessage): number {
    const known = this.liveBytes.get(message) ?? renderedJson(message)?.length;
    if (known !== undefined) return known + MESSAGE_OVERHEAD_BYTES;
    const bytes =
      (JSON.stringify(message.body)?.length ?? 0) +
      (message.metadata === null ? 0 : JSON.stringify(message.metadata).length);
    this.liveBytes.set(message, bytes);
    return bytes + MESSAGE_OVERHEAD_BYTES;
  }

  private watch(feed: RouterFeed, positions: number[], xmax: string, since?: Date): void {
    if (this.closed) return;
    this.late.add(positions, xmax, since);
    for (const position of positions) {
      let feeds = this.watchers.get(position);
      if (!feeds) this.watchers.set(position, (feeds = new Set()));
      feeds.add(feed);
    }
    if (this.lateTimer === null) {
      this.lateTimer = setInterval(() => this.checkLate(), this.options.lateRescanMs);
      this.lateTimer.unref();
    }
    // Look at once too: a consumer resuming from its bookmark may watch rows that arrived already.
    this.checkLate();
  }

  private unwatch(feed: RouterFeed): void {
    for (const [position, feeds] of this.watchers) {
      if (feeds.delete(feed) && feeds.size === 0) this.forget(position);
    }
  }

  private forget(position: number): void {
    this.watchers.delete(position);
    this.late.forget(position);
    if (this.watchers.size === 0 && this.lateTimer !== null) {
      clearInterval(this.lateTimer);
      this.lateTimer = null;
    }
  }

  /** Looks the watched positions up once (one query for every feed); hands arrivals to the feeds that passed them. */
  private checkLate(): void {
    if (this.closed || this.watchers.size === 0) return;
    if (this.lateChecking) {
      this.lateAgain = true;
      return;
    }
    this.lateChecking = this.late
      .check(this.dataSource.manager)
      .then((arrived) => {
        for (const message of arrived) {
          // No claim of it is stamped before this: a feed that has not yielded it yet owes it from then.
          const since = this.late.missingSince(message.id);
          for (const feed of this.watchers.get(message.id) ?? []) {
            if (feed.offerLate(message, since)) this.counters.lateDeliveries++;
          }
          this.forget(message.id);
        }
        // Positions whose writers all ended without a row are final: nobody waits for them.
        const pending = new Set(this.late.positions());
        for (const position of [...this.watchers.keys()]) {
          if (pending.has(position)) continue;
          for (const feed of this.watchers.get(position) ?? []) feed.settle(position);
          this.forget(position);
        }
      })
      .catch((error: unknown) =>
        this.logger.warn(
          `Late-arrival check of ${this.watchers.size} positions failed: ${String(error)}; retrying`,
        ),
      )
      .finally(() => {
        this.lateChecking = null;
        if (this.lateAgain) {
          this.lateAgain = false;
          this.checkLate();
        }
      });
  }
}
