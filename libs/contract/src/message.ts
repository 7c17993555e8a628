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
  /**
   * The tenant it belongs to (docs/tenants.md); absent for a message of no tenant. `streamId` and
   * `idempotencyKey` are then that tenant's names.
   */
  tenant?: string;
  /** Absent when 1. */
  schemaVersion?: number;
  idempotencyKey?: string;
  /** The correlation it belongs to (absent only on messages stored before correlation ids existed). */
  correlationId?: string;
  /** What caused it: a message index as text, or the id of the request that started the correlation. */
  causationId?: string;
  /** The W3C trace context of the append that stored it. */
  traceparent?: string;
  /**
   * The JSON pointers of the body's personal fields this reader gets as their replacement
   * (docs/personal-data.md): without the `personal` scope, or once the subject was erased.
   */
  redacted?: string[];
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

/** A rule may say the field is kept by a tombstone (see `OrdinalTombstone`). */
export type MessageFieldRuleKept<K extends keyof OrdinalMessage = keyof OrdinalMessage> =
  MessageFieldRule<K> & {
    /** A tombstone of the message keeps this field (its body and metadata are gone). */
    readonly kept?: true;
  };

/**
 * The wire fields of the stored message in wire order: every reader gets the keys in this
 * order, byte-identical (a message reads back the same through a page, SSE, the client).
 * The compiler checks it against `OrdinalMessage`: the same keys, optional the same way
 * (`MessageFieldRule`).
 */
export const MESSAGE_FIELDS = {
  id: { optional: false, kept: true },
  messageType: { optional: false, kept: true },
  userId: { optional: false },
  body: { optional: false },
  metadata: { optional: false },
  contentHash: { optional: false },
  createdAt: { optional: false, kept: true },
  streamId: { optional: true, kept: true },
  streamVersion: { optional: true, presentWith: 'streamId', kept: true },
  tenant: { optional: true, kept: true },
  schemaVersion: { optional: true, default: 1 },
  idempotencyKey: { optional: true },
  correlationId: { optional: true, kept: true },
  causationId: { optional: true, kept: true },
  traceparent: { optional: true },
  redacted: { optional: true },
} as const satisfies { readonly [K in keyof OrdinalMessage]-?: MessageFieldRuleKept<K> };

/** Why a position reads back as a tombstone (docs/lifecycle.md). */
export const TOMBSTONE_REASONS = ['deleted', 'truncated', 'expired', 'scavenged'] as const;

/**
 * `deleted`: its stream was deleted (soft or tombstone); `truncated`: below its stream's
 * `truncateBefore` or beyond its `maxCount`; `expired`: older than its `maxAge`; `scavenged`:
 * its body and metadata were erased in place by a scavenge.
 */
export type TombstoneReason = (typeof TOMBSTONE_REASONS)[number];

/** The fields a tombstone keeps: those whose rule in `MESSAGE_FIELDS` says `kept`. */
export type TombstoneField = {
  [K in keyof typeof MESSAGE_FIELDS]: (typeof MESSAGE_FIELDS)[K] extends { readonly kept: true }
    ? K
    : never;
}[keyof typeof MESSAGE_FIELDS];

/**
 * A position of the log whose message is hidden (its stream deleted, truncated or expired) or
 * erased: the index and the kept fields, in `MESSAGE_FIELDS`' order, then `tombstone`. Every
 * reader gets one of these where the message was, so a position never goes missing.
 */
export type OrdinalTombstone = Pick<OrdinalMessage, TombstoneField> & {
  tombstone: { reason: TombstoneReason };
};

/** One position of the log as a reader gets it: the message, or its tombstone. */
export type OrdinalRecord = OrdinalMessage | OrdinalTombstone;

/** True when the record is a tombstone. */
export function isTombstone(record: OrdinalRecord): record is OrdinalTombstone {
  return 'tombstone' in record;
}

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
