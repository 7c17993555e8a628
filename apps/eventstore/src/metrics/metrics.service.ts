import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LogReader, LogWriter } from '@ordinal/log';

/** prom-client's default gauges named like counters. */
const TOTAL_NAMED_GAUGES = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** The server's Prometheus registry. One per application, never global. */
@Injectable()
export class MetricsService implements OnModuleDestroy {
  readonly registry = new Registry();
  private readonly stop: () => void;

  constructor(writer: LogWriter, reader: LogReader) {
    // The standard names (process_cpu_seconds_total, nodejs_eventloop_lag_seconds, …), so stock Node dashboards work.
    collectDefaultMetrics({ register: this.registry });
    // Gauges whose names end in _total break Prometheus's naming rule (promtool check metrics
    // exits 3 on them); the same counts stay per type in nodejs_active_handles,
    // nodejs_active_requests and nodejs_active_resources (sum them for the total).
    for (const name of TOTAL_NAMED_GAUGES) this.registry.removeSingleMetric(name);
    const ingested = new Counter({
      name: 'ordinal_messages_ingested_total',
      help: 'Messages committed to the log by this process',
      registers: [this.registry],
    });
    const flushes = new Counter({
      name: 'ordinal_flushes_total',
      help: 'Writer flushes',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    for (const outcome of ['ok', 'failed']) flushes.inc({ outcome }, 0);
    const batchSize = new Histogram({
      name: 'ordinal_flush_batch_messages',
      help: 'Messages per flush',
      buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000],
      registers: [this.registry],
    });
    const latency = new Histogram({
      name: 'ordinal_flush_duration_seconds',
      help: 'Flush latency (lock to commit)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    new Gauge({
      name: 'ordinal_writer_queue_messages',
      help: 'Messages waiting for a flush',
      registers: [this.registry],
      collect() {
        this.set(writer.queued);
      },
    });
    new Gauge({
      name: 'ordinal_log_head',
      help: 'Highest committed index',
      registers: [this.registry],
      async collect() {
        this.set(await reader.safeHead().catch(() => 0));
      },
    });
    const offCommit = writer.onCommit((messages) => ingested.inc(messages.length));
    const offFlush = writer.onFlush((stats) => {
      flushes.inc({ outcome: stats.ok ? 'ok' : 'failed' });
      if (stats.ok) {
        batchSize.observe(stats.messages);
        latency.observe(stats.durationMs / 1000);
      }
    });
    this.stop = () => {
      offCommit();
      offFlush();
    };
  }

  onModuleDestroy(): void {
    this.stop();
  }
}
