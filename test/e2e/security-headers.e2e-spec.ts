import { request } from 'node:http';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, rawHttp, startServer, type TestServer } from '../support/test-server.js';

/** The status and headers of a response whose body may never end (the SSE stream). */
function headersOf(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, headers },
      (res) => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers });
        req.destroy();
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('security headers and what a reader learns', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, { ORDINAL_TOKENS: 'reader:reader-secret:read' });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('sends X-Content-Type-Options: nosniff on every response: API, pages, scripts, errors and the stream', async () => {
    const base = server.baseUrl;
    // Given answers of every kind
    const answers = {
      'a JSON answer': await rawHttp(base, 'GET', '/api/events/head'),
      'the console': await rawHttp(base, 'GET', '/console', undefined, {}),
      "the console's script": await rawHttp(base, 'GET', '/console/console.js', undefined, {}),
      'the debug page': await rawHttp(base, 'GET', '/debug/events', undefined, {}),
      'the redirect at /': await rawHttp(base, 'GET', '/', undefined, {}),
      'the health check': await rawHttp(base, 'GET', '/health', undefined, {}),
      'the metrics': await rawHttp(base, 'GET', '/metrics', undefined, {}),
      'a 401': await rawHttp(base, 'GET', '/api/events/head', undefined, {}),
      'a 404': await rawHttp(base, 'GET', '/no/such/page'),
      'a 405': await rawHttp(base, 'DELETE', '/api/events/head'),
      'a 400 (bad JSON)': await rawHttp(base, 'PUT', '/api/events/message', '{oops'),
      'a 415': await rawHttp(base, 'PUT', '/api/events/message', 'x', {
        ...DEV_AUTH,
        'content-type': 'text/plain',
      }),
    };
    const stream = await headersOf(base, '/api/events/stream?startIndex=1', DEV_AUTH);
    // Then each says nosniff
    for (const [what, answer] of Object.entries(answers))
      expect([what, answer.headers.get('x-content-type-options')]).toEqual([what, 'nosniff']);
    expect(stream.status).toBe(200);
    expect(stream.headers['x-content-type-options']).toBe('nosniff');
  });

  it('serves the debug page with a strict Content-Security-Policy: no inline script', async () => {
    // When the debug page is fetched
    const page = await rawHttp(server.baseUrl, 'GET', '/debug/events', undefined, {});
    // Then its policy allows scripts from the server only, and the page has no inline script
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toMatch(/default-src 'none'/);
    expect(policy).toMatch(/script-src 'self'(;|$)/);
    expect(policy).toMatch(/frame-ancestors 'none'/);
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(page.body).not.toMatch(/<script>/);
    expect(page.body).toMatch(/<script src="\/debug\/events\.js"><\/script>/);
    const script = await rawHttp(server.baseUrl, 'GET', '/debug/events.js', undefined, {});
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
  });

  it('never echoes input into an HTML answer: errors are JSON whatever the path or body', async () => {
    // Given requests carrying markup in the path and in the body
    const answers = [
      await rawHttp(server.baseUrl, 'GET', '/%3Cscript%3Ealert(1)%3C/script%3E'),
      await rawHttp(server.baseUrl, 'GET', '/api/events/%3Cscript%3E'),
      await rawHttp(server.baseUrl, 'GET', '/api/streams/%3Cscript%3E'),
      await rawHttp(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: '<script>alert(1)</script>',
        content: {},
      }),
      await rawHttp(server.baseUrl, 'GET', '/debug/%3Cscript%3E', undefined, {}),
    ];
    // Then every answer that repeats any of it is JSON, never HTML
    for (const answer of answers) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });

  it('gives a reader the StartMarker without the host and pid; ORDINAL_START_MARKER_IDENTITY=true adds them', async () => {
    // Given the server's StartMarker
    const marker = (await rawHttp(server.baseUrl, 'GET', '/health')).body.startMarker as number;
    expect(marker).toBeGreaterThan(0);
    // When a token with the read scope reads it
    const read = await rawHttp(server.baseUrl, 'GET', `/api/events/${marker}`, undefined, {
      authorization: 'Bearer reader-secret',
    });
    // Then it says when the server started, not where or as which process
    expect(read.status).toBe(200);
    expect(read.body.messageType).toBe('StartMarker');
    expect(Object.keys(read.body.body as object)).toEqual(['startedAt']);
    // And a server started with the opt-in names its host and pid
    const named = await startServer(db.url, { ORDINAL_START_MARKER_IDENTITY: 'true' });
    try {
      const id = (await rawHttp(named.baseUrl, 'GET', '/health')).body.startMarker as number;
      const body = (await rawHttp(named.baseUrl, 'GET', `/api/events/${id}`)).body.body;
      expect(body).toMatchObject({ pid: process.pid, host: expect.any(String) });
    } finally {
      await named.close();
    }
  });
});
