import type { MESSAGE_FIELDS, OrdinalMessage, TombstoneReason } from '@ordinal/contract';
import type { CorrelationContext } from './trace/correlation-context.js';

/**
 * A message as stored in the log: the contract's `OrdinalMessage` (the wire shape) with every
 * field present, an optional one null when the wire leaves it out, or its default when it has
 * one (`schemaVersion`: 1). `id` is its global index. `toOrdinalMessage` gives its wire shape.
 */
export type StoredMessage = {
  [K in keyof OrdinalMessage]-?: (typeof MESSAGE_FIELDS)[K] extends { readonly default: unknown }
    ? Exclude<OrdinalMessage[K], undefined>
    : (typeof MESSAGE_FIELDS)[K]['optional'] extends true
      ? Exclude<OrdinalMessage[K], undefined> | null
      : OrdinalMessage[K];
} & {
  /**
   * Set when the position reads back as a tombstone (docs/lifecycle.md): the message is hidden
   * (its stream deleted, truncated or expired) or erased; its body and metadata are then null.
   */
  readonly tombstone?: TombstoneReason;
  /**
   * The message's personal fields, sealed (docs/personal-data.md): its body holds their
   * replacements, `redacted` their pointers. Never on the wire; a reader with the `personal`
   * scope gets the clear values through `PersonalData.reveal`.
   */
  readonly personal?: SealedFields;
};

/**
 * What a keyed read (`LogReader.readKeyedUpTo`) knows of a row before it maps it: its position,
 * type and keys (the plain stream id, as `StoredMessage.streamId` has it, and the user).
 */
export type MessageKeys = Pick<
  StoredMessage,
  'id' | 'messageType' | 'userId' | 'streamId' | 'tenant'
>;

/** A message's personal fields as the log stores them (the `personal` column). */
export interface SealedFields {
  /** The subject's id hash (`subjectHash`): the key store's key, never the id itself. */
  subject: string;
  /** The fields' JSON pointers, in the rule's order. */
  fields: string[];
  /**
   * The fields' clear values (a JSON array in `fields`' order) sealed with AES-256-GCM under the
   * subject's key, bound to the subject and the pointers: version, IV, tag, ciphertext, base64.
   */
  sealed: string;
}

/** A message to append. `body` is a JSON object or array. */
export interface NewMessage {
  messageType: string;
  userId?: string | null;
  body: unknown;
  metadata?: Record<string, unknown> | null;
  idempotencyKey?: string | null;
  /** @default 1 */
  schemaVersion?: number;
  /** @default the current CorrelationContext's, else a new UUID */
  correlationId?: string | null;
  /** @default the current CorrelationContext's, else the correlation id (it starts the chain) */
  causationId?: string | null;
  /** @default the append span's context (with an SDK), else the current CorrelationContext's */
  traceparent?: string | null;
  /** Set by the personal-data rules when the writer seals the message (never by a producer). */
  personal?: SealedFields;
}

/**
 * Expected version of a stream append: a number is the version the stream must be at
 * (0 = the stream must not exist yet), `'any'` skips the check, `'no_stream'` is 0 spelt out,
 * `'stream_exists'`: the stream must have events (any version). A soft-deleted stream counts
 * as absent (`no_stream` and `any` re-create it); a tombstoned one refuses every append.
 */
export type ExpectedVersion = number | 'any' | 'no_stream' | 'stream_exists';

/** How a stream is deleted: `soft` (hidden, can be re-created) or `tombstone` (for ever). */
export type DeleteMode = 'soft' | 'tombstone';

/** The message type of the marker a delete appends to the log. */
export const STREAM_DELETED_TYPE = '$stream-deleted';

/** The body of a `$stream-deleted` marker. */
export interface StreamDeletedBody {
  streamId: string;
  mode: DeleteMode;
  /** The stream's version when it was deleted: versions up to it are hidden. */
  lastVersion: number;
}

/** One append: its messages land contiguously, atomically, in one flush. */
export interface AppendRequest {
  messages: NewMessage[];
  /** Append to an aggregate stream with an optimistic version check. */
  stream?: { streamId: string; expectedVersion: ExpectedVersion };
  /**
   * Deletes `stream` (whose `expectedVersion` must then be its exact version) instead of
   * appending to it: `messages` is its `$stream-deleted` marker, stored outside the stream.
   */
  delete?: DeleteMode;
  /**
   * Stored after every append queued before it and before every append queued after it,
   * whatever the network does: the writer flushes it alone (an ordered source such as the AMQP
   * input queue, which appends a delivery before the previous one is answered; the StartMarker).
   * Without it, two appends in flight at once — which no client can order — may be stored in
   * the order their flushes reach the log lock. @default false
   */
  inOrder?: boolean;
  /**
   * The tenant the messages belong to (docs/tenants.md): `stream.streamId` and the idempotency
   * keys are that tenant's names (unique per tenant), and readers filtered by tenant see them.
   * Absent: no tenant.
   */
  tenant?: string;
  /** System messages and stream appends skip the duplicate window. @default false */
  skipDuplicateWindow?: boolean;
  /**
   * The correlation its messages get unless they name their own; `null`: none, the append starts
   * a new one. Entry points (REST, AMQP input) pass it so the request path needs no
   * AsyncLocalStorage (on Node 20 an active one slows every promise of the process).
   * @default the current CorrelationContext (runWithCorrelation)
   */
  correlation?: CorrelationContext | null;
}

/** What happened to one message of an append. */
export type AppendEntry =
  | { status: 'created'; message: StoredMessage }
  | { status: 'duplicate'; contentHash: string }
  | { status: 'repeat'; message: StoredMessage };

export interface AppendResult {
  entries: AppendEntry[];
  /** Stream version after the append (stream appends only). */
  streamVersion?: number;
}

/**
 * The category of a stream: the text before its first `-` (MessageDB's convention). A tenant's
 * stored stream id (`acme/order-1`, docs/tenants.md) has a tenant's category (`acme/order`): a
 * tenant id holds no `-`.
 */
export function categoryOf(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash);
}
