/** One segment of the log (docs/storage.md): a partition of the messages table by index range. */
export interface SegmentInfo {
  /** Its first index. */
  firstIndex: number;
  /** Its last index. */
  lastIndex: number;
  /** Its partition of the messages table. */
  table: string;
  /** `hot`: in PostgreSQL. */
  tier: string;
  /** Its partition's size on disk, indexes and TOAST included (bytes). */
  bytes: number;
  /** PostgreSQL's estimate of its rows (null before it was first analysed). */
  estimatedRows: number | null;
  createdAt: string;
}

/** `GET /api/admin/segments`: every segment of the log, oldest first. */
export interface SegmentsResponse {
  /** Indices per segment (`ORDINAL_SEGMENT_SIZE`). */
  segmentSize: number;
  segments: SegmentInfo[];
}
