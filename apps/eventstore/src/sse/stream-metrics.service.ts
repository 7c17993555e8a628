import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { LiveRouter } from '@ordinal/log';
import { MetricsService } from '../metrics/metrics.service.js';
import { sourceCounter } from '../metrics/source-counter.js';
import { StreamRegistry } from './stream-registry.service.js';

/** Pull-stream figures in /metrics: open SSE streams and the live router's fan-out. */
@Injectable()
export class StreamMetrics {
  constructor(metrics: MetricsService, router: LiveRouter, streams: StreamRegistry) {
    const registers = [metrics.registry];
    new Gauge({
      name: 'ordinal_sse_streams_open',
      help: 'Open SSE streams',
      registers,
      collect() {
        this.set(streams.size);
      },
    });
    const routerGauge = (
      name: string,
      help: string,
      pick: (s: ReturnType<LiveRouter['stats']>) => number,
    ) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(pick(router.stats()));
        },
      });
    routerGauge(
      'ordinal_router_delivered_up_to',
      'Highest index the live router handed to the feeds',
      (s) => s.deliveredUpTo,
    );
    routerGauge('ordinal_router_feeds', 'Feeds attached to the live router', (s) => s.feeds);
    routerGauge(
      'ordinal_router_mailbox_queued_messages',
      'Live messages waiting in all mailboxes',
      (s) => s.queued,
    );
    const routerCounter = (
      name: string,
      help: string,
      pick: (s: ReturnType<LiveRouter['stats']>) => number,
    ) =>
      sourceCounter({ name, help, registry: metrics.registry, read: () => pick(router.stats()) });
    routerCounter(
      'ordinal_router_mailbox_overflows_total',
      'Mailboxes dropped over their bound (their feeds caught up from the database)',
      (s) => s.overflows,
    );
    routerCounter(
      'ordinal_router_database_reads_total',
      'Page reads of new rows by the live router',
      (s) => s.databaseReads,
    );
    routerCounter(
      'ordinal_router_shared_reads_total',
      "Catch-up pages a feed took from another feed's read of the same range instead of the database",
      (s) => s.sharedReads,
    );
    routerCounter(
      'ordinal_router_suspensions_total',
      'Streams whose socket was full: their feed left live and caught up from the database once it drained',
      (s) => s.suspensions,
    );
    routerCounter(
      'ordinal_router_stream_drops_total',
      'SSE streams closed because all streams together held more catch-up pages than ORDINAL_STREAMS_BUFFER_BYTES (each the one holding the most; its client resumes from its Last-Event-ID)',
      (s) => s.drops,
    );
    routerCounter(
      'ordinal_router_late_deliveries_total',
      'Late arrivals handed to feeds (SSE streams, interfaces) that had passed their position',
      (s) => s.lateDeliveries,
    );
    // Deprecated: the same totals as gauges, under their first names (use the _total counters).
    routerGauge(
      'ordinal_router_mailbox_overflows',
      'Deprecated: ordinal_router_mailbox_overflows_total as a gauge',
      (s) => s.overflows,
    );
    routerGauge(
      'ordinal_router_database_reads',
      'Deprecated: ordinal_router_database_reads_total as a gauge',
      (s) => s.databaseReads,
    );
    routerGauge(
      'ordinal_router_late_deliveries',
      'Deprecated: ordinal_router_late_deliveries_total as a gauge',
      (s) => s.lateDeliveries,
    );
    routerGauge(
      'ordinal_router_late_watched',
      'Positions passed inside abandoned holes that open feeds watch for a late arrival',
      (s) => s.lateWatched,
    );
  }
}
