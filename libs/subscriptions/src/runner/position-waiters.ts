import { WaitTimeoutError } from '../errors/index.js';

interface Waiter {
  index: number;
  resolve: (position: number) => void;
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
      const waiter: Waiter = {
        index,
        resolve,
        timer: setTimeout(
          () => {
            this.waiters.delete(waiter);
            reject(new WaitTimeoutError(this.name, index, timeoutMs));
          },
          Math.max(0, timeoutMs),
        ),
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

  /** Rejects nobody, clears every timer (shutdown): waiters time out as if never reached. */
  close(): void {
    for (const waiter of this.waiters) clearTimeout(waiter.timer);
    this.waiters.clear();
  }
}
