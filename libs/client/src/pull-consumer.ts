import { backoffDelay, type BackoffOptions } from './backoff.js';
import type { Bookmark } from './bookmark.js';
import type { OrdinalMessage, OrdinalTombstone, Shard, StreamEvent } from './client-types.js';
import type { StreamOptions } from './event-stream.js';
import { isRetryable } from './ordinal-http.error.js';

/** What the handler learns besides the message. */
export interface MessageContext {
  /** The message's global index (its idempotency key, G2). */
  index: number;
  /**
   * False while replaying what was already in the log when this consumer first connected
   * (index <= that head, or `liveAfter` when given): update state, hold back side effects.
   */
  caughtUp: boolean;
  /** The head reported by the current connection's `connected` event. */
  headIndex: number;
  /**
   * True for a late arrival: a message that committed inside a hole the stream had already
   * passed (concurrent mode, after the gap timeout). It comes out of index order and does not
   * move the bookmark.
   */
  late: boolean;
  /** The message's tenant (docs/tenants.md); absent for a message of no tenant. */
  tenant?: string;
  /** The message's correlation id (absent on messages stored before correlation ids existed). */
  correlationId?: string;
  /** What caused the message. */
  causationId?: string;
  /** The W3C trace context stored with the message: continue it in what you do in reaction. */
  traceparent?: string;
  /**
   * The ids of a message published in reaction to this one: spread it into the message
   * (`client.publish({ ...reply, ...ctx.causedBy })`) and the chain stays whole.
   */
  causedBy: { correlationId: string; causationId: string };
}

/** How a pull consumer runs. */
export interface ConsumeOptions {
  bookmark: Bookmark;
  /** Processes one message; the bookmark moves to its index only after this resolves. */
  handler: (message: OrdinalMessage, context: MessageContext) => Promise<void> | void;
  types?: string[];
  /** Stop after this index: `done` resolves. */
  endIndex?: number;
  shard?: Shard;
  backoff?: BackoffOptions;
  /** Messages above this index count as caught up. @default the head at the first connection */
  liveAfter?: number;
  /** A connection silent this long is dropped and reopened. @default 30000 */
  idleTimeoutMs?: number;
  /** Told about every failure that leads to a reconnection (a dropped stream, a handler error). */
  onError?: (error: unknown, attempt: number) => void;
  /**
   * Told about every tombstone (a position whose message is hidden or erased, docs/lifecycle.md)
   * before the bookmark moves over it. Without it, tombstones just move the bookmark.
   */
  onTombstone?: (tombstone: OrdinalTombstone) => Promise<void> | void;
  /** Told about every connection (`startIndex`, `headIndex`). */
  onConnected?: (info: { startIndex: number; headIndex: number }) => void;
}

/** The subset of OrdinalClient a consumer uses. */
interface StreamSource {
  stream(options: StreamOptions): AsyncGenerator<StreamEvent>;
}

/**
 * A pull consumer: reads the bookmark, streams from the index after it, calls the
 * handler for each message in index order and then saves its index. Any failure (server
 * restart, dropped connection, handler error) ends the connection; it reconnects with
 * back-off from the bookmark, so every message is handled at least once and the bookmark
 * never passes a message the handler has not finished.
 */
export class PullConsumer {
  /** Resolves once `endIndex` is passed or `stop()` is called; rejects on a request the server refuses (4xx). */
  readonly done: Promise<void>;
  private stopped = false;
  private abort: AbortController | null = null;
  private wakeSleep: (() => void) | null = null;
  private saved = 0;
  private liveAfter: number | null;
  private headIndex = 0;

  constructor(
    private readonly source: StreamSource,
    private readonly options: ConsumeOptions,
  ) {
    this.liveAfter = options.liveAfter ?? null;
    this.done = this.run();
  }

  /** The bookmark: the last index handled and saved. */
  get position(): number {
    return this.saved;
  }

  /** Stops after the message being handled (if any) is finished and saved. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort(new Error('Consumer stopped'));
    this.wakeSleep?.();
    await this.done.catch(() => undefined);
  }

  private async run(): Promise<void> {
    this.saved = await this.options.bookmark.load();
    let attempt = 0;
    while (!this.stopped) {
      if (this.options.endIndex !== undefined && this.saved >= this.options.endIndex) return;
      const abort = new AbortController();
      this.abort = abort;
      try {
        const ended = await this.connection(abort.signal, () => (attempt = 0));
        if (ended) return;
        if (this.stopped) return;
        this.options.onError?.(
          new Error('The stream closed; reconnecting from the bookmark'),
          attempt,
        );
      } catch (error) {
        if (this.stopped) return;
        if (!isRetryable(error)) throw error;
        this.options.onError?.(error, attempt);
      } finally {
        abort.abort();
      }
      await this.sleep(backoffDelay(attempt++, this.options.backoff));
    }
  }

  /** One connection; true when the stream ended at `endIndex`. */
  private async connection(signal: AbortSignal, onConnected: () => void): Promise<boolean> {
    const { types, endIndex, shard, idleTimeoutMs } = this.options;
    const events = this.source.stream({
      startIndex: this.saved + 1,
      endIndex,
      types,
      shard,
      signal,
      idleTimeoutMs,
    });
    for await (const event of events) {
      if (event.event === 'connected') {
        this.headIndex = event.headIndex;
        this.liveAfter ??= event.headIndex;
        onConnected();
        this.options.onConnected?.({ startIndex: event.startIndex, headIndex: event.headIndex });
      } else if (event.event === 'message') {
        const index = event.message.id;
        if (index <= this.saved) continue;
        await this.options.handler(event.message, {
          index,
          caughtUp: index > (this.liveAfter ?? 0),
          headIndex: this.headIndex,
          late: false,
          ...lineageOf(event.message),
        });
        await this.options.bookmark.save(index);
        this.saved = index;
        if (this.stopped) return false;
      } else if (event.event === 'tombstone') {
        const index = event.tombstone.id;
        if (index <= this.saved) continue;
        await this.options.onTombstone?.(event.tombstone);
        await this.options.bookmark.save(index);
        this.saved = index;
        if (this.stopped) return false;
      } else if (event.event === 'late-message') {
        await this.options.handler(event.message, {
          index: event.message.id,
          caughtUp: true,
          headIndex: this.headIndex,
          late: true,
          ...lineageOf(event.message),
        });
        if (this.stopped) return false;
      } else if (event.event === 'stream-ended') {
        if (event.endIndex > this.saved) {
          // Everything up to endIndex was delivered or filtered out: the bookmark may pass it.
          await this.options.bookmark.save(event.endIndex);
          this.saved = event.endIndex;
        }
        return true;
      }
    }
    return false;
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSleep = done;
    });
  }
}

/** The ids a handler's context carries for `message`. */
function lineageOf(
  message: OrdinalMessage,
): Pick<MessageContext, 'tenant' | 'correlationId' | 'causationId' | 'traceparent' | 'causedBy'> {
  const causedBy = {
    correlationId: message.correlationId ?? String(message.id),
    causationId: String(message.id),
  };
  return {
    ...(message.tenant === undefined ? {} : { tenant: message.tenant }),
    correlationId: message.correlationId,
    causationId: message.causationId,
    traceparent: message.traceparent,
    causedBy,
  };
}
