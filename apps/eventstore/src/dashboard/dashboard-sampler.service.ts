import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { LogReader, LogWatermark } from '@ordinal/log';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { SampleRing, type DashboardSample } from './sample-ring.js';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';

/** How often the dashboard's figures are sampled (ms). */
export const DASHBOARD_SAMPLE_MS = 1000;
/** How much history each server process keeps in memory (ms): 10 minutes, 600 samples. */
export const DASHBOARD_WINDOW_MS = 10 * 60_000;

/**
 * Samples, every second, what the console's dashboard draws: the committed head, the safe head,
 * the ingest rate, the hole the low watermark holds and every consumer's lag, and keeps the last
 * ten minutes in memory (per server process; a restart starts an empty history). Three cheap
 * queries a second (the head, the watermark, the consumer directory); a sample that fails (the
 * database is down) is left out, and the charts' lines join the samples on either side of it.
 */
@Injectable()
export class DashboardSampler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DashboardSampler.name);
  private readonly ring = new SampleRing(DASHBOARD_WINDOW_MS);
  private timer: NodeJS.Timeout | null = null;
  private sampling: Promise<void> | null = null;
  private failing = false;

  constructor(
    private readonly reader: LogReader,
    private readonly watermark: LogWatermark,
    private readonly subscriptions: SubscriptionsService,
    @Inject(ORDINAL_CONFIG) private readonly config: OrdinalConfig,
  ) {}

  /** The ordering the figures come from (`concurrent`: the safe head may stay below the head). */
  get ordering(): string {
    return this.config.ordering;
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sample(), DASHBOARD_SAMPLE_MS);
    this.timer.unref();
    void this.sample();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sampling;
  }

  /** The samples taken after `since` (ms since the epoch), oldest first. */
  samples(since?: number): DashboardSample[] {
    return this.ring.after(since);
  }

  /** Takes one sample (skipped while the one before is still running). */
  sample(): Promise<void> {
    this.sampling ??= this.take().finally(() => {
      this.sampling = null;
    });
    return this.sampling;
  }

  private async take(): Promise<void> {
    // Stamped when the reads start: the rate divides the head's rise by the time between stamps.
    const at = Date.now();
    try {
      const [safeHead, head, reports] = await Promise.all([
        this.reader.safeHead(),
        this.reader.committedHead(),
        this.subscriptions.report(),
      ]);
      const hole = this.watermark.heldHole;
      this.ring.push({
        at,
        // (the two reads are not one snapshot: the head is never shown below the safe head)
        head: Math.max(head, safeHead),
        safeHead,
        hole: hole ? { from: hole.from, to: hole.to, heldMs: hole.heldMs } : null,
        consumers: reports.map((r) => ({
          name: r.name,
          kind: r.kind,
          position: r.position,
          lag: r.lag,
        })),
      });
      if (this.failing) this.logger.log('Dashboard: sampling again');
      this.failing = false;
    } catch (error) {
      if (!this.failing)
        this.logger.warn(
          `Dashboard: a sample failed (${(error as Error).message}); no samples until the database answers again`,
        );
      this.failing = true;
    }
  }
}
