import { connect, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { startServer, waitFor, type TestServer } from '../support/test-server.js';

setFlagsFromString('--expose-gc');
/** A full collection, so the figures below are what is held, not garbage not yet collected. */
const gc = runInNewContext('gc') as () => void;

/** One body chunk of each size for every connection (the client's own memory stays out of the figures). */
const chunks = new Map<number, Buffer>();
function chunkOf(size: number): Buffer {
  let chunk = chunks.get(size);
  if (chunk === undefined) {
    chunk = Buffer.alloc(size, 0x20);
    chunk[0] = 0x7b; // '{': the start of a JSON body
    chunks.set(size, chunk);
  }
  return chunk;
}

/** What a raw connection saw: the answer's status line and body, and whether the server closed it. */
interface RawAnswer {
  status: number;
  body: string;
  /** Body bytes the client had written when the answer's first byte arrived. */
  sentWhenAnswered: number;
  closed: Promise<void>;
}

/**
 * Sends a request's headers announcing `length` body bytes, then only `firstChunk` of them, and
 * waits for the answer (the rest of the body is never sent).
 */
function sendHeadersAndFirstChunk(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  length: number,
  firstChunk: number,
): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(url.port), url.hostname);
    let sent = 0;
    let text = '';
    let sentWhenAnswered = -1;
    // The server ends the connection (FIN) after its answer; the test gives it 2 s.
    const closed = new Promise<void>((done, fail) => {
      socket.once('end', () => done());
      socket.once('close', () => fail(new Error('The server did not close the connection')));
    });
    closed.catch(() => undefined);
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      // length 0: a chunked body (a streamed import), its first chunk `firstChunk` bytes
      const chunked = length === 0;
      const head = [
        `${chunked ? 'POST' : 'PUT'} ${path} HTTP/1.1`,
        `host: ${url.host}`,
        `content-type: ${chunked ? 'application/x-ndjson' : 'application/json'}`,
        chunked ? 'transfer-encoding: chunked' : `content-length: ${length}`,
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
        '',
        '',
      ].join('\r\n');
      socket.write(head);
      if (chunked) socket.write(`${firstChunk.toString(16)}\r\n`);
      socket.write(chunkOf(firstChunk));
      if (chunked) socket.write('\r\n');
      sent = firstChunk;
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`No answer within 5 s (sent ${sent} bytes)`));
    }, 5000);
    socket.on('data', (data: Buffer) => {
      if (sentWhenAnswered < 0) sentWhenAnswered = sent;
      text += data.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lengthHeader = /content-length: (\d+)/i.exec(text.slice(0, end));
      const bodyLength = lengthHeader ? Number(lengthHeader[1]) : 0;
      if (text.length < end + 4 + bodyLength) return;
      clearTimeout(timer);
      // The test is done with the connection once answered; `closed` says whether the server ended it.
      setTimeout(() => socket.destroy(), 2000).unref();
      resolve({
        status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)![1]),
        body: text.slice(end + 4, end + 4 + bodyLength),
        sentWhenAnswered,
        closed,
      });
    });
  });
}

describe('authentication before the body is read', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_TOKENS: 'reader:read-secret:read',
      // Longer than the test waits: an answer within it cannot be the body timeout's 408.
      ORDINAL_BODY_TIMEOUT_MS: '60000',
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('answers 401 to a large body without a token while only its first chunk has been sent, and closes', async () => {
    // Given a publish announcing ~1 MB of body, of which the client sends only 1 KB
    // When the server sees the headers
    const answer = await sendHeadersAndFirstChunk(
      server.baseUrl,
      '/api/events/message',
      {},
      1_000_000,
      1024,
    );
    // Then it answers 401 JSON at once (the rest of the body never came) and closes the connection
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ statusCode: 401 });
    expect(answer.sentWhenAnswered).toBe(1024);
    await answer.closed;
  });

  it('answers 403 to a token without the route scope before the body, and closes', async () => {
    // Given a read-only token sending a publish's headers and the first chunk of a large body
    const answer = await sendHeadersAndFirstChunk(
      server.baseUrl,
      '/api/events/message',
      { authorization: 'Bearer read-secret' },
      1_000_000,
      1024,
    );
    // Then the answer is 403 before the body is sent, and the connection closes
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ statusCode: 403 });
    expect(answer.sentWhenAnswered).toBe(1024);
    await answer.closed;
  });

  it('answers 403 to a streamed import without the admin scope while its first chunk is all that was sent', async () => {
    // Given a chunked NDJSON import from a read-only token that sends one chunk and pauses
    const answer = await sendHeadersAndFirstChunk(
      server.baseUrl,
      '/api/events/import',
      { authorization: 'Bearer read-secret' },
      0,
      4096,
    );
    // Then it is refused before any more of the body, and the connection closes
    expect(answer.status).toBe(403);
    expect(answer.sentWhenAnswered).toBe(4096);
    await answer.closed;
  });

  it('holds no body memory for many unauthenticated connections sending large bodies', async () => {
    // Given the server's memory before (this process: the server runs in it)
    gc();
    const before = process.memoryUsage();
    // When 200 connections without a token each send 256 KB of an announced 1 MB body at once
    const n = 200;
    const answers = await Promise.all(
      Array.from({ length: n }, () =>
        sendHeadersAndFirstChunk(
          server.baseUrl,
          '/api/events/message',
          { authorization: 'Bearer wrong' },
          1_000_000,
          256 * 1024,
        ),
      ),
    );
    // Then every one is refused and closed, and the server kept none of their bodies
    // (200 x 256 KB = 51 MB would have been buffered for the JSON parser)
    expect(answers.every((a) => a.status === 401)).toBe(true);
    await Promise.all(answers.map((a) => a.closed));
    // (and the server has let go of their sockets)
    const httpServer = server.app.getHttpServer();
    const open = () =>
      new Promise<number>((resolve, reject) =>
        httpServer.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    await waitFor(async () => (await open()) <= 2, 10_000, 'the refused connections to close');
    gc();
    const after = process.memoryUsage();
    const grew = after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
    // (200 bodies of 1 MB read would be 200 MB; 40 MB leaves room for what the in-process
    // server allocates meanwhile — its dashboard sampler, pools — without hiding a read body)
    expect(grew).toBeLessThan(40e6);
  });
});
