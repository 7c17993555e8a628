/** One segment of the log (docs/storage.md): a partition of the messages table by index range. */
export interface SegmentInfo {
  /** Its first index. */
  firstIndex: number;
  /** Its last index. */
  lastIndex: number;
  /** Its partition of the messages table (an archived one's files are named after it). */
  table: string;
  /** `hot`: in PostgreSQL; `archived`: in the archive store only (docs/storage.md). */
  tier: string;
  /** Hot: its partition's size on disk, indexes and TOAST included; archived: its files' size (bytes). */
  bytes: number;
  /** Hot: PostgreSQL's estimate of its rows (null before it was first analysed); archived: its rows, exactly. */
  estimatedRows: number | null;
  createdAt: string;
  /** When it was last archived (null: never). */
  archivedAt?: string | null;
}

/** `GET /api/admin/segments`: every segment of the log, oldest first. */
export interface SegmentsResponse {
  /** Indices per segment (`ORDINAL_SEGMENT_SIZE`). */
  segmentSize: number;
  segments: SegmentInfo[];
}
