import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { LogScavenger, ScavengeRunningError } from '@ordinal/log';
import { ORDINAL_CONFIG } from '../config/config.constants.js';
import type { OrdinalConfig } from '../config/ordinal-config.js';

/**
 * Runs a scavenge every ORDINAL_SCAVENGE_INTERVAL_MS (off at 0). A run already going (here or
 * on another server) is left alone; the next tick tries again.
 */
@Injectable()
export class ScavengeSchedule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ScavengeSchedule.name);
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly scavenger: LogScavenger,
    @Inject(ORDINAL_CONFIG) private readonly config: OrdinalConfig,
  ) {}

  onApplicationBootstrap(): void {
    const every = this.config.scavengeIntervalMs;
    if (every <= 0 || this.config.role === 'replica-reader') return;
    this.timer = setInterval(() => {
      if (this.scavenger.running) return;
      this.scavenger.run().catch((error: unknown) => {
        if (!(error instanceof ScavengeRunningError))
          this.logger.warn(`Scheduled scavenge failed: ${(error as Error).message}`);
      });
    }, every);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
