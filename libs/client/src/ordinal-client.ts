import type {
  ImportResult,
  LogPage,
  OrdinalMessage,
  OrdinalRecord,
  PublishMessage,
  PublishOptions,
  PublishResult,
  ReadOptions,
  StreamEvent,
} from './client-types.js';
import { openEventStream, type StreamOptions } from './event-stream.js';
import { OrdinalHttpError } from './ordinal-http.error.js';
import { PullConsumer, type ConsumeOptions } from './pull-consumer.js';
import { ConsumerGroupMember, type ConsumerGroupOptions } from './consumer-group.js';
import { fetchTransport, nodeTransport, type JsonTransport } from './json-transport.js';

/** Where the server is and how to authenticate. */
export interface OrdinalClientOptions {
  /** e.g. `http://localhost:8083` */
  baseUrl: string;
  /** A bearer token (scope `write` to publish, `read` to read). */
  token: string;
  /**
   * The tenant to act for (docs/tenants.md), sent as `Ordinal-Tenant` with every request: a token
   * with the `tenants` scope and no tenant of its own may name any; a tenant's token needs none
   * (its own is implied). @default none
   */
  tenant?: string;
  /**
   * A fetch implementation, for every request. Left out, JSON requests go through `node:http`
   * (about half the CPU per request of Node's own fetch) and streams and imports through
   * `globalThis.fetch`.
   */
  fetch?: typeof fetch;
}

/**
 * The Ordinal HTTP client: publish, read pages, stream, and run pull consumers. Plain
 * TypeScript on Node's HTTP and fetch, no Nest.
 */
export class OrdinalClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly transport: JsonTransport;
  private readonly headers: Record<string, string>;

  constructor(options: OrdinalClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.transport = options.fetch ? fetchTransport(options.fetch) : nodeTransport;
    this.headers = { authorization: `Bearer ${options.token}` };
    if (options.tenant !== undefined) this.headers['ordinal-tenant'] = options.tenant;
  }

  /** Publishes one message. */
  async publish(message: PublishMessage, options: PublishOptions = {}): Promise<PublishResult> {
    const { status, body } = await this.request<OrdinalMessage>(
      'PUT',
      '/api/events/message',
      message,
      traceHeaders(options),
    );
    if (status === 202) return { status: 'duplicate', contentHash: body.contentHash };
    return { status: status === 200 ? 'repeat' : 'created', message: body };
  }

  /** Publishes up to 1,000 messages atomically, with contiguous indices. */
  async publishBatch(
    messages: PublishMessage[],
    options: PublishOptions = {},
  ): Promise<PublishResult[]> {
    const { body } = await this.request<{ messages: Array<Record<string, unknown>> }>(
      'POST',
      '/api/events/messages',
      { messages },
      traceHeaders(options),
    );
    return body.messages.map((entry) => {
      const { status, ...rest } = entry;
      if (status === 'duplicate')
        return { status: 'duplicate', contentHash: rest.contentHash as string };
      return { status: status as 'created' | 'repeat', message: rest as unknown as OrdinalMessage };
    });
  }

  /**
   * Bulk import (`POST /api/events/import`, admin scope): NDJSON, one
   * `{"messageType", "content", "userId"?, "metadata"?, "idempotencyKey"?, "correlationId"?, "causationId"?}` a line, stored
   * in one transaction as one contiguous range, or not at all (a 400 naming the line). A
   * stream is sent as it is read, never buffered whole.
   */
  async importNdjson(
    body: string | Uint8Array | ReadableStream<Uint8Array>,
  ): Promise<ImportResult> {
    const response = await this.fetchImpl(this.baseUrl + '/api/events/import', {
      method: 'POST',
      headers: { ...this.headers, 'content-type': 'application/x-ndjson' },
      body,
      duplex: 'half',
    } as RequestInit);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* keep the text */
    }
    if (!response.ok)
      throw new OrdinalHttpError(
        response.status,
        parsed,
        `POST /api/events/import failed (${response.status}): ${messageOf(parsed) ?? response.statusText}`,
      );
    return parsed as ImportResult;
  }

  /** One page of the log from `fromIndex`; continue from `nextIndex`. */
  async page(options: ReadOptions & { fromIndex?: number; limit?: number } = {}): Promise<LogPage> {
    const params = new URLSearchParams({
      fromIndex: String(options.fromIndex ?? 1),
      limit: String(options.limit ?? 100),
    });
    if (options.types && options.types.length > 0) params.set('types', options.types.join(','));
    if (options.correlationId !== undefined) params.set('correlationId', options.correlationId);
    if (options.tombstones === 'skip') params.set('tombstones', 'skip');
    if (options.shard) {
      params.set('shardCount', String(options.shard.count));
      params.set('shardIndex', String(options.shard.index));
    }
    return (await this.request<LogPage>('GET', `/api/events?${params}`)).body;
  }

  /** One message by index (its tombstone when hidden or erased), or null when none has it. */
  async get(index: number): Promise<OrdinalRecord | null> {
    try {
      return (await this.request<OrdinalRecord>('GET', `/api/events/${index}`)).body;
    } catch (error) {
      if (error instanceof OrdinalHttpError && error.status === 404) return null;
      throw error;
    }
  }

  /** The highest index a reader may see now. */
  async head(): Promise<number> {
    return (await this.request<{ head: number }>('GET', '/api/events/head')).body.head;
  }

  /** One stream connection's events (no reconnection; see `consume` for that). */
  stream(options: StreamOptions = {}): AsyncGenerator<StreamEvent> {
    return openEventStream(
      `${this.baseUrl}/api/events/stream`,
      this.headers,
      options,
      this.fetchImpl,
    );
  }

  /** Starts a pull consumer: bookmark, handler, reconnection with back-off. */
  consume(options: ConsumeOptions): PullConsumer {
    return new PullConsumer(this, options);
  }

  /**
   * Joins a consumer group as one member (docs/consumer-groups.md): fetches, runs `handler` on
   * each event, acknowledges on success and gives the event back (nack, retry) when it throws.
   */
  consumerGroup(options: ConsumerGroupOptions): ConsumerGroupMember {
    return new ConsumerGroupMember(this, options);
  }

  /**
   * One authenticated JSON request to any route (operations use it: projections, interfaces,
   * dead letters). Throws OrdinalHttpError for an error status; network errors as Node's HTTP
   * throws them (with a `code`, e.g. `ECONNREFUSED`), or the given fetch.
   * `T` is the body the route answers (not checked here).
   */
  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<{ status: number; body: T }> {
    const response = await this.transport(this.baseUrl + path, {
      method,
      headers:
        body === undefined
          ? { ...this.headers, ...extraHeaders }
          : { ...this.headers, ...extraHeaders, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = response.text;
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* keep the text */
    }
    if (!response.ok) {
      throw new OrdinalHttpError(
        response.status,
        parsed,
        `${method} ${path} failed (${response.status}): ${messageOf(parsed) ?? response.statusText}`,
      );
    }
    return { status: response.status, body: parsed as T };
  }
}

/**
 * A header value as its UTF-8 bytes, one character per byte: `fetch` and `node:http` send a
 * header string byte per character (and refuse characters above U+00FF), and the server reads text headers
 * as UTF-8, so `clé` or `日本` arrives as sent.
 */
function utf8Header(text: string): string {
  let bytes = '';
  for (const byte of new TextEncoder().encode(text)) bytes += String.fromCharCode(byte);
  return bytes;
}

/** The `message` of an error body, when it has one. */
function messageOf(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}

function traceHeaders(options: PublishOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.correlationId !== undefined)
    headers['x-correlation-id'] = utf8Header(options.correlationId);
  if (options.traceparent !== undefined) headers.traceparent = options.traceparent;
  return headers;
}
