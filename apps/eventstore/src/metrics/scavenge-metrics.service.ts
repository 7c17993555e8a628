import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { LogScavenger, type ScavengeRun } from '@ordinal/log';
import { MetricsService } from './metrics.service.js';

/** The scavenge in /metrics (docs/lifecycle.md): whether one runs here, and how far it is. */
@Injectable()
export class ScavengeMetrics {
  constructor(metrics: MetricsService, scavenger: LogScavenger) {
    const gauge = (name: string, help: string, pick: (run: ScavengeRun | null) => number) =>
      new Gauge({
        name,
        help,
        registers: [metrics.registry],
        collect() {
          this.set(pick(scavenger.running));
        },
      });
    gauge('ordinal_scavenge_running', '1 while this process runs a scavenge', (r) => (r ? 1 : 0));
    gauge(
      'ordinal_scavenge_position',
      'Index the running scavenge has done up to (0 when none runs)',
      (r) => r?.position ?? 0,
    );
    gauge(
      'ordinal_scavenge_through',
      'Index the running scavenge goes up to (0 when none runs)',
      (r) => r?.through ?? 0,
    );
    gauge(
      'ordinal_scavenge_erased_rows',
      'Rows the running scavenge has erased so far',
      (r) => r?.rowsErased ?? 0,
    );
    gauge(
      'ordinal_scavenge_freed_bytes',
      'Stored bytes the running scavenge has erased so far',
      (r) => r?.bytesFreed ?? 0,
    );
  }
}
