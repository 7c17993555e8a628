import type { Shard, SseEvent, StreamEvent } from './client-types.js';
import { OrdinalHttpError } from './ordinal-http.error.js';
import { decodeSseEvent, SseParser } from './sse-parser.js';

/** One connection of a stream. */
export interface StreamOptions {
  /** First index to receive. @default 1 */
  startIndex?: number;
  /** Last index; the server sends `stream-ended` once past it. */
  endIndex?: number;
  types?: string[];
  shard?: Shard;
  /** Aborts the connection. */
  signal?: AbortSignal;
  /** Gives up on a connection silent this long (the server sends heartbeats). @default 30000 */
  idleTimeoutMs?: number;
}

/** The query string of a stream request. */
export function streamQuery(options: StreamOptions): string {
  const params = new URLSearchParams({ startIndex: String(options.startIndex ?? 1) });
  if (options.endIndex !== undefined) params.set('endIndex', String(options.endIndex));
  if (options.types && options.types.length > 0) params.set('types', options.types.join(','));
  if (options.shard) {
    params.set('shardCount', String(options.shard.count));
    params.set('shardIndex', String(options.shard.index));
  }
  return params.toString();
}

/** A contract event as the client yields it: its data's fields beside `event`. */
function toStreamEvent({ event, data }: SseEvent): StreamEvent {
  return { event, ...data } as StreamEvent;
}

/**
 * Opens one SSE connection and yields its events until the server ends it. Throws
 * OrdinalHttpError for an error status, and an Error when the connection is silent longer
 * than `idleTimeoutMs`. No reconnection here: the pull consumer does that.
 */
export async function* openEventStream(
  url: string,
  headers: Record<string, string>,
  options: StreamOptions,
  fetchImpl: typeof fetch,
): AsyncGenerator<StreamEvent> {
  const abort = new AbortController();
  const onAbort = () => abort.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) abort.abort(options.signal.reason);
  const idleMs = options.idleTimeoutMs ?? 30_000;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(
      () => abort.abort(new Error(`No data for ${idleMs} ms; reconnecting`)),
      idleMs,
    );
  };
  try {
    arm();
    const response = await fetchImpl(`${url}?${streamQuery(options)}`, {
      headers: { ...headers, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    if (!response.ok || !response.body) {
      const text = await response.text().catch(() => '');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      const message = (body as { message?: string })?.message ?? response.statusText;
      throw new OrdinalHttpError(
        response.status,
        body,
        `Stream refused (${response.status}): ${message}`,
      );
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    try {
      for (;;) {
        arm();
        const { value, done } = await reader.read();
        // The consumer's own time (between yields) does not count as silence.
        clearTimeout(idle);
        if (done) return;
        for (const raw of parser.push(decoder.decode(value, { stream: true }))) {
          const event = decodeSseEvent(raw);
          if (event) yield toStreamEvent(event);
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  } catch (error) {
    if (abort.signal.aborted && abort.signal.reason instanceof Error) throw abort.signal.reason;
    throw error;
  } finally {
    clearTimeout(idle);
    options.signal?.removeEventListener('abort', onAbort);
  }
}
