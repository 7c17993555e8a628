const PENDING = 0;
const DONE = 1;
const SETTLED = 2;

/**
 * The input channel's outstanding deliveries, in delivery-tag order, so that successes can be
 * acknowledged with one `ack(allUpTo=true)` without ever covering a delivery that is still
 * being appended or waits to be requeued. Deliveries settled one by one (rejected, requeued)
 * do not hold the run back: the broker no longer counts them as outstanding. Pure: no I/O.
 */
export class DeliveryLedger {
  private readonly tags: number[] = [];
  private head = 0;
  private readonly states = new Map<number, number>();

  /** Records a new delivery (tags increase on a channel). */
  add(tag: number): void {
    this.tags.push(tag);
    this.states.set(tag, PENDING);
  }

  /** The delivery was appended; it awaits the acknowledgement. */
  done(tag: number): void {
    if (this.states.get(tag) === PENDING) this.states.set(tag, DONE);
  }

  /** The delivery was settled on its own (rejected or requeued). */
  settled(tag: number): void {
    if (this.states.has(tag)) this.states.set(tag, SETTLED);
  }

  /**
   * Removes the leading run of finished deliveries and returns the highest appended tag in
   * it, to acknowledge with `allUpTo=true`; null when there is nothing to acknowledge.
   */
  takeAckable(): number | null {
    let ackUpTo: number | null = null;
    while (this.head < this.tags.length) {
      const tag = this.tags[this.head];
      const state = this.states.get(tag);
      if (state === PENDING) break;
      if (state === DONE) ackUpTo = tag;
      this.states.delete(tag);
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.tags.length) {
      this.tags.splice(0, this.head);
      this.head = 0;
    }
    return ackUpTo;
  }

  /** Deliveries not yet acknowledged or settled. */
  get outstanding(): number {
    return this.tags.length - this.head;
  }
}
