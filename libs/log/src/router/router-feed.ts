import type { StoredMessage } from '../message.js';
import { compileFilter } from './feed-filter.js';
import type { FeedOptions, LogFeed } from './log-feed.js';
import type { Mailbox } from './mailbox.js';

/** What a feed needs from the router: registration, the safe head and page reads. */
export interface FeedSource {
  /** Resolves once the router knows its delivered position. */
  readonly ready: Promise<void>;
  readonly replayBatchSize: number;
  readonly mailboxLimit: number;
  /** Registers a mailbox; null when the router is shut down. */
  attach(limit: number, accepts: ((message: StoredMessage) => boolean) | null): Mailbox | null;
  detach(mailbox: Mailbox): void;
  safeHead(): Promise<number>;
  page(fromIndex: number, limit: number, types: string[] | undefined, toIndex: number): Promise<StoredMessage[]>;
}

/**
 * One feed (R2, R3): register with the router first, replay `(position, head]` from the
 * database in batches (the next batch is read while this one is consumed), then drain the
 * mailbox dropping anything at or below the position. An overflowed mailbox is dropped and
 * the same steps run again from the position, so the feed rejoins live without a seam.
 */
export class RouterFeed implements LogFeed {
  readonly headAtOpen: Promise<number>;
  private pos: number;
  private done = false;
  private closed = false;
  private iterated = false;
  private mailbox: Mailbox | null = null;
  private readonly toIndex: number;
  private readonly accepts: ((message: StoredMessage) => boolean) | null;

  constructor(
    private readonly source: FeedSource,
    private readonly options: FeedOptions,
  ) {
    this.accepts = compileFilter(options);
    this.pos = Math.max(1, Math.floor(options.fromIndex)) - 1;
    this.toIndex = options.toIndex ?? Number.MAX_SAFE_INTEGER;
    this.headAtOpen = this.join();
    this.headAtOpen.catch(() => undefined);
  }

  get position(): number {
    return this.pos;
  }

  get completed(): boolean {
    return this.done;
  }

  close(): void {
    this.closed = true;
    this.leave();
  }

  [Symbol.asyncIterator](): AsyncIterator<StoredMessage> {
    if (this.iterated) throw new Error('A LogFeed can be iterated only once; open another feed');
    this.iterated = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<StoredMessage> {
    try {
      let target = await this.headAtOpen;
      for (;;) {
        yield* this.replay(Math.min(target, this.toIndex));
        if (this.finished()) return;
        yield* this.live();
        if (this.finished()) return;
        // The mailbox overflowed: catch up from the database and rejoin live.
        this.leave();
        target = await this.join();
      }
    } finally {
      this.leave();
    }
  }

  /** Registers a fresh mailbox and returns the replay target (every index up to it is read from the database). */
  private async join(): Promise<number> {
    await this.source.ready;
    if (this.closed) return this.pos;
    this.mailbox = this.source.attach(this.options.mailboxLimit ?? this.source.mailboxLimit, this.accepts);
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

  private async *replay(upTo: number): AsyncGenerator<StoredMessage> {
    const batch = this.source.replayBatchSize;
    const read = (from: number) => {
      const rows = this.source.page(from, batch, this.options.types, upTo);
      rows.catch(() => undefined);
      return rows;
    };
    let next = this.pos < upTo && !this.closed ? read(this.pos + 1) : null;
    while (next !== null) {
      const rows = await next;
      const last = rows.length > 0 ? rows[rows.length - 1].id : upTo;
      next = rows.length === batch && last < upTo ? read(last + 1) : null;
      for (const message of rows) {
        if (this.closed) return;
        this.pos = message.id;
        if (this.accepts === null || this.accepts(message)) yield message;
      }
    }
    if (!this.closed && this.pos < upTo) this.pos = upTo;
  }

  private async *live(): AsyncGenerator<StoredMessage> {
    const mailbox = this.mailbox;
    if (mailbox === null) return;
    for (;;) {
      if (this.closed || mailbox.closed) {
        this.closed = true;
        return;
      }
      if (this.pos >= this.toIndex) return;
      const message = mailbox.take();
      if (message !== undefined) {
        if (message.id <= this.pos) continue;
        if (message.id > this.toIndex) {
          this.pos = this.toIndex;
          return;
        }
        this.pos = message.id;
        yield message;
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
