import { request } from 'node:http';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, rawHttp, startServer, type TestServer } from '../support/test-server.js';

const ALLOWED = 'https://app.example';

/** A CORS preflight for `POST /api/events/messages` from `origin`. */
const preflight = (server: TestServer, origin: string) =>
  rawHttp(server.baseUrl, 'OPTIONS', '/api/events/messages', undefined, {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization,content-type',
  });

/** The status and headers of a stream's answer (the stream is closed at once). */
const streamHead = (server: TestServer, origin: string) =>
  new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
    const url = new URL('/api/events/stream?startIndex=1', server.baseUrl);
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: { ...DEV_AUTH, origin },
      },
      (res) => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers });
        req.destroy();
      },
    );
    req.on('error', reject);
    req.end();
  });

describe('CORS: an allow-list of origins (ORDINAL_CORS_ORIGINS), off by default', () => {
  let db: TestDatabase;
  let open: TestServer;
  let closed: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    open = await startServer(db.url, {
      ORDINAL_CORS_ORIGINS: `${ALLOWED}, http://localhost:5173`,
    });
    closed = await startServer(db.url);
  });
  afterAll(async () => {
    await open?.close();
    await closed?.close();
    await db?.drop();
  });

  it('answers a preflight from an allowed origin with 204 and the CORS headers', async () => {
    const res = await preflight(open, ALLOWED);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/i);
    expect(res.headers.get('access-control-allow-headers')).toMatch(/Content-Type/i);
    expect(res.headers.get('vary')).toMatch(/Origin/);
  });

  it('gives another origin no CORS header (the preflight is a 405, as with CORS off)', async () => {
    const res = await preflight(open, 'https://evil.example');
    expect(res.status).toBe(405);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('adds the allowed origin to an ordinary answer and to a stream, and exposes the headers a client reads', async () => {
    const res = await rawHttp(open.baseUrl, 'GET', '/api/events/head', undefined, {
      ...DEV_AUTH,
      origin: 'http://localhost:5173',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/X-Correlation-Id/i);
    const stream = await streamHead(open, ALLOWED);
    expect(stream.status).toBe(200);
    expect(stream.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('is off by default: a preflight is a 405 without CORS headers', async () => {
    const res = await preflight(closed, ALLOWED);
    expect(res.status).toBe(405);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const get = await rawHttp(closed.baseUrl, 'GET', '/api/events/head', undefined, {
      ...DEV_AUTH,
      origin: ALLOWED,
    });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });
});
