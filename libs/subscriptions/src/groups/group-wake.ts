/**
 * Wakes the fetches and streams of a group waiting in this process: a commit, an ack or nack
 * (a pinned key's next event may be eligible), a late arrival. Other processes' changes are
 * seen by the waiters' poll.
 */
export class GroupWake {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Resolves after `ms`, at the next wake of `group` (or of every group), or when `signal` aborts. */
  wait(group: string, ms: number, signal?: AbortSignal): Promise<void> {
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
    for (const done of [...(this.waiters.get(group) ?? [])]) done();
  }

  wakeAll(): void {
    for (const group of [...this.waiters.keys()]) this.wake(group);
  }
}
