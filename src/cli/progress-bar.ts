import type { Terminal } from './terminal.js';

/**
 * A progress bar on stderr (stdout stays for results). On a terminal it redraws one line;
 * otherwise (a pipe, a CI log) it prints a line at most every 10%.
 */
export class ProgressBar {
  private lastTenth = -1;

  constructor(
    private readonly term: Terminal,
    private readonly label: string,
    private readonly total: number,
  ) {}

  update(done: number, note = ''): void {
    const fraction = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const width = 30;
    const filled = Math.round(fraction * width);
    const text = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${this.total} ${Math.floor(fraction * 100)}%${note ? ` ${note}` : ''}`;
    if (this.term.interactive) {
      this.term.err(`\r${text}\x1b[K`);
      return;
    }
    const tenth = Math.floor(fraction * 10);
    if (tenth !== this.lastTenth) {
      this.lastTenth = tenth;
      this.term.err(text + '\n');
    }
  }

  /** Ends the bar's line. */
  done(): void {
    if (this.term.interactive) this.term.err('\n');
  }
}
