import type { StoredMessage } from '../message.js';
import type { CoveredRead } from '../reader/log-reader.service.js';
import type { ReadFilter } from '../sql/index.js';
import { compileFilter } from './feed-filter.js';
import type { FeedMessage, FeedOptions, LogFeed } from './log-feed.js';
import type { Mailbox, PassedMark } from './mailbox.js';
import type { BudgetHolder } from './page-budget.js';
import { renderedJson } from '../row-mapper.js';

/** Catch-up reads in flight for a feed without a type filter (one for a filtered feed). */
const REPLAY_DEPTH = 2;
/**
 * Rows of a feed's first rendered page, before it knows how large its rows are: a first page of
 * 1,000 rows of 100 KB would make PostgreSQL render 100 MB to keep `pageBytes` of it.
 */
const FIRST_PAGE_ROWS = 100;

/** What a feed needs from the router: registration, the safe head, covered reads and the late watch. */
export interface FeedSource {
  /** Resolves once the router knows its delivered position. */
  readonly ready: Promise<void>;
  readonly replayBatchSize: number;
  /** Most bytes of JSON in one rendered page (a page stops after the row that reaches it). */
  readonly pageBytes: number;
  readonly mailboxLimit: number;
  /**
   * Holds a catch-up page against the bytes all droppable feeds may hold (may drop feeds, this
   * one too); `release` when done with it, `releaseAll` when closed.
   */
  hold(feed: RouterFeed, read: CoveredRead): void;
  release(feed: RouterFeed, read: CoveredRead): void;
  releaseAll(feed: RouterFeed): void;
  /** Registers a mailbox (`onPassed`: told of passed positions as they are passed); null when the router is shut down. */
  attach(
    limit: number,
    accepts: ((message: StoredMessage) => boolean) | null,
    onPassed: (mark: PassedMark) => void,
  ): Mailbox | null;
  detach(mailbox: Mailbox): void;
  /** Counts a suspension (metrics). */
  suspended(): void;
  safeHead(): Promise<number>;
  /**
   * A covered read after `after` up to `upTo` (at most a safe head read before), perhaps
   * another feed's read of the same page; `rendered`: RenderedMessage rows.
   */
  read(
    after: number,
    limit: number,
    filter: Pick<ReadFilter, 'types' | 'tenant'>,
    upTo: number,
    rendered: boolean,
  ): Promise<CoveredRead>;
  /** Abandoned positions at or below `upTo` whose row has not arrived (a feed resuming from a bookmark). */
  openSkipped(
    upTo: number,
    arrivedSince: Date | null,
  ): Promise<{ positions: number[]; xmax: string; since?: Date }>;
  /**
   * Watches positions this feed passed inside abandoned holes (`since`: when the first was
   * recorded); an arrival comes back as `offerLate`, a position found final as `settle`.
   */
  watch(feed: RouterFeed, positions: number[], xmax: string, since?: Date): void;
  unwatch(feed: RouterFeed): void;
  /** The watch's latest time before any claim of an arrival at `position`, if it knows one. */
  missingSince(position: number): Date | undefined;
}

/** A time before every claim: what a feed owes from when it cannot tell better (it repeats, never misses). */
const EVER = new Date(0);

/**
 * One feed (R2, R3): register with the router first, replay `(position, head]` from the
 * database in batches (the next batch is read while this one is consumed), then drain the
 * mailbox dropping anything at or below the position. An overflowed mailbox is dropped and
 * the same steps run again from the position, so the feed rejoins live without a seam.
 *
 * The position only ever moves over what a read covered or the router handed over, so a
 * feed never passes a position it has not seen. Positions it passed inside abandoned holes
 * (concurrent mode) are watched; a row that commits there later is yielded marked `late`.
 *
 * A feed opened with `onDropped` (an SSE stream) counts the catch-up pages it holds against the
 * router's bound for all such feeds, which may drop it: it closes, and `onDropped` tells its
 * consumer, who resumes from its bookmark.
 */
export class RouterFeed implements LogFeed, BudgetHolder {
  readonly headAtOpen: Promise<number>;
  private pos: number;
  private readonly start: number;
  private done = false;
  private closed = false;
  private iterated = false;
  private mailbox: Mailbox | null = null;
  private readonly toIndex: number;
  private readonly accepts: ((message: StoredMessage) => boolean) | null;
  /** Late arrivals not yielded yet, each with a time before its claim (it is owed from then). */
  private readonly late: { message: FeedMessage; since: Date }[] = [];
  /**
   * Positions this feed passed without a row (or, resuming, below its start) and waits on,
   * each with when it was recorded (a time before any claim of an arrival there).
   */
  private readonly watched = new Map<number, Date>();
  /**
   * Rows a rendered page asks for: FIRST_PAGE_ROWS at first, then what fits `pageBytes` at
   * the size of the rows read last, so that PostgreSQL renders about the rows a page keeps
   * (and a ranged read covers its whole range) however large the messages are.
   */
  private rowsPerPage: number;

  constructor(
    private readonly source: FeedSource,
    private readonly options: FeedOptions,
  ) {
    this.accepts = compileFilter(options);
    this.start = Math.max(1, Math.floor(options.fromIndex));
    this.pos = this.start - 1;
    // No end without one: not MAX_SAFE_INTEGER, a real position, which a feed resumed at it
    // would count as passed and complete at once.
    this.toIndex = options.toIndex ?? Number.POSITIVE_INFINITY;
    // Only rendered pages are bounded in bytes; the others keep the batch size.
    this.rowsPerPage = options.rendered
      ? Math.min(source.replayBatchSize, FIRST_PAGE_ROWS)
      : source.replayBatchSize;
    this.headAtOpen = this.join(true);
    this.headAtOpen.catch(() => undefined);
  }

  get position(): number {
    return this.pos;
  }

  get completed(): boolean {
    return this.done;
  }

  get arrivedSince(): Date | null {
    let since: Date | null = null;
    for (const [position, recorded] of this.watched) {
      const known = this.source.missingSince(position) ?? recorded;
      if (since === null || known < since) since = known;
    }
    for (const { since: owed } of this.late) if (since === null || owed < since) since = owed;
    return since;
  }

  close(): void {
    this.closed = true;
    this.leave();
    this.source.unwatch(this);
    this.source.releaseAll(this);
  }

  /** The router's page bound dropped this feed: it closes, and its consumer is told. */
  drop(): void {
    if (this.closed) return;
    this.close();
    this.options.onDropped?.();
  }

  suspend(): void {
    if (this.closed || this.mailbox === null || this.mailbox.overflowed) return;
    this.source.detach(this.mailbox);
    this.mailbox.drop();
    this.source.suspended();
  }

  /**
   * A row committed at a position this feed watches: it is yielded marked late, once the feed
   * has passed that position; false when the feed does not watch it or its filter refuses it.
   */
  offerLate(message: StoredMessage, since?: Date): boolean {
    const recorded = this.watched.get(message.id);
    if (this.closed || !this.watched.delete(message.id)) return false;
    if (this.accepts !== null && !this.accepts(message)) return false;
    this.late.push({ message: { ...message, late: true }, since: since ?? recorded ?? EVER });
    this.mailbox?.poke();
    return true;
  }

  /** A position this feed watched is final without a row: nothing can arrive there any more. */
  settle(position: number): void {
    this.watched.delete(position);
  }

  [Symbol.asyncIterator](): AsyncIterator<FeedMessage> {
    if (this.iterated) throw new Error('A LogFeed can be iterated only once; open another feed');
    this.iterated = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<FeedMessage> {
    try {
      let target = await this.headAtOpen;
      for (;;) {
        yield* this.replay(Math.min(target, this.toIndex));
        if (this.finished()) return;
        yield* this.live();
        if (this.finished()) return;
        // The mailbox overflowed: catch up from the database and rejoin live.
        this.leave();
        target = await this.join(false);
      }
    } finally {
      this.leave();
      this.source.unwatch(this);
      this.source.releaseAll(this);
    }
  }

  /**
   * Registers a fresh mailbox and returns the replay target: a safe head read after the
   * registration, so every index up to it is final and visible, and every later one reaches
   * the mailbox (the router never hands out past the safe head).
   */
  private async join(first: boolean): Promise<number> {
    await this.source.ready;
    if (this.closed) return this.pos;
    if (first && this.options.watchAbandonedBelow && this.pos > 0) {
      const open = await this.source.openSkipped(
        this.pos,
        this.options.watchAbandonedBelow.arrivedSince ?? null,
      );
      if (this.closed) return this.pos;
      this.watch(open.positions, open.xmax, open.since);
    }
    this.mailbox = this.source.attach(
      this.options.mailboxLimit ?? this.source.mailboxLimit,
      this.accepts,
      // Positions the router passed inside abandoned holes: ours if we have not passed them yet.
      (mark) =>
        this.watch(
          mark.passed.filter((p) => p > this.pos && p <= this.toIndex),
          mark.xmax,
          mark.since,
        ),
    );
    if (this.mailbox === null) {
      this.closed = true;
      return this.pos;
    }
    const head = await this.source.safeHead();
    return Math.max(head, this.mailbox.registeredAt);
  }

  private leave(): void {
    if (this.mailbox === null) return;
    this.source.detach(this.mailbox);
    this.mailbox.close();
    this.mailbox = null;
  }

  private finished(): boolean {
    if (this.pos >= this.toIndex) this.done = true;
    return this.done || this.closed;
  }

  /** Late arrivals at positions the feed has passed by now (a slow feed may not have reached one yet). */
  private *takeLate(): Generator<FeedMessage> {
    for (let i = 0; i < this.late.length && !this.closed;) {
      if (this.late[i].message.id > this.pos) i++;
      else yield this.late.splice(i, 1)[0].message;
    }
  }

  private watch(positions: number[], xmax: string, since?: Date): void {
    if (positions.length === 0) return;
    for (const position of positions) this.watched.set(position, since ?? EVER);
    this.source.watch(this, positions, xmax, since);
  }

  private passed(read: CoveredRead): void {
    this.watch(read.skipped, read.xmax, read.since);
  }

  /**
   * Replays `(position, upTo]` in covered reads of `replayBatchSize`. A feed without a type
   * filter (whose pages therefore hold every row of their range) reads by index range,
   * `(after, after + batch]`, which such a read always covers whole: the next range is known
   * before this one returns, so REPLAY_DEPTH reads are in flight while the feed's consumer
   * writes. A filtered feed reads the next page after this one's end (one in flight).
   */
  private async *replay(upTo: number): AsyncGenerator<FeedMessage> {
    const rendered = this.options.rendered ?? false;
    const ranged =
      (!this.options.types || this.options.types.length === 0) && this.options.tenant === undefined;
    const filter = { types: this.options.types, tenant: this.options.tenant };
    const depth = ranged ? REPLAY_DEPTH : 1;
    const queue: { rows: Promise<CoveredRead>; bound: number }[] = [];
    let after = this.pos;
    const fill = () => {
      while (queue.length < depth && after < upTo && !this.closed) {
        const batch = this.rowsPerPage;
        const bound = ranged ? Math.min(upTo, after + batch) : upTo;
        const rows = this.source.read(after, batch, filter, bound, rendered);
        rows.then(
          (read) => this.hold(read),
          () => undefined,
        );
        queue.push({ rows, bound });
        // A filtered read's end is known only when it returns.
        if (!ranged) return;
        after = bound;
      }
    };
    fill();
    while (queue.length > 0) {
      const { rows, bound } = queue.shift()!;
      const result = await rows;
      if (rendered) this.sizePages(result);
      if (result.to < bound) {
        // A page that ended early (filtered, or a range that did not cover itself): read on from where it ended.
        for (const discarded of queue)
          discarded.rows.then(
            (read) => this.release(read),
            () => undefined,
          );
        queue.length = 0;
        after = result.to;
      } else if (!ranged) after = result.to;
      fill();
      // Watched before the page's messages are yielded: a consumer that saves its bookmark at
      // one of them takes `arrivedSince` with the positions it passed below it.
      this.passed(result);
      if (this.options.beforePage && result.messages.length > 0)
        await this.options.beforePage(result.messages);
      for (const message of result.messages) {
        if (this.closed) return;
        // Read the ordinary way after all (a replay after an overflow): not late any more.
        if (this.watched.size > 0) this.watched.delete(message.id);
        this.pos = message.id;
        if (this.accepts === null || this.accepts(message)) yield message;
      }
      this.release(result);
      if (this.closed) return;
      this.pos = Math.max(this.pos, result.to);
      yield* this.takeLate();
    }
  }

  /** Sizes the next pages from this one's rows: as many as fit `pageBytes`, at least one. */
  private sizePages(read: CoveredRead): void {
    if (read.messages.length === 0) return;
    let bytes = 0;
    for (const message of read.messages) bytes += renderedJson(message)?.length ?? 0;
    const perRow = Math.max(1, bytes / read.messages.length);
    this.rowsPerPage = Math.max(
      1,
      Math.min(this.source.replayBatchSize, Math.floor(this.source.pageBytes / perRow)),
    );
  }

  /** Counts a page this feed holds (a droppable feed only). */
  private hold(read: CoveredRead): void {
    if (this.options.onDropped !== undefined && !this.closed) this.source.hold(this, read);
  }

  private release(read: CoveredRead): void {
    if (this.options.onDropped !== undefined) this.source.release(this, read);
  }

  private async *live(): AsyncGenerator<FeedMessage> {
    const mailbox = this.mailbox;
    if (mailbox === null) return;
    for (;;) {
      yield* this.takeLate();
      if (this.closed || mailbox.closed) {
        this.closed = true;
        return;
      }
      if (this.pos >= this.toIndex) return;
      const item = mailbox.take();
      if (item !== undefined) {
        if (item.id <= this.pos) continue;
        if (item.id > this.toIndex) {
          this.pos = this.toIndex;
          return;
        }
        this.pos = item.id;
        yield item;
        continue;
      }
      if (mailbox.overflowed) return;
      // Everything the router delivered up to seenUpTo has been taken: the rest was filtered out.
      if (mailbox.seenUpTo > this.pos) this.pos = Math.min(mailbox.seenUpTo, this.toIndex);
      if (this.pos >= this.toIndex) return;
      await mailbox.wait();
    }
  }
}
