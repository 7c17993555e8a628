/** Table names of this library live in one place; identifiers never come from input. */
export const AMQP_TABLES = {
  bookmarks: 'interface_bookmarks',
} as const;

/** Header names of interface deliveries and of input messages. */
export const HEADERS = {
  index: 'index',
  messageType: 'messageType',
  userId: 'userId',
  metadata: 'metadata',
  contentHash: 'contentHash',
  idempotencyKey: 'idempotencyKey',
  serverCorrelationUuid: 'serverCorrelationUuid',
  /** The message's causation id (its correlation id is the `correlationId` property too). */
  causationId: 'causationId',
  correlationId: 'correlationId',
  /** The W3C trace context stored with the message (input: the one to continue). */
  traceparent: 'traceparent',
  /** `true` on a late arrival: a row that committed inside a hole the interface had passed (concurrent mode). */
  late: 'late',
  /** On a dead letter of the input queue: why Ordinal refused it, `{ code, message }`. */
  ordinalError: 'x-ordinal-error',
  /** On a tombstone (a hidden or erased message, docs/lifecycle.md): its reason; the body is the tombstone. */
  tombstone: 'tombstone',
  /**
   * On a message with personal fields (docs/personal-data.md): their JSON pointers as a JSON
   * array; the body holds their replacements (push interfaces never get the clear values).
   */
  redacted: 'redacted',
} as const;

/** The dead-letter queue of an input queue: `<input>.rejected`. */
export const rejectedQueueOf = (inputQueue: string): string => `${inputQueue}.rejected`;

/** The queue an interface publishes to. */
export const sinkQueueOf = (name: string): string => `${name}.sink`;

/** The queue a replayable interface's consumer acknowledges to. */
export const ackQueueOf = (name: string): string => `${name}.ack`;
