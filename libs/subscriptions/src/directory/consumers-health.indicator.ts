import { Inject, Injectable } from '@nestjs/common';
import { SUBSCRIPTIONS_OPTIONS } from '../subscriptions.module-definition.js';
import type { ResolvedSubscriptionsOptions } from '../subscriptions-options.js';
import { SubscriptionsService } from '../subscriptions.service.js';

/** A consumer that is behind and has not moved for longer than `stuckAfterMs`. */
export interface StuckConsumer {
  name: string;
  kind: string;
  lag: number;
  state: string;
  lastError: string | null;
  /** Milliseconds since its checkpoint last moved. */
  sinceProgressMs: number;
  /** Pid and host of the owning process; null when no process owns it. */
  owner: { pid: number | null; host: string | null } | null;
}

/** A health indicator's result, shaped like @nestjs/terminus's (`{ [key]: { status, … } }`). */
export type ConsumersHealth = Record<string, { status: 'up' | 'down'; stuck: StuckConsumer[] }>;

/**
 * Health of every projection and subscription on the database, for the application's own
 * health endpoint: `down` when one is stuck — behind the head (lag > 0) with no progress for
 * `stuckAfterMs` (a handler failing over and over, a stop policy, nobody owning it, a hole
 * held). Result shaped like a @nestjs/terminus indicator, so it plugs into `HealthCheckService`.
 */
@Injectable()
export class ConsumersHealthIndicator {
  private readonly stuckAfterMs: number;

  constructor(
    private readonly subscriptions: SubscriptionsService,
    @Inject(SUBSCRIPTIONS_OPTIONS) options: ResolvedSubscriptionsOptions,
  ) {
    this.stuckAfterMs = options.stuckAfterMs;
  }

  /** Every stuck consumer (partitions of a partitioned projection one by one). */
  async stuck(): Promise<StuckConsumer[]> {
    const reports = await this.subscriptions.report();
    const stuck: StuckConsumer[] = [];
    for (const r of reports) {
      if (r.lag > 0 && r.progressAgeMs !== null && r.progressAgeMs > this.stuckAfterMs) {
        stuck.push({
          name: r.name,
          kind: r.kind,
          lag: r.lag,
          state: r.state,
          lastError: r.lastError,
          sinceProgressMs: r.progressAgeMs,
          owner: r.owner ? { pid: r.owner.pid, host: r.owner.host } : null,
        });
      }
    }
    return stuck;
  }

  /** `{ [key]: { status: 'up' | 'down', stuck } }`. */
  async isHealthy(key = 'projections'): Promise<ConsumersHealth> {
    const stuck = await this.stuck();
    return { [key]: { status: stuck.length === 0 ? 'up' : 'down', stuck } };
  }
}
