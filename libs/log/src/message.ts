import type { MESSAGE_FIELDS, OrdinalMessage } from '@ordinal/contract';
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
};

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
}

/**
 * Expected version of a stream append: a number is the version the stream must be at
 * (0 = the stream must not exist yet), `'any'` skips the check, `'no_stream'` is 0 spelt out.
 */
export type ExpectedVersion = number | 'any' | 'no_stream';

/** One append: its messages land contiguously, atomically, in one flush. */
export interface AppendRequest {
  messages: NewMessage[];
  /** Append to an aggregate stream with an optimistic version check. */
  stream?: { streamId: string; expectedVersion: ExpectedVersion };
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

/** The category of a stream: the text before its first `-` (MessageDB's convention). */
export function categoryOf(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash);
}
