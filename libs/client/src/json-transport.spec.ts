import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeTransport } from './json-transport.js';

describe('nodeTransport', () => {
  let server: http.Server;
  let url: string;
  const seen: Array<{ method?: string; header: Buffer; body: string }> = [];

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = request.rawHeaders[request.rawHeaders.indexOf('x-text') + 1] ?? '';
        seen.push({
          method: request.method,
          header: Buffer.from(raw, 'latin1'),
          body: Buffer.concat(chunks).toString('utf8'),
        });
        response.writeHead(request.url === '/missing' ? 404 : 200, {
          'content-type': 'application/json',
        });
        response.end(JSON.stringify({ path: request.url, text: 'clé-日本' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the body as UTF-8 and each header character as one byte, and reads the whole answer', async () => {
    // 'é' as its two UTF-8 bytes, one character each (how the client passes header text).
    const answer = await nodeTransport(`${url}/ok`, {
      method: 'POST',
      headers: { 'x-text': 'cl\u00c3\u00a9', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'clé-日本' }),
    });
    expect(answer).toMatchObject({ ok: true, status: 200 });
    expect(JSON.parse(answer.text)).toEqual({ path: '/ok', text: 'clé-日本' });
    const request = seen.at(-1)!;
    expect(request.method).toBe('POST');
    expect(request.header.toString('utf8')).toBe('clé');
    expect(JSON.parse(request.body)).toEqual({ name: 'clé-日本' });
  });

  it('answers an error status as it came, and a refused connection as Node’s error with its code', async () => {
    const missing = await nodeTransport(`${url}/missing`, { method: 'GET', headers: {} });
    expect(missing).toMatchObject({ ok: false, status: 404, statusText: 'Not Found' });
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(
      nodeTransport(`http://127.0.0.1:${port}/`, { method: 'GET', headers: {} }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
