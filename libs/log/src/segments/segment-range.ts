/** Indices per segment when `ORDINAL_SEGMENT_SIZE` (the log's `segmentSize`) is not set. */
export const DEFAULT_SEGMENT_SIZE = 10_000_000;

/** The smallest segment size the log accepts: small sizes are for tests (docs/storage.md, "Sizing"). */
export const MIN_SEGMENT_SIZE = 1_000;

/** The name of the segment (a partition of `messages`) whose first index is `first`. */
export function segmentTable(first: number): string {
  if (!Number.isSafeInteger(first) || first < 1)
    throw new RangeError(`a segment's first index is a positive integer, got ${first}`);
  return `messages_${String(first).padStart(16, '0')}`;
}
