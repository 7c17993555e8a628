/**
 * A one-slot wake-up: `wait(ms)` resolves after `ms` or at the next `signal()`, whichever
 * comes first, with whether a signal woke it; a signal given while nobody waits is kept for
 * the next wait. Its timer is cleared on wake, so nothing outlives a stopped subscription.
 */
export class Wake {
  private waiter: ((signalled: boolean) => void) | null = null;
  private signalled = false;

  signal(): void {
    if (this.waiter) this.waiter(true);
    else this.signalled = true;
  }

  wait(ms: number): Promise<boolean> {
    if (this.signalled) {
      this.signalled = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), ms);
      const done = (signalled: boolean) => {
        clearTimeout(timer);
        this.waiter = null;
        resolve(signalled);
      };
      this.waiter = done;
    });
  }
}
