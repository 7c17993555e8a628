import type { StoredMessage } from '../message.js';

/** Which part of the log a feed delivers. */
export interface FeedOptions {
  /** First index to deliver (inclusive); values below 1 mean 1. */
  fromIndex: number;
  /** Last index to deliver (inclusive); the iteration ends once the log has passed it. */
  toIndex?: number;
  /** Only these message types (absent or empty: every type). */
  types?: string[];
  /**
   * Only this tenant's messages (docs/tenants.md): its catch-up reads run under the tenant's
   * row-level security. The feed's positions are the log's: other tenants' are passed over.
   */
  tenant?: string;
  /** Only messages whose user falls in this shard (L9). */
  shard?: { count: number; index: number };
  /**
   * Only messages this predicate accepts (a reader's access rules): the others are passed
   * over like those of another type, never delivered, and the feed's position moves past them.
   */
  accept?: (message: StoredMessage) => boolean;
  /** Most live messages buffered for this feed before it detaches to database catch-up (R3). */
  mailboxLimit?: number;
  /**
   * Also watch the passed positions below `fromIndex` (a consumer resuming from a bookmark it
   * moved past them; abandoned ones, and exact releases still watched): those not arrived yet,
   * and those that arrived since `arrivedSince` — the previous feed's `arrivedSince`, read when
   * the consumer saved its bookmark (null: none that arrived). Not the time of the save: an
   * arrival claimed before it may not have reached the consumer yet. Absent: watch none.
   */
  watchAbandonedBelow?: { arrivedSince?: Date | null };
  /**
   * Catch-up reads hand out RenderedMessage (the message's API JSON written by PostgreSQL,
   * other fields parsed only when asked for): for a consumer that sends the JSON on, an SSE
   * stream. Live messages are ordinary StoredMessage either way. @default false
   */
  rendered?: boolean;
  /**
   * Makes the feed droppable (an SSE stream): the catch-up pages it holds count against the
   * router's bound for all droppable feeds (`streamsBufferBytes`), and when that is exceeded the
   * feed holding the most may be dropped: it closes (its iteration ends) and this is called,
   * so the consumer can tell its client, who resumes from its bookmark. Absent: never dropped
   * (subscriptions, push interfaces).
   */
  onDropped?: () => void;
  /**
   * Called with each catch-up page before its first message is yielded, and awaited: what
   * the consumer needs for the page is fetched once for all its rows (the data keys of a
   * reader with the `personal` scope), not per message. A rejection ends the feed like a
   * failed read.
   */
  beforePage?: (messages: readonly StoredMessage[]) => Promise<void> | void;
}

/**
 * A message as a feed yields it. `late` marks a row that committed inside a hole the feed had
 * already passed (concurrent mode, after the gap timeout): it comes out of index order,
 * once, and a consumer's bookmark must not move back to it.
 */
export type FeedMessage = StoredMessage & { readonly late?: true };

/**
 * A gap-free, repeat-free view of the log from `fromIndex` (R2): history from the database,
 * then live messages, in index order (late arrivals excepted, marked `late`). The consumer pulls (`for await`), so a slow consumer
 * slows only its own feed; when its live mailbox overflows, the feed reads the database
 * again and rejoins live without a miss or a repeat.
 */
export interface LogFeed extends AsyncIterable<FeedMessage> {
  /**
   * The safe head once the feed has registered with the router: every index up to it is
   * history for this feed. Rejects (e.g. database unavailable) before anything is delivered.
   */
  readonly headAtOpen: Promise<number>;
  /** The highest index this feed has passed, delivered or filtered out (0 before any). */
  readonly position: number;
  /** True once the iteration ended because `toIndex` was passed. */
  readonly completed: boolean;
  /**
   * What to save with a bookmark taken now, for the feed that resumes from it
   * (`watchAbandonedBelow.arrivedSince`): no late arrival this feed still owes (at a position it
   * passed and watches, or found and not yielded yet) was claimed before it. Null while it owes
   * none. At least once: an arrival it yields after it may come again after a restart.
   */
  readonly arrivedSince: Date | null;
  /** Ends the iteration (a pending `next()` resolves as done) and leaves the router. */
  close(): void;
  /**
   * Stops taking live messages for now (the consumer cannot keep up, e.g. its socket is full):
   * the feed leaves the router and holds nothing live; its next `next()` catches up from the
   * database from its position and rejoins live, as after an overflow. Nothing is missed or
   * repeated. A no-op while not live.
   */
  suspend(): void;
}
