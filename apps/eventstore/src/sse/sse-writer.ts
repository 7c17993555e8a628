import type { ServerResponse } from 'node:http';
import type { OrdinalMessage, OrdinalTombstone, SseEvent } from '@ordinal/contract';
import type { JsonText } from './json-text.js';

/** Bytes a stream may have waiting in the socket's buffer before it waits for `drain`. */
const BUFFER_LIMIT = 64 * 1024;
/** Events are joined into one write of about this many characters (or at the end of the turn). */
const CHUNK = 16 * 1024;

/** The events whose data is `{ message }`: `sendMessage` writes them from JSON text. */
export type SseMessageEvent = Extract<SseEvent, { data: { message: OrdinalMessage } }>;

/** The tombstone event, whose data is `{ tombstone }`: `sendTombstone` writes it from JSON text. */
export type SseTombstoneEvent = Extract<SseEvent, { event: 'tombstone' }>;

/** The other events: `send` serialises their data. */
export type SseControlEvent = Exclude<SseEvent, SseMessageEvent | SseTombstoneEvent>;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * @internal `sendMessage` writes a message event's data as `{"message":<json>}`: this compiles
 * only while that is the whole of the contract's data for those events.
 */
export const MESSAGE_DATA_IS_WRAPPED_MESSAGE: Same<
  SseMessageEvent['data'],
  { message: OrdinalMessage }
> = true;

/** @internal As above, for `sendTombstone`. */
export const TOMBSTONE_DATA_IS_WRAPPED: Same<
  SseTombstoneEvent['data'],
  { tombstone: OrdinalTombstone }
> = true;

/**
 * Server-Sent Events on a raw Node response: the contract's `SseEvent`s, nothing else. Events
 * of one event-loop turn are joined into few large writes; `send` reports when the buffer is
 * full so the caller waits for `drained` instead of buffering without bound.
 */
export class SseWriter {
  private pending = '';
  private scheduled = false;
  private ended = false;
  private readonly closeListeners = new Set<() => void>();

  constructor(private readonly raw: ServerResponse) {
    raw.once('close', () => {
      this.ended = true;
      for (const listener of this.closeListeners) listener();
    });
  }

  /** Sends the status and headers of an event stream. */
  open(): void {
    this.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    this.raw.flushHeaders();
  }

  /** True once the client went away or the stream was ended. */
  get closed(): boolean {
    return this.ended || this.raw.destroyed;
  }

  /** True while the socket's buffer is over the limit: wait for `drained()` before more. */
  get full(): boolean {
    return this.raw.writableLength + this.pending.length >= BUFFER_LIMIT;
  }

  /**
   * Writes one event (its data serialised); returns false when the caller should wait for
   * `drained()`. `retryMs` adds SSE's `retry:` field (the reconnection delay an EventSource
   * uses).
   */
  send({ event, data }: SseControlEvent, id?: number, retryMs?: number): boolean {
    if (this.closed) return false;
    const retry = retryMs === undefined ? '' : `retry: ${retryMs}\n`;
    this.pending +=
      id === undefined
        ? `event: ${event}\n${retry}data: ${JSON.stringify(data)}\n\n`
        : `event: ${event}\nid: ${id}\n${retry}data: ${JSON.stringify(data)}\n\n`;
    return this.queued();
  }

  /**
   * Writes one `message` or `late-message` event whose data is `{"message":<json>}`, with
   * `json` already JSON text (rendered by PostgreSQL, or once per live message): nothing is
   * parsed or serialised here. Returns false when the caller should wait for `drained()`.
   */
  sendMessage(
    event: SseMessageEvent['event'],
    json: JsonText<OrdinalMessage>,
    id?: number,
  ): boolean {
    if (this.closed) return false;
    this.pending +=
      id === undefined
        ? `event: ${event}\ndata: {"message":${json}}\n\n`
        : `event: ${event}\nid: ${id}\ndata: {"message":${json}}\n\n`;
    return this.queued();
  }

  /** Writes one `tombstone` event, `{"tombstone":<json>}` with `id:`, as `sendMessage` does. */
  sendTombstone(json: JsonText<OrdinalTombstone>, id: number): boolean {
    if (this.closed) return false;
    this.pending += `event: tombstone\nid: ${id}\ndata: {"tombstone":${json}}\n\n`;
    return this.queued();
  }

  private queued(): boolean {
    if (this.pending.length >= CHUNK) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
    return !this.full;
  }

  private flush(): void {
    if (this.pending.length === 0 || this.closed) return;
    const text = this.pending;
    this.pending = '';
    this.raw.write(text);
  }

  /** Resolves when the buffer has drained or the connection closed. */
  drained(): Promise<void> {
    this.flush();
    if (this.closed || !this.full) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.raw.off('drain', done);
        this.closeListeners.delete(done);
        resolve();
      };
      this.raw.on('drain', done);
      this.closeListeners.add(done);
    });
  }

  /** Calls `listener` once the connection closes (client gone or stream ended). */
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.add(listener);
  }

  /**
   * Closes the connection at once, dropping what waits in the process for it (the stream was
   * dropped to keep the server within its byte bounds). Its client reconnects, as an
   * EventSource does, from the last event it got whole (Last-Event-ID); what the kernel
   * already took is still delivered before the end.
   */
  abort(): void {
    if (this.ended) return;
    this.ended = true;
    this.pending = '';
    this.raw.destroy();
  }

  /** Ends the response (flushing what is buffered). */
  end(): void {
    if (this.ended) return;
    this.flush();
    this.ended = true;
    this.raw.end();
  }
}
