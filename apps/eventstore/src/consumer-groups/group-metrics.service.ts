import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import {
  ConsumerGroupsService,
  type ConsumerGroupStatus,
  type GroupCounter,
} from '@ordinal/subscriptions';
import { MetricsService } from '../metrics/metrics.service.js';
import { sourceCounter } from '../metrics/source-counter.js';

/**
 * Consumer group figures in the server's registry, per group: checkpoint, lag, in flight, ready,
 * parked and live members (read from the database at scrape time, the same for every server
 * process), and what this process handed out and settled (counters).
 */
@Injectable()
export class GroupMetrics {
  constructor(metrics: MetricsService, groups: ConsumerGroupsService) {
    const registers = [metrics.registry];
    const labelNames = ['group'] as const;
    const perGroup = (name: string, help: string, pick: (s: ConsumerGroupStatus) => number) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset();
          for (const s of await groups.list().catch(() => []))
            this.set({ group: s.group }, pick(s));
        },
      });
    perGroup(
      'ordinal_consumer_group_checkpoint',
      'Every index at or below it is done',
      (s) => s.checkpoint,
    );
    perGroup(
      'ordinal_consumer_group_lag',
      'Indices between the safe head and the checkpoint',
      (s) => s.lag,
    );
    perGroup(
      'ordinal_consumer_group_in_flight',
      'Events delivered and not yet acknowledged',
      (s) => s.inFlight,
    );
    perGroup(
      'ordinal_consumer_group_ready',
      'Events read from the log, waiting for a member',
      (s) => s.ready,
    );
    perGroup('ordinal_consumer_group_parked', 'Parked events', (s) => s.parked);
    perGroup(
      'ordinal_consumer_group_members',
      'Live members',
      (s) => s.members.filter((m) => m.alive).length,
    );
    const counter = (name: string, help: string, field: GroupCounter) =>
      sourceCounter({
        name,
        help,
        registry: metrics.registry,
        labelNames,
        read: () =>
          groups.counters
            .entries()
            .map(([group, counts]) => ({ labels: { group }, value: counts[field] })),
      });
    counter(
      'ordinal_consumer_group_delivered_total',
      'Deliveries this process handed to members',
      'delivered',
    );
    counter(
      'ordinal_consumer_group_redelivered_total',
      'Deliveries after the first (ack timeout, dead member, retry)',
      'redelivered',
    );
    counter(
      'ordinal_consumer_group_acked_total',
      'Events acknowledged through this process',
      'acked',
    );
    counter(
      'ordinal_consumer_group_nacked_total',
      'Events given back through this process',
      'nacked',
    );
    counter('ordinal_consumer_group_parked_total', 'Events parked by this process', 'parked');
  }
}
