import http from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LiveRouter } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import {
  DEV_AUTH,
  rawHttp,
  startServer,
  waitFor,
  type TestServer,
} from '../support/test-server.js';

setFlagsFromString('--expose-gc');
/** A full collection, so the figures are what is held, not garbage not yet collected. */
const gc = runInNewContext('gc') as () => void;

const MESSAGE_BYTES = 100_000;
const STREAM_BUFFER_BYTES = 1024 * 1024;

/**
 * An SSE reader that stops reading after `connected` until `resume()`, checks that ids come in
 * order without a gap, and, when the server closes the stream before `stream-ended`, reopens it
 * from the last id it got whole (Last-Event-ID), as an EventSource does.
 */
class StalledReader {
  lastId: number;
  reconnects = 0;
  private paused = true;
  private ended = false;
  private response: http.IncomingMessage | null = null;
  private text = '';
  private onDone!: () => void;
  private onError!: (error: Error) => void;
  private onConnected!: () => void;
  readonly connected = new Promise<void>((resolve) => (this.onConnected = resolve));
  readonly done = new Promise<void>((resolve, reject) => {
    this.onDone = resolve;
    this.onError = reject;
  });

  constructor(
    private readonly baseUrl: string,
    private readonly startIndex: number,
    private readonly endIndex: number,
  ) {
    this.lastId = startIndex - 1;
    this.done.catch(() => undefined);
    this.open(false);
  }

  private open(resuming: boolean): void {
    this.text = '';
    const headers: Record<string, string> = { ...DEV_AUTH };
    if (resuming) headers['last-event-id'] = String(this.lastId);
    const request = http.get(
      `${this.baseUrl}/api/events/stream?startIndex=${this.startIndex}&endIndex=${this.endIndex}`,
      { headers, agent: false },
      (response) => {
        this.response = response;
        if (response.statusCode === 204 && this.lastId === this.endIndex) return this.finish();
        if (response.statusCode !== 200)
          return this.onError(new Error(`The stream answered ${response.statusCode}`));
        response.setEncoding('utf8');
        if (this.paused && resuming) response.pause();
        response.on('data', (chunk: string) => this.read(chunk));
        response.on('end', () => this.closed());
        response.on('error', () => this.closed());
      },
    );
    request.on('error', () => this.closed());
  }

  private read(chunk: string): void {
    this.text += chunk;
    for (let end = this.text.indexOf('\n\n'); end >= 0; end = this.text.indexOf('\n\n')) {
      const event = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      if (event.startsWith('event: connected')) {
        this.onConnected();
        if (this.paused) this.response?.pause();
      } else if (event.startsWith('event: message\n')) {
        const id = Number(/^id: (\d+)$/m.exec(event)?.[1]);
        if (id !== this.lastId + 1)
          return this.onError(new Error(`The stream went from ${this.lastId} to ${id}`));
        this.lastId = id;
      } else if (event.startsWith('event: stream-ended')) {
        this.ended = true;
      }
    }
  }

  private closed(): void {
    if (this.response === null) return;
    this.response = null;
    if (this.ended) return this.finish();
    this.reconnects++;
    setTimeout(() => this.open(true), 20);
  }

  private finish(): void {
    this.ended = true;
    this.onDone();
  }

  resume(): void {
    this.paused = false;
    this.response?.resume();
  }
}

// 4 MiB: the stalled streams fit; 1 MiB (the least allowed): some may be dropped and reopened.
describe.each([[4 * 1024 * 1024], [1024 * 1024]])(
  'stalled SSE readers of large messages, all streams within %i bytes',
  (STREAMS_BUFFER_BYTES) => {
    let db: TestDatabase;
    let server: TestServer;

    beforeAll(async () => {
      db = await createTestDatabase();
      server = await startServer(db.url, {
        ORDINAL_STREAM_BUFFER_BYTES: String(STREAM_BUFFER_BYTES),
        ORDINAL_STREAMS_BUFFER_BYTES: String(STREAMS_BUFFER_BYTES),
      });
    });
    afterAll(async () => {
      await server?.close();
      await db?.drop();
    });

    it('keep the server within its byte bounds, and each gets every message from its Last-Event-ID once it reads', async () => {
      // Given 300 messages of 100 KB in the log
      const count = 300;
      const padding = 'x'.repeat(MESSAGE_BYTES);
      const first =
        ((await rawHttp(server.baseUrl, 'GET', '/api/events/head')).body as { head: number }).head +
        1;
      for (let i = 0; i < count; i += 8) {
        const messages = Array.from({ length: Math.min(8, count - i) }, (_, j) => ({
          messageType: 'Large',
          content: { i: i + j, padding },
        }));
        const answer = await rawHttp(server.baseUrl, 'POST', '/api/events/messages', { messages });
        expect(answer.status).toBe(201);
      }
      const last = first + count - 1;
      gc();
      const before = process.memoryUsage().heapUsed;

      // When 10 readers open streams at different places in it and stop reading after `connected`
      const readers = Array.from(
        { length: 10 },
        (_, i) => new StalledReader(server.baseUrl, first + i * 30, last),
      );
      await Promise.all(readers.map((r) => r.connected));
      // (each stream writes until its socket is full, then waits with what it holds: no page read runs any more)
      const router = server.app.get(LiveRouter);
      let quiet = 0;
      await waitFor(
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 250));
          const reading = await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE 'SELECT index, message_type, user_id, json%'`,
          );
          quiet = reading.length === 0 ? quiet + 1 : 0;
          return quiet >= 4;
        },
        60_000,
        'the streams to stall',
      );
      gc();
      const held = process.memoryUsage().heapUsed - before;

      // Then the server holds no more than its bound for all streams, plus each stream's socket
      // buffer and one message in hand (64 KB + 2 x 100 KB a stream), plus 10 MB of slack
      // (each stalled stream held its own page of up to 300 rows, 30 MB, before the bound)
      const bound = STREAMS_BUFFER_BYTES + readers.length * (64 * 1024 + 2 * MESSAGE_BYTES) + 10e6;
      expect(held).toBeLessThan(bound);
      expect(router.stats().pagesHeldBytes).toBeLessThanOrEqual(STREAMS_BUFFER_BYTES);
      // (whether the bound had to drop a stream depends on how much the kernel's socket buffers
      // took before the streams stalled: on a machine with large ones no page is held at the
      // stall; the choice of the holder to drop is page-budget.spec.ts's)
      const dropped = router.stats().drops;

      // And when they read again, each gets every message from where it started, in order
      // (a stream the server dropped is reopened from its Last-Event-ID)
      for (const reader of readers) reader.resume();
      await Promise.all(readers.map((r) => r.done));
      for (const reader of readers) expect(reader.lastId).toBe(last);
      // (a dropped stream was reopened by its reader from its Last-Event-ID)
      if (dropped > 0) expect(readers.some((r) => r.reconnects > 0)).toBe(true);
    });
  },
);
