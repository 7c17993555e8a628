/**
 * The stored message on the wire: what every reader (REST page, SSE, the client, the console)
 * gets for one position of the log. The server's SQL rendering, row mapper and response DTO
 * are derived from or checked against this shape.
 */
/** A stored message as the server returns it; `id` is its global index. */
export interface OrdinalMessage {
  id: number;
  messageType: string;
  userId: string | null;
  body: unknown;
  metadata: Record<string, unknown> | null;
  contentHash: string;
  createdAt: string;
  streamId?: string;
  streamVersion?: number;
  schemaVersion?: number;
  idempotencyKey?: string;
  /** The correlation it belongs to (absent only on messages stored before correlation ids existed). */
  correlationId?: string;
  /** What caused it: a message index as text, or the id of the request that started the correlation. */
  causationId?: string;
  /** The W3C trace context of the append that stored it. */
  traceparent?: string;
}

/** What a bulk import stored: `first..last`, contiguous (null when nothing was). */
export interface ImportResult {
  /** Non-blank lines read. */
  lines: number;
  imported: number;
  /** Lines skipped as idempotency-key repeats of stored messages. */
  repeats: number;
  first: number | null;
  last: number | null;
}
