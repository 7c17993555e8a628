/** One consumer's figures in a dashboard sample. */
export interface ConsumerSample {
  name: string;
  kind: string;
  position: number;
  lag: number;
}

/** What the dashboard shows of one moment: taken by DashboardSampler every `sampleMs`. */
export interface DashboardSample {
  /** When it was taken (ms since the epoch, this server's clock). */
  at: number;
  /** The highest committed index. */
  head: number;
  /** The highest index readers may see (the low watermark in concurrent mode). */
  safeHead: number;
  /** Messages stored per second since the sample before (the head's rise over the time between); null for the first. */
  rate: number | null;
  /** The hole the low watermark holds now: positions `from..to`, held for `heldMs`. */
  hole: { from: number; to: number; heldMs: number } | null;
  consumers: ConsumerSample[];
}

/**
 * The samples of the last `windowMs`, oldest first: appending one drops those older than the
 * window, so memory stays bounded (windowMs / sampleMs samples).
 */
export class SampleRing {
  private readonly samples: DashboardSample[] = [];

  constructor(readonly windowMs: number) {}

  /** Adds a sample; its `rate` is computed here from the last one (a head that went down, by a restore say, counts as 0). */
  push(sample: Omit<DashboardSample, 'rate'>): DashboardSample {
    const last = this.samples.at(-1);
    const seconds = last ? (sample.at - last.at) / 1000 : 0;
    const rate =
      last && seconds > 0
        ? Math.round((Math.max(0, sample.head - last.head) / seconds) * 10) / 10
        : null;
    const full = { ...sample, rate };
    this.samples.push(full);
    const oldest = sample.at - this.windowMs;
    let drop = 0;
    while (drop < this.samples.length && this.samples[drop].at < oldest) drop++;
    if (drop > 0) this.samples.splice(0, drop);
    return full;
  }

  /** The samples taken after `since` (ms since the epoch), oldest first; all without it. */
  after(since = Number.NEGATIVE_INFINITY): DashboardSample[] {
    return this.samples.filter((s) => s.at > since);
  }
}
