import type { ResolvedLogOptions } from '../log-options.js';
import type { LogWatermark } from './log-watermark.service.js';

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

/** The watermark's figures at `position`, the safe head just read. */
export function watermarkStatus(
  position: number,
  watermark: LogWatermark,
  options: ResolvedLogOptions,
): WatermarkStatus {
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
