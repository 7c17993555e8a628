/**
 * The rest after a batch that took `batchMs`, so that a run working `percent` of its time
 * works `batchMs` out of every `batchMs × 100 / percent`: 0 at 100%, as long as the batch at 50%.
 */
export function throttleRestMs(batchMs: number, percent: number): number {
  return percent >= 100 ? 0 : (Math.max(0, batchMs) * (100 - percent)) / percent;
}
