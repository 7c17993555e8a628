import type { ImportResult, OrdinalMessage } from '@ordinal/contract';

export type { ImportResult, OrdinalMessage };

/** A message to publish. `content` is a JSON object or array. */
export interface PublishMessage {
  messageType: string;
  userId?: string | null;
  content: unknown;
  metadata?: Record<string, unknown> | null;
  /** A repeat with the same key returns the original message (status `repeat`). */
  idempotencyKey?: string;
  /** @default the publish's `correlationId` option (the X-Correlation-Id header), else the server starts one */
  correlationId?: string;
  /** @default the correlation id */
  causationId?: string;
}

/** Headers of a publish: the correlation and the W3C trace context it continues. */
export interface PublishOptions {
  /** Sent as `X-Correlation-Id`. */
  correlationId?: string;
  /** Sent as `traceparent` (W3C). */
  traceparent?: string;
}

/**
 * What happened to a published message. `key_reused` (batches only: a single publish is a 422
 * `idempotency_key_reused`): the idempotency key was stored before with another message,
 * which `message` is; nothing was stored for this one.
 */
export type PublishResult =
  | { status: 'created' | 'repeat' | 'key_reused'; message: OrdinalMessage }
  | { status: 'duplicate'; contentHash: string };

/** A reader's share of the log. */
export interface Shard {
  count: number;
  index: number;
}

/** Which part of the log to read. */
export interface ReadOptions {
  types?: string[];
  /** Only one correlation's messages (still in index order). */
  correlationId?: string;
  shard?: Shard;
}

/** One JSON page of the log. `nextIndex` is where the next page starts. */
export interface LogPage {
  fromIndex: number;
  head: number;
  nextIndex: number;
  count: number;
  messages: OrdinalMessage[];
}

/** The events of a stream. */
export type StreamEvent =
  | { event: 'connected'; startIndex: number; headIndex: number }
  | { event: 'message'; message: OrdinalMessage }
  /** A row that committed inside a hole this connection had passed (concurrent mode): out of order, once, no `id:`. */
  | { event: 'late-message'; message: OrdinalMessage }
  | { event: 'heartbeat'; headIndex?: number }
  | { event: 'stream-ended'; endIndex: number; lastIndex: number | null };
