/**
 * Runs `work` one run at a time: `now()` runs it at once (asked during a run, it runs once more
 * right after that one), and each run is followed by the next `delay()` later unless something
 * asks sooner. For a look at the database that a NOTIFY can ask for and a poll backs up (the
 * consumer requests an owner serves, the builds a process follows). `work` handles its own
 * errors; one that escapes is dropped and the pace goes on.
 */
export class PacedRun {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private again = false;
  private closed = false;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly delay: () => number,
  ) {}

  /** The first run after `delay()`. */
  start(): void {
    this.schedule();
  }

  now(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = true;
    void this.work()
      .catch(() => undefined)
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.now();
        } else this.schedule();
      });
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.now(), this.delay());
  }
}
