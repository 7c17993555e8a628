import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { LogWatermark } from '@ordinal/log';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { MetricsService } from '../metrics/metrics.service.js';
import { sourceCounter } from '../metrics/source-counter.js';

type WatermarkCounter = keyof LogWatermark['counters'];

/**
 * Projection, subscription and watermark figures in the server's registry: position and
 * lag per consumer, failures, the held hole's age, and the watermark's hole counters.
 */
@Injectable()
export class SubscriptionMetrics {
  constructor(
    metrics: MetricsService,
    subscriptions: SubscriptionsService,
    watermark: LogWatermark,
  ) {
    const registers = [metrics.registry];
    const labelNames = ['name', 'kind'] as const;
    const perSubscription = (
      name: string,
      help: string,
      pick: (r: Awaited<ReturnType<SubscriptionsService['report']>>[number]) => number,
    ) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset();
          for (const r of await subscriptions.report().catch(() => []))
            this.set({ name: r.name, kind: r.kind }, pick(r));
        },
      });
    perSubscription(
      'ordinal_subscription_position',
      'Highest index a projection or subscription has applied',
      (r) => r.position,
    );
    perSubscription(
      'ordinal_subscription_lag',
      'Messages between the safe head and a projection or subscription',
      (r) => r.lag,
    );
    perSubscription(
      'ordinal_subscription_failing',
      '1 while a projection or subscription is retrying a failed batch',
      (r) => (r.state === 'failed' ? 1 : 0),
    );
    sourceCounter({
      name: 'ordinal_subscription_late_delivered_total',
      help: 'Late arrivals delivered to a projection or subscription',
      registry: metrics.registry,
      labelNames,
      read: async () =>
        (await subscriptions.report().catch(() => [])).map((r) => ({
          labels: { name: r.name, kind: r.kind },
          value: r.lateDelivered ?? 0,
        })),
    });
    perSubscription(
      'ordinal_subscription_late_delivered',
      'Deprecated: ordinal_subscription_late_delivered_total as a gauge',
      (r) => r.lateDelivered ?? 0,
    );
    new Gauge({
      name: 'ordinal_watermark_hole_age_seconds',
      help: 'How long the low watermark has held its current hole (0 when none)',
      registers,
      collect() {
        this.set((watermark.heldHole?.heldMs ?? 0) / 1000);
      },
    });
    const total = (name: string, help: string, field: WatermarkCounter) =>
      sourceCounter({
        name,
        help,
        registry: metrics.registry,
        read: () => watermark.counters[field],
      });
    total('ordinal_watermark_holes_held_total', 'Holes the low watermark held', 'holesHeld');
    total(
      'ordinal_watermark_holes_released_exactly_total',
      'Holes released as soon as their writers ended',
      'holesReleasedExactly',
    );
    total(
      'ordinal_watermark_holes_abandoned_total',
      'Holes abandoned at the gap timeout',
      'holesAbandoned',
    );
    total(
      'ordinal_watermark_late_arrivals_total',
      'Rows that committed inside abandoned holes',
      'lateArrivals',
    );
  }
}
