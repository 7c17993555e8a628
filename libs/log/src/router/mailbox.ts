import type { StoredMessage } from '../message.js';

/**
 * A feed's live buffer, filled by the router in index order. Bounded (R3): the message that
 * would exceed `limit` empties it and marks it overflowed; the router then drops it and the
 * feed catches up from the database.
 */
export class Mailbox {
  private items: StoredMessage[] = [];
  private head = 0;
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
  ) {
    this.seenUpTo = registeredAt;
  }

  /** Messages waiting. */
  get size(): number {
    return this.items.length - this.head;
  }

  /** Takes a delivered batch; returns false once overflowed (the router then forgets it). */
  offer(messages: StoredMessage[], upTo: number): boolean {
    if (this.overflowed || this.closed) return false;
    for (const message of messages) {
      if (this.accepts !== null && !this.accepts(message)) continue;
      if (this.size >= this.limit) {
        this.overflowed = true;
        this.items = [];
        this.head = 0;
        this.wake();
        return false;
      }
      this.items.push(message);
    }
    this.seenUpTo = upTo;
    this.wake();
    return true;
  }

  /** The oldest waiting message, if any. */
  take(): StoredMessage | undefined {
    if (this.head >= this.items.length) return undefined;
    const message = this.items[this.head++];
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
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

  close(): void {
    this.closed = true;
    this.items = [];
    this.head = 0;
    this.wake();
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}
