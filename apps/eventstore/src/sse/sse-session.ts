import { Logger } from '@nestjs/common';
import type { OrdinalMessage, OrdinalRecord, OrdinalTombstone } from '@ordinal/contract';
import { renderedJson, type LogFeed, type StoredMessage } from '@ordinal/log';
import { toMessageResponse } from '../ingest/message-response.js';
import { jsonText, type JsonText } from './json-text.js';
import type { SseWriter } from './sse-writer.js';
import type { StreamParams } from './sse-params.js';

/**
 * Live messages are the same objects in every stream's mailbox: each is serialised once for
 * all streams (catch-up rows come rendered by PostgreSQL).
 */
const serialised = new WeakMap<StoredMessage, JsonText<OrdinalRecord>>();

/**
 * `data.message` of a message event (or `data.tombstone` of a tombstone event, when the
 * position reads back as one) as JSON text.
 */
export function messageJson(message: StoredMessage): JsonText<OrdinalRecord> {
  const json = renderedJson(message);
  // Catch-up rows: PostgreSQL rendered the contract's record (SQL built from MESSAGE_FIELDS).
  if (json !== undefined) return json as JsonText<OrdinalRecord>;
  let text = serialised.get(message);
  if (text === undefined)
    serialised.set(message, (text = jsonText<OrdinalRecord>(toMessageResponse(message))));
  return text;
}

/** What a session needs besides its feed and writer. */
export interface SseSessionOptions {
  params: StreamParams;
  headIndex: number;
  heartbeatMs: number;
  /** Sent as `retry:` with `connected`: how long a standard EventSource waits before reconnecting. */
  retryMs: number;
  /** The head to report in heartbeats. */
  currentHead(): number;
  /**
   * For a reader with the `personal` scope: the message with its personal fields in clear
   * (docs/personal-data.md). Absent: every reader gets what the log renders (replacements).
   */
  reveal?: {
    /** The message in clear when its key is in memory (no promise), else undefined. */
    cached(message: StoredMessage): StoredMessage | undefined;
    /** The message in clear, its key read from the key store. */
    read(message: StoredMessage): Promise<StoredMessage>;
  };
}

/**
 * One SSE connection (R1): `connected`, then every message of the feed as `message` with
 * `id: <index>`, a `heartbeat` on a timer, and `stream-ended` once `endIndex` is passed. A
 * late arrival (a row that committed inside a hole the stream had passed) comes as
 * `late-message`, same data, without an `id:` line: the client's Last-Event-ID stays.
 * Writes wait for the socket to drain, so a slow client slows only its own feed: once the
 * socket's buffer is full (SseWriter's limit) the feed is suspended (it leaves the live router
 * and holds no live messages) and reads on from the database when the socket has drained.
 */
export class SseSession {
  private readonly logger = new Logger(SseSession.name);
  private lastIndex: number | null = null;

  constructor(
    private readonly feed: LogFeed,
    private readonly writer: SseWriter,
    private readonly options: SseSessionOptions,
  ) {
    writer.onClose(() => feed.close());
  }

  /** Streams until the end index, the client leaving, `close()` or a read failure. */
  async run(): Promise<void> {
    const { params, headIndex, heartbeatMs } = this.options;
    // The head a client is told never goes back, even if the router is behind the head at connect time.
    let reported = headIndex;
    const heartbeat = setInterval(() => {
      reported = Math.max(reported, this.options.currentHead());
      if (!this.writer.full)
        this.writer.send({ event: 'heartbeat', data: { headIndex: reported } });
    }, heartbeatMs);
    try {
      this.writer.send(
        { event: 'connected', data: { startIndex: params.startIndex, headIndex } },
        undefined,
        this.options.retryMs,
      );
      const { reveal } = this.options;
      for await (const message of this.feed) {
        const json = messageJson(
          reveal !== undefined && message.personal !== undefined
            ? (reveal.cached(message) ?? (await reveal.read(message)))
            : message,
        );
        const sent =
          message.tombstone !== undefined
            ? message.late || params.tombstones === 'skip'
              ? true
              : this.writer.sendTombstone(json as JsonText<OrdinalTombstone>, message.id)
            : message.late
              ? this.writer.sendMessage('late-message', json as JsonText<OrdinalMessage>)
              : this.writer.sendMessage('message', json as JsonText<OrdinalMessage>, message.id);
        if (!sent) {
          // The client is behind: hold nothing live for it while its socket drains; it resumes from its position.
          this.feed.suspend();
          await this.writer.drained();
        }
        if (this.writer.closed) break;
        if (!message.late) this.lastIndex = message.id;
      }
      // A feed completes only once it passed `toIndex`, so only with an `endIndex`.
      const { endIndex } = params;
      if (this.feed.completed && endIndex !== undefined && !this.writer.closed) {
        // `id: endIndex`: an EventSource that reconnects (as it always does) sends Last-Event-ID = endIndex and gets 204,
        // even when no message matched (it would otherwise have no id to send and start again).
        this.writer.send(
          { event: 'stream-ended', data: { endIndex, lastIndex: this.lastIndex } },
          endIndex,
        );
      }
    } catch (error) {
      this.logger.warn(
        `Stream from ${params.startIndex} ended after index ${this.lastIndex ?? 'none'}: ${String(error)}; the client resumes from its bookmark`,
      );
    } finally {
      clearInterval(heartbeat);
      this.feed.close();
      this.writer.end();
    }
  }

  /** Ends the stream promptly (shutdown); the client reconnects from its bookmark. */
  close(): void {
    this.feed.close();
    this.writer.end();
  }
}
