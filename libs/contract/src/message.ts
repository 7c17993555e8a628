/**
 * The stored message on the wire: what every reader (REST page, SSE, the client, the console)
 * gets for one position of the log; `id` is its global index. The server's SQL rendering, row
 * mapper, response builder and response DTO are derived from or checked against this shape and
 * `MESSAGE_FIELDS`.
 */
export interface OrdinalMessage {
  id: number;
  messageType: string;
  userId: string | null;
  body: unknown;
  metadata: Record<string, unknown> | null;
  contentHash: string;
  createdAt: string;
  /** The aggregate stream it was appended to (stream appends only). */
  streamId?: string;
  /** Its version in `streamId` (present exactly when `streamId` is). */
  streamVersion?: number;
  /** Absent when 1. */
  schemaVersion?: number;
  idempotencyKey?: string;
  /** The correlation it belongs to (absent only on messages stored before correlation ids existed). */
  correlationId?: string;
  /** What caused it: a message index as text, or the id of the request that started the correlation. */
  causationId?: string;
  /** The W3C trace context of the append that stored it. */
  traceparent?: string;
}

/** The fields of `OrdinalMessage` that may be absent from its JSON. */
type OptionalField = {
  [K in keyof OrdinalMessage]-?: object extends Pick<OrdinalMessage, K> ? K : never;
}[keyof OrdinalMessage];

/** How field `K` of `OrdinalMessage` travels: `optional` exactly when the interface says so. */
export type MessageFieldRule<K extends keyof OrdinalMessage = keyof OrdinalMessage> =
  K extends OptionalField
    ? {
        /** Absent from the JSON when the message has no value for it. */
        readonly optional: true;
        /** Also absent when equal to this; a reader takes an absent one as this. */
        readonly default?: NonNullable<OrdinalMessage[K]>;
        /** Present exactly when that other field is, whatever its own value. */
        readonly presentWith?: OptionalField;
      }
    : { readonly optional: false };

/**
 * The wire fields of the stored message in wire order: every reader gets the keys in this
 * order, byte-identical (a message reads back the same through a page, SSE, the client).
 * The compiler checks it against `OrdinalMessage`: the same keys, optional the same way
 * (`MessageFieldRule`).
 */
export const MESSAGE_FIELDS = {
  id: { optional: false },
  messageType: { optional: false },
  userId: { optional: false },
  body: { optional: false },
  metadata: { optional: false },
  contentHash: { optional: false },
  createdAt: { optional: false },
  streamId: { optional: true },
  streamVersion: { optional: true, presentWith: 'streamId' },
  schemaVersion: { optional: true, default: 1 },
  idempotencyKey: { optional: true },
  correlationId: { optional: true },
  causationId: { optional: true },
  traceparent: { optional: true },
} as const satisfies { readonly [K in keyof OrdinalMessage]-?: MessageFieldRule<K> };

/** What a bulk import stored: `first..last`, contiguous (null when nothing was). */
export interface ImportResult {
  /** Non-blank lines read. */
  lines: number;
  /** Messages stored. */
  imported: number;
  /**
   * Lines skipped: their idempotency key was already stored (or came earlier in the file) for
   * the same message.
   */
  repeats: number;
  /** Index of the first stored message. */
  first: number | null;
  /** Index of the last stored message; every index in `first..last` is this import's. */
  last: number | null;
}
