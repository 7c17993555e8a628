import { Agent, request } from 'node:http';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp, listen } from '../../apps/eventstore/src/create-app.js';
import { loadConfig } from '../../apps/eventstore/src/config/ordinal-config.js';
import { assertConforms } from './conformance.js';

export const DEV_AUTH = { authorization: 'Bearer dev-ordinal-token' };

/** An Ordinal server in this process, listening on a free port. */
export interface TestServer {
  app: NestFastifyApplication;
  baseUrl: string;
  close(): Promise<void>;
}

/** Starts the real server (real PostgreSQL) with the given environment on top of the suite's database. */
export async function startServer(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<TestServer> {
  // AMQP stays off unless a suite passes AMQP_URL (development would default it to the local broker).
  const config = loadConfig({
    ORDINAL_ENV: 'development',
    DATABASE_URL: databaseUrl,
    PORT: '0',
    AMQP_URL: '',
    ...env,
  });
  const app = await createApp(config, {
    logger: process.env.ORDINAL_TEST_LOGS ? undefined : false,
    openApiUi: false,
  });
  // A start that fails once something runs (listen runs the bootstrap hooks) closes it again:
  // nothing of it outlives the test (a LISTEN connection reconnecting after its database is gone).
  await listen(app, 0, '127.0.0.1').catch(async (error: unknown) => {
    await app.close().catch(() => undefined);
    throw error;
  });
  const address = app.getHttpServer().address() as { port: number };
  return {
    app,
    baseUrl: `http://127.0.0.1:${address.port}`,
    close: () => app.close(),
  };
}

/** Keep-alive connections for the tests' requests (much lighter than fetch under load). */
const agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 });

/** What a test request answers. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire data, checked against the OpenAPI document and probed with expect (see eslint.config.js)
export type HttpResponse = { status: number; body: any; headers: Headers };

/**
 * JSON request helper: returns the status, headers and parsed body, after checking the answer
 * against the server's OpenAPI document (the conformance check every suite runs: a status or
 * body the document does not describe fails the test). `fresh` opens a new connection (a test
 * that restarts the server must not reuse a socket of the old process).
 */
export async function http(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = DEV_AUTH,
  options: { fresh?: boolean } = {},
): Promise<HttpResponse> {
  const res = await rawHttp(baseUrl, method, path, body, headers, options);
  await assertConforms(baseUrl, method, path, res);
  return res;
}

/** `http` without the conformance check. */
export function rawHttp(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = DEV_AUTH,
  { fresh = false }: { fresh?: boolean } = {},
): Promise<HttpResponse> {
  const payload =
    body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent: fresh ? false : agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers:
          payload === undefined
            ? headers
            : {
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(payload),
                ...headers,
              },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            /* not JSON: keep the text */
          }
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined)
              responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: responseHeaders });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Polls until `check` returns a value, or fails after the deadline. */
export async function waitFor<T>(
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
