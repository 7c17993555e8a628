import { Injectable, Optional } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { AmqpConnection, InputConsumer, PushInterfaces, type InterfaceStatus } from '@ordinal/amqp';
import { LogReader } from '@ordinal/log';
import { MetricsService } from '../metrics/metrics.service.js';
import { sourceCounter } from '../metrics/source-counter.js';

type CounterField = 'published' | 'skipped' | 'staleAcks' | 'restarts' | 'late';

/**
 * AMQP figures in the server's registry: the connection, the input consumer and each
 * interface's bookmark, position, lag and state. Nothing is registered when AMQP is off.
 */
@Injectable()
export class AmqpMetrics {
  constructor(
    metrics: MetricsService,
    reader: LogReader,
    @Optional() connection?: AmqpConnection,
    @Optional() input?: InputConsumer,
    @Optional() interfaces?: PushInterfaces,
  ) {
    if (!connection || !input || !interfaces) return;
    const registers = [metrics.registry];
    const labelNames = ['interface'] as const;
    new Gauge({
      name: 'ordinal_amqp_connected',
      help: '1 while the broker connection is up',
      registers,
      collect() {
        this.set(connection.state === 'up' ? 1 : 0);
      },
    });
    sourceCounter({
      name: 'ordinal_amqp_reconnections_total',
      help: 'Broker connections made after the first',
      registry: metrics.registry,
      read: () => connection.reconnections,
    });
    new Gauge({
      name: 'ordinal_amqp_reconnections',
      help: 'Deprecated: ordinal_amqp_reconnections_total as a gauge',
      registers,
      collect() {
        this.set(connection.reconnections);
      },
    });
    const inputTotals = (
      name: string,
      help: string,
      pick: (s: ReturnType<InputConsumer['stats']>) => number,
    ) => sourceCounter({ name, help, registry: metrics.registry, read: () => pick(input.stats()) });
    inputTotals(
      'ordinal_amqp_input_stored_total',
      'Input deliveries committed to the log',
      (s) => s.stored,
    );
    inputTotals(
      'ordinal_amqp_input_duplicates_total',
      'Input deliveries not stored: their body was inside the duplicate window',
      (s) => s.duplicates,
    );
    inputTotals(
      'ordinal_amqp_input_repeats_total',
      'Input deliveries not stored: their idempotency key was stored before',
      (s) => s.repeats,
    );
    inputTotals(
      'ordinal_amqp_input_rejected_total',
      'Input deliveries dead-lettered (malformed)',
      (s) => s.rejected,
    );
    inputTotals(
      'ordinal_amqp_input_requeued_total',
      'Input deliveries requeued after a transient failure',
      (s) => s.requeued,
    );
    new Gauge({
      name: 'ordinal_amqp_input_in_flight',
      help: 'Input deliveries being appended',
      registers,
      collect() {
        this.set(input.stats().inFlight);
      },
    });
    const perInterface = (
      name: string,
      help: string,
      value: (s: InterfaceStatus) => number | null,
    ) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          for (const s of interfaces.statuses()) {
            const v = value(s);
            if (v !== null) this.set({ interface: s.name }, v);
          }
        },
      });
    perInterface(
      'ordinal_interface_bookmark',
      'Saved bookmark of a replayable interface',
      (s) => s.bookmark,
    );
    perInterface(
      'ordinal_interface_acknowledged',
      'Contiguous acknowledged index of a replayable interface',
      (s) => s.acknowledged,
    );
    perInterface(
      'ordinal_interface_position',
      'Highest index an interface has passed in this run',
      (s) => s.position,
    );
    perInterface(
      'ordinal_interface_live',
      '1 while an interface is live (caught up and publishing)',
      (s) => (s.state === 'live' ? 1 : 0),
    );
    new Gauge({
      name: 'ordinal_interface_lag',
      help: 'Head minus bookmark (replayable) or position (realtime)',
      labelNames,
      registers,
      async collect() {
        const head = await reader.safeHead().catch(() => null);
        if (head === null) return;
        for (const s of interfaces.statuses())
          this.set(
            { interface: s.name },
            Math.max(0, head - (s.type === 'replayable' ? (s.bookmark ?? 0) : s.position)),
          );
      },
    });
    const totals = (name: string, help: string, field: CounterField) =>
      sourceCounter({
        name,
        help,
        registry: metrics.registry,
        labelNames,
        read: () =>
          interfaces.statuses().map((s) => ({ labels: { interface: s.name }, value: s[field] })),
      });
    totals('ordinal_interface_published_total', 'Deliveries confirmed by the broker', 'published');
    totals(
      'ordinal_interface_skipped_total',
      "Messages outside includeTypes acknowledged on the consumer's behalf",
      'skipped',
    );
    totals(
      'ordinal_interface_stale_acks_total',
      'Acknowledgements dropped for a stale correlation uuid',
      'staleAcks',
    );
    totals(
      'ordinal_interface_restarts_total',
      'Interface runs restarted after a failure',
      'restarts',
    );
    totals(
      'ordinal_interface_late_total',
      'Late arrivals published by an interface, marked late',
      'late',
    );
  }
}
