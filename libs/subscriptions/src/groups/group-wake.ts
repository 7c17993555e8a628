/**
 * Wakes the fetches and streams of a group waiting in this process: a commit, an ack or nack
 * (a pinned key's next event may be eligible), a late arrival. Other processes' changes are
 * seen by the waiters' poll.
 */
export class GroupWake {
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Wakes so far, per group and of every group: a waiter that saw a count before it looked learns of a wake it was not there for. */
  private readonly wakes = new Map<string, number>();
  private wokeAll = 0;

  /** How many wakes `group` had so far (take it before looking, give it to `wait`). */
  seen(group: string): number {
    return (this.wakes.get(group) ?? 0) + this.wokeAll;
  }

  /**
   * Resolves after `ms`, at the next wake of `group` (or of every group), or when `signal`
   * aborts; at once when `group` was woken since `seen` (an ack or commit that came while the
   * caller looked and found nothing, which would otherwise wait out `ms`).
   */
  wait(group: string, ms: number, signal?: AbortSignal, seen?: number): Promise<void> {
    if (seen !== undefined && this.seen(group) !== seen) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.waiters.get(group) ?? new Set<() => void>();
      this.waiters.set(group, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        signal?.removeEventListener('abort', done);
        if (set.size === 0 && this.waiters.get(group) === set) this.waiters.delete(group);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  wake(group: string): void {
    this.wakes.set(group, (this.wakes.get(group) ?? 0) + 1);
    this.release(group);
  }

  wakeAll(): void {
    this.wokeAll += 1;
    for (const group of [...this.waiters.keys()]) this.release(group);
  }

  /** Ends the waits on `group` now. */
  private release(group: string): void {
    for (const done of [...(this.waiters.get(group) ?? [])]) done();
  }
}
