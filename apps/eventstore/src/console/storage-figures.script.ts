/** What the storage view reads of a segment (`GET /api/admin/segments`, docs/storage.md). */
export interface SegmentFigures {
  tier: string;
  bytes: number;
  estimatedRows: number | null;
}

/** One tier's totals in the storage view. */
export interface TierTotals {
  tier: string;
  segments: number;
  bytes: number;
  /** The sum of the analysed segments' estimates. */
  estimatedRows: number;
  /** Segments PostgreSQL has not analysed yet (no estimate, not in `estimatedRows`). */
  unanalysed: number;
}

/**
 * A size in binary units, as people read them: `512 bytes`, `1.5 KiB`, `24.0 MiB`, `118 GiB`
 * (one decimal below 100, none above; never `1024 KiB`, which is `1.0 MiB`).
 *
 * Like every function of this file it runs in the browser as its compiled source
 * (`STORAGE_FIGURES_SCRIPT`): self-contained, no imports, nothing from the module's scope.
 */
export function humanBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  // 1023.5 and up would print as 1024 (no decimal from 100 up): that is the next unit's 1.0.
  while (value >= 1023.5 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return String(bytes) + ' bytes';
  return (value >= 99.95 ? value.toFixed(0) : value.toFixed(1)) + ' ' + units[unit];
}

/** The segments' totals per tier, in the order the tiers first appear (the segments are oldest first). */
export function tierTotals(segments: readonly SegmentFigures[]): TierTotals[] {
  const byTier = new Map<string, TierTotals>();
  for (const s of segments) {
    let totals = byTier.get(s.tier);
    if (!totals) {
      totals = { tier: s.tier, segments: 0, bytes: 0, estimatedRows: 0, unanalysed: 0 };
      byTier.set(s.tier, totals);
    }
    totals.segments++;
    totals.bytes += s.bytes;
    if (s.estimatedRows === null) totals.unanalysed++;
    else totals.estimatedRows += s.estimatedRows;
  }
  return [...byTier.values()];
}

/** Browser JavaScript declaring `humanBytes` and `tierTotals` (the storage view's figures). */
export const STORAGE_FIGURES_SCRIPT = `${humanBytes.toString()}\n${tierTotals.toString()}`;
