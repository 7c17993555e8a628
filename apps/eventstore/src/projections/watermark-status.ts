import type { LogReader, LogWatermark } from '@ordinal/log';
import type { ResolvedLogOptions } from '@ordinal/log/internal';

/** What the status endpoint shows of the low watermark (concurrent mode's safe head and the hole it holds). */
export interface WatermarkStatus {
  ordering: 'gapless' | 'concurrent';
  /** The safe head: every reader reads up to here. */
  position: number;
  gapTimeoutMs: number;
  exactRelease: boolean;
  /** The hole held now: which positions, for how long, and the oldest transaction that could fill it. */
  heldHole: {
    from: number;
    to: number;
    heldMs: number;
    writers: number;
    oldestWriter: { pid: number; applicationName: string; xactStart: string } | null;
  } | null;
  counters: LogWatermark['counters'];
}

/** Reads the watermark's figures (moving it first, as any reader would). */
export async function watermarkStatus(
  reader: LogReader,
  watermark: LogWatermark,
  options: ResolvedLogOptions,
): Promise<WatermarkStatus> {
  const position = await reader.safeHead();
  const hole = watermark.heldHole;
  return {
    ordering: options.ordering,
    position,
    gapTimeoutMs: options.gapTimeoutMs,
    exactRelease: options.exactRelease,
    heldHole: hole
      ? {
          from: hole.from,
          to: hole.to,
          heldMs: hole.heldMs,
          writers: hole.writers.length,
          oldestWriter: hole.writers[0] ?? null,
        }
      : null,
    counters: { ...watermark.counters },
  };
}
