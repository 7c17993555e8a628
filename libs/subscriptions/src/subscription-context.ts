import type { MessageKeys, StoredMessage } from '@ordinal/log';
import type { EntityManager } from 'typeorm';
import type { SubscriptionStream } from './source/subscription-stream.js';
import type { ErrorPolicy } from './error-policy.js';

/** What a handler gets beside the message. */
export interface MessageContext {
  /** The batch's transaction: write the read model with it, the checkpoint moves in it too. */
  manager: EntityManager;
  /** The message's global index. */
  index: number;
  /** True at or below the replay boundary (the head when first started or last rebuilt, S8): hold side effects. */
  isReplay: boolean;
  /** True for a late arrival: a message that committed inside a hole the subscription had already passed. */
  isLate: boolean;
  /** The stored message (raw body, metadata, stream, schema version). */
  message: StoredMessage;
  /** The subscription's (or projection's) name. */
  subscription: string;
  /** The message's tenant (docs/tenants.md), null for a message of no tenant. */
  tenant: string | null;
  /**
   * The message's correlation id (null only for messages stored before they existed). What the
   * handler appends (an aggregate save included) gets it, and the message as its cause, by itself.
   */
  correlationId: string | null;
  /** What caused the message: a message index as text, or the id of the request that started the correlation. */
  causationId: string | null;
  /** The W3C trace context stored with the message. */
  traceparent: string | null;
}

/** Applies one message; throw to roll the batch back (it is retried with back-off). */
export type MessageHandler = (message: StoredMessage, ctx: MessageContext) => Promise<void> | void;

/**
 * What a gate says for one batch, read inside the batch's transaction (a versioned
 * projection's build, docs/projections.md): apply nothing above `upTo` (null: no limit), and
 * run handlers live only above `liveFrom` (null: the checkpoint's own replay boundary).
 */
export interface BatchGate {
  upTo: number | null;
  liveFrom: number | null;
}

/** Options of `SubscriptionsService.subscribe`. */
export interface SubscribeOptions {
  /** The checkpoint's name: a restart resumes from it. */
  name: string;
  /** `'$all'`, `{ types: [...] }` or `{ category: 'order' }`. */
  stream: SubscriptionStream;
  /**
   * Only this tenant's messages of the stream (docs/tenants.md): `$all` and type reads filter
   * on the tenant and run under its row-level security; a category stream reads the tenant's
   * own category (stored qualified, so no other tenant's row matches).
   * The positions are the log's, with gaps where other tenants' messages are. @default every tenant's
   */
  tenant?: string;
  handle: MessageHandler;
  /** Where a new checkpoint starts: the first message, or the current head. @default 'beginning' */
  startAt?: 'beginning' | 'end';
  /** Most messages per batch (one transaction). @default the module's batchSize */
  batchSize?: number;
  /**
   * A rebuild of its own (a projection's blue/green rebuild builds a new copy beside the
   * serving one): `rebuild` runs it instead of the in-place reset, unless asked for in-place.
   */
  rebuild?: () => Promise<void>;
  /** Called in an in-place rebuild's transaction before the checkpoint is reset (clear the read model). */
  reset?: (manager: EntityManager) => Promise<void>;
  /** What a handler that keeps failing leads to (see ErrorPolicy). @default retry until fixed */
  onError?: ErrorPolicy;
  /**
   * Only these messages reach the handler (the others are passed over; the checkpoint moves
   * over them too): one partition of a partitioned projection.
   */
  accepts?: (message: StoredMessage) => boolean;
  /**
   * `accepts` on a message's keys alone, when they are all it looks at (a projection
   * partitioned by `streamId` or `userId`). While a process runs only some members of a group
   * and each of them has one, the group's read there maps only the rows they want: the keys of
   * the others' rows are read, not their bodies.
   */
  acceptsKeys?: (keys: MessageKeys) => boolean;
  /**
   * Runs first in every transaction that applies messages (batches, late arrivals, parked
   * replays), before any handler: it may lock rows and set the transaction's search_path, and
   * it bounds the batch (see BatchGate). A blue/green projection build uses it.
   */
  gate?: (manager: EntityManager) => Promise<BatchGate>;
  /** Shown in status. @default 'subscription' */
  kind?: 'subscription' | 'projection';
}

/** What `GET /api/projections` shows of one subscription or projection. */
export interface SubscriptionStatus {
  name: string;
  kind: 'subscription' | 'projection';
  stream: string;
  /** Every message up to here is applied. */
  position: number;
  /** The replay boundary. */
  liveFrom: number;
  /**
   * `standby`: this process waits while another owns it; `unowned`: no live process owns it
   * (in reports); `stopped`: stopped by its error policy (or shut down).
   */
  state: 'starting' | 'running' | 'failed' | 'stopped' | 'rebuilding' | 'standby' | 'unowned';
  lastError: string | null;
  lastErrorAt: string | null;
  /** Failed attempts since the last success. */
  retries: number;
  /** Positions passed inside abandoned holes, watched for late arrivals. */
  pendingLate: number[];
  lateDelivered: number;
  /** Messages the error policy skipped since this process started running it. */
  skipped: number;
  /** Messages this process parked since it started running it (the stored count is `parked` in reports). */
  parkedHere: number;
  /** Reads wait at the low watermark (concurrent mode, not a single category). */
  watermarked: boolean;
}
