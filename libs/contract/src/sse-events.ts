import type { OrdinalMessage, OrdinalTombstone } from './message.js';

/**
 * The events of the pull stream, `GET /api/events/stream` (Server-Sent Events): each event's
 * name and its `data` (one JSON value). The server's writer accepts only these, the client's
 * parser yields these, the consoles' parser filters by these names, and the OpenAPI
 * document's `x-sse-events` is checked against them when the server compiles.
 */
export type SseEvent =
  /** Once, first, with `retry:` (the reconnection delay of a standard EventSource). */
  | { event: 'connected'; data: { startIndex: number; headIndex: number } }
  /** One message, in index order, with `id:` = its index (the EventSource's Last-Event-ID). */
  | { event: 'message'; data: { message: OrdinalMessage } }
  /**
   * A position whose message is hidden or erased (docs/lifecycle.md), in index order, with
   * `id:` = its index: a reader's position moves over it like over a message.
   */
  | { event: 'tombstone'; data: { tombstone: OrdinalTombstone } }
  /**
   * A row that committed inside a hole this connection had passed (concurrent mode): out of
   * order, once, without `id:` (the client's Last-Event-ID stays where it was).
   */
  | { event: 'late-message'; data: { message: OrdinalMessage } }
  /** On a timer while the stream is open: the server's head. */
  | { event: 'heartbeat'; data: { headIndex: number } }
  /**
   * Once `endIndex` is passed, with `id:` = `endIndex`; then the stream closes. `lastIndex`
   * is the last message sent, or null when none matched.
   */
  | { event: 'stream-ended'; data: { endIndex: number; lastIndex: number | null } };

/** The name of an SSE event (its `event:` line). */
export type SseEventName = SseEvent['event'];

/** The `data` of the event named `N`. */
export type SseEventData<N extends SseEventName> = Extract<SseEvent, { event: N }>['data'];

/** One entry per event name: the compiler refuses a missing or an unknown name. */
const EVENT_NAMES: { readonly [N in SseEventName]: true } = {
  connected: true,
  message: true,
  tombstone: true,
  'late-message': true,
  heartbeat: true,
  'stream-ended': true,
};

/** Every event name, in the order a stream can first send them. */
export const SSE_EVENT_NAMES = Object.freeze(Object.keys(EVENT_NAMES)) as readonly SseEventName[];

/** True when `name` is an event of the stream (parsers skip any other name). */
export function isSseEventName(name: string): name is SseEventName {
  return Object.hasOwn(EVENT_NAMES, name);
}
