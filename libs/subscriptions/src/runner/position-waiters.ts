import { WaitTimeoutError } from '../errors/index.js';

interface Waiter {
  index: number;
  resolve: (position: number) => void;
  /** Rejects with WaitTimeoutError. */
  timeOut: () => void;
  timer: NodeJS.Timeout;
}

/** Callers waiting for a subscription to reach an index (read-your-own-writes). */
export class PositionWaiters {
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly name: string) {}

  /** Resolves with the position once it is >= index; rejects with WaitTimeoutError after `timeoutMs`. */
  wait(current: number, index: number, timeoutMs: number): Promise<number> {
    if (current >= index) return Promise.resolve(current);
    return new Promise((resolve, reject) => {
      const timeOut = () => {
        this.waiters.delete(waiter);
        reject(new WaitTimeoutError(this.name, index, timeoutMs));
      };
      const waiter: Waiter = {
        index,
        resolve,
        timeOut,
        timer: setTimeout(timeOut, Math.max(0, timeoutMs)),
      };
      this.waiters.add(waiter);
    });
  }

  /** Settles every waiter the new position satisfies. */
  reached(position: number): void {
    for (const waiter of this.waiters) {
      if (position < waiter.index) continue;
      clearTimeout(waiter.timer);
      this.waiters.delete(waiter);
      waiter.resolve(position);
    }
  }

  /**
   * The subscription stops here (shutdown, or a projection build this process leaves): every
   * waiter times out now, as if never reached, so a caller looks again (elsewhere) instead of
   * waiting for a position that will not move here.
   */
  close(): void {
    for (const waiter of [...this.waiters]) {
      clearTimeout(waiter.timer);
      waiter.timeOut();
    }
  }
}
