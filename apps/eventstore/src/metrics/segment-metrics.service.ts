import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { ArchivedSegments, SegmentKeeper } from '@ordinal/log';
import { MetricsService } from './metrics.service.js';

/** The log's segments in /metrics (docs/storage.md): how many, and their bytes, by tier; reads of archive files. */
@Injectable()
export class SegmentMetrics {
  constructor(metrics: MetricsService, keeper: SegmentKeeper, archived: ArchivedSegments) {
    // One read of the segments per scrape, shared by both gauges.
    let scrape: ReturnType<SegmentKeeper['list']> | null = null;
    const segments = () => (scrape ??= keeper.list().finally(() => (scrape = null)));
    const byTier = (name: string, help: string, value: (bytes: number) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['tier'],
        registers: [metrics.registry],
        async collect() {
          this.reset();
          const list = await segments().catch(() => []);
          const totals = new Map<string, number>();
          for (const s of list) totals.set(s.tier, (totals.get(s.tier) ?? 0) + value(s.bytes));
          for (const [tier, total] of totals) this.set({ tier }, total);
        },
      });
    byTier('ordinal_log_segments', 'Segments of the log, by tier', () => 1);
    byTier(
      'ordinal_log_segment_bytes',
      "Bytes of the log's segments on disk (indexes and TOAST included), by tier",
      (bytes) => bytes,
    );
    const counted = (name: string, help: string, value: () => number) =>
      new Counter({
        name,
        help,
        registers: [metrics.registry],
        collect() {
          this.reset();
          this.inc(value());
        },
      });
    counted(
      'ordinal_archive_chunk_reads_total',
      'Archive files read from the archive store by readers of archived segments (not from memory)',
      () => archived.counters.chunkReads,
    );
    counted(
      'ordinal_archive_corrupt_total',
      'Archive files that did not match their manifest when read (a read answered archive_corrupt): alert on any',
      () => archived.counters.corruptChunks,
    );
  }
}
