import type { StoredMessage } from '../message.js';

/**
 * Positions the router read past inside abandoned holes (concurrent mode), handed to the feed
 * as the router passes them, ahead of the batch that passed them.
 */
export interface PassedMark {
  readonly passed: number[];
  readonly xmax: string;
  /** When the first of them was recorded (CoveredRead's `since`). */
  readonly since?: Date;
}

/**
 * A feed's live buffer, filled by the router in index order. Bounded in messages and in bytes
 * (R3): the message that would exceed `limit` messages or `byteLimit` bytes empties it and
 * marks it overflowed; the router then drops it and the feed catches up from the database.
 */
export class Mailbox {
  private items: StoredMessage[] = [];
  /** The size in bytes of each item of `items`. */
  private sizes: number[] = [];
  private head = 0;
  /** Bytes of the messages waiting. */
  bytes = 0;
  private waiter: (() => void) | null = null;
  /** The router's delivered position when it last offered a batch (covers filtered-out ones). */
  seenUpTo: number;
  overflowed = false;
  closed = false;

  constructor(
    /** The router's delivered position at registration: every later index is offered here. */
    readonly registeredAt: number,
    private readonly limit: number,
    private readonly accepts: ((message: StoredMessage) => boolean) | null,
    private readonly byteLimit = Number.POSITIVE_INFINITY,
    /**
     * Told of passed positions at once, not when its consumer takes the batch after them: a
     * slow feed's watch starts when the router passes them, so a row arriving there while the
     * feed is still below is found, and yielded late as soon as the feed passes it.
     */
    private readonly onPassed: (mark: PassedMark) => void = () => undefined,
  ) {
    this.seenUpTo = registeredAt;
  }

  /** Messages waiting. */
  get size(): number {
    return this.items.length - this.head;
  }

  /**
   * Takes a delivered batch (`sizes`: each message's bytes, as `messages`; absent: not counted);
   * returns false once overflowed (the router then forgets it).
   */
  offer(
    messages: StoredMessage[],
    upTo: number,
    passed?: PassedMark,
    sizes?: readonly number[],
  ): boolean {
    if (this.overflowed || this.closed) return false;
    if (passed) this.onPassed(passed);
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i];
      if (this.accepts !== null && !this.accepts(message)) continue;
      const size = sizes?.[i] ?? 0;
      if (this.size >= this.limit || this.bytes + size > this.byteLimit) {
        this.drop();
        return false;
      }
      this.items.push(message);
      this.sizes.push(size);
      this.bytes += size;
    }
    this.seenUpTo = upTo;
    this.wake();
    return true;
  }

  /** The oldest waiting item, if any. */
  take(): StoredMessage | undefined {
    if (this.head >= this.items.length) return undefined;
    this.bytes -= this.sizes[this.head];
    const message = this.items[this.head++];
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
    return message;
  }

  /** Resolves at the next offer, overflow or close. */
  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Wakes the waiting feed without an item (a late arrival is waiting for it). */
  poke(): void {
    this.wake();
  }

  /**
   * Empties the mailbox and marks it overflowed, as if it had exceeded its bound: its feed
   * (which the router no longer offers to) catches up from the database from its position.
   */
  drop(): void {
    if (this.closed) return;
    this.overflowed = true;
    this.empty();
    this.wake();
  }

  close(): void {
    this.closed = true;
    this.empty();
    this.wake();
  }

  private empty(): void {
    this.items = [];
    this.sizes = [];
    this.head = 0;
    this.bytes = 0;
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}
