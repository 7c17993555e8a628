import type {
  ImportResult,
  OrdinalMessage,
  OrdinalRecord,
  OrdinalTombstone,
  SseEvent,
  SseEventData,
  SseEventName,
  TombstoneReason,
} from '@ordinal/contract';

export type {
  ImportResult,
  OrdinalMessage,
  OrdinalRecord,
  OrdinalTombstone,
  SseEvent,
  SseEventData,
  SseEventName,
  TombstoneReason,
};

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
  /** `skip`: leave out tombstones (docs/lifecycle.md). @default 'include' */
  tombstones?: 'include' | 'skip';
}

/** One JSON page of the log. `nextIndex` is where the next page starts. */
export interface LogPage {
  fromIndex: number;
  head: number;
  nextIndex: number;
  count: number;
  /** Each position: its message, or its tombstone when hidden or erased (docs/lifecycle.md). */
  messages: OrdinalRecord[];
}

/** One object type with the fields of an intersection (and their optionality). */
type Simplify<T> = { [K in keyof T]: T[K] };

/**
 * The events of a stream, as the client yields them: each of the contract's `SseEvent`s with
 * its data's fields beside `event` (`{ event: 'message', message }`). `late-message` is a row
 * that committed inside a hole this connection had passed (concurrent mode): out of order,
 * once, without `id:`.
 */
export type StreamEvent = SseEvent extends infer E
  ? E extends SseEvent
    ? Simplify<{ event: E['event'] } & E['data']>
    : never
  : never;
