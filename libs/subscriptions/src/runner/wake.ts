/**
 * A one-slot wake-up: `wait(ms)` resolves after `ms` or at the next `signal()`, whichever
 * comes first; a signal given while nobody waits is kept for the next wait. Its timer is
 * cleared on wake, so nothing outlives a stopped subscription.
 */
export class Wake {
  private waiter: (() => void) | null = null;
  private signalled = false;

  signal(): void {
    if (this.waiter) this.waiter();
    else this.signalled = true;
  }

  wait(ms: number): Promise<void> {
    if (this.signalled) {
      this.signalled = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), ms);
      const done = () => {
        clearTimeout(timer);
        this.waiter = null;
        resolve();
      };
      this.waiter = done;
    });
  }
}
