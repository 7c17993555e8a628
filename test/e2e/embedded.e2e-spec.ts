import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OrdinalClient } from '@ordinal/client';
import { startEmbeddedPostgres } from '@ordinal/nestjs';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { createApp, listen } from '../../apps/eventstore/src/create-app.js';
import { loadConfig } from '../../apps/eventstore/src/config/ordinal-config.js';
import { EMBEDDED_POOL_SIZE } from '../../apps/eventstore/src/database/embedded-default.js';
import { listeningPort, spawnServer, type ServerProcess } from '../support/server-process.js';
import { http } from '../support/test-server.js';

describe('the server on the embedded database (PGlite, ORDINAL_EMBEDDED=1)', () => {
  let dir: string;
  let server: ServerProcess | null = null;
  /** The running server's address (it binds port 0 and says which port it got). */
  let baseUrl = '';
  const start = async () => {
    server = spawnServer({ ORDINAL_EMBEDDED: '1', ORDINAL_EMBEDDED_DIR: dir, PORT: '0' });
    baseUrl = `http://127.0.0.1:${await listeningPort(server, 60_000)}`;
    await server.waitForOutput(/Development token/, 60_000);
    return server;
  };

  beforeAll(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'ordinal-embedded-')), 'pglite');
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dirname(dir), { recursive: true, force: true });
  });

  it('says so in one line, stores, batches, streams history and live, saves and loads an aggregate, and keeps the data across a restart', async () => {
    // Given the server started on the embedded database
    const first = await start();
    expect(first.output()).toContain(
      `Embedded PostgreSQL (PGlite) with its data in ${dir}/ (ORDINAL_EMBEDDED=1); for a real server set DATABASE_URL=`,
    );
    // When a message and a batch are published
    const one = await http(baseUrl, 'PUT', '/api/events/message', {
      messageType: 'Embedded',
      userId: 'u-1',
      content: { n: 1 },
    });
    expect(one.status).toBe(201);
    expect(one.body.id).toBe(2);
    const batch = await http(baseUrl, 'POST', '/api/events/messages', {
      messages: [1, 2, 3].map((n) => ({ messageType: 'EmbeddedBatch', content: { batch: n } })),
    });
    expect(batch.status).toBe(201);
    expect(batch.body.messages.map((m: { id: number }) => m.id)).toEqual([3, 4, 5]);
    // Then an SSE stream sends the history, then a message published while it is open
    const client = new OrdinalClient({ baseUrl: baseUrl, token: 'dev-ordinal-token' });
    const abort = new AbortController();
    const seen: number[] = [];
    const stream = (async () => {
      for await (const event of client.stream({
        startIndex: 1,
        endIndex: 6,
        signal: abort.signal,
      })) {
        if (event.event === 'message') {
          seen.push(event.message.id);
          if (event.message.id === 5)
            await http(baseUrl, 'PUT', '/api/events/message', {
              messageType: 'EmbeddedLive',
              content: { live: true },
            });
        }
        if (event.event === 'stream-ended') return;
      }
    })();
    await stream;
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    // And an aggregate stream saves with its expected version, loads, and conflicts
    expect(
      (
        await http(baseUrl, 'POST', '/api/streams/cart-1/events', {
          expectedVersion: 0,
          events: [
            { eventType: 'ItemAdded', data: { sku: 'a' } },
            { eventType: 'ItemAdded', data: { sku: 'b' } },
          ],
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await http(baseUrl, 'POST', '/api/streams/cart-1/events', {
          expectedVersion: 0,
          events: [{ eventType: 'ItemAdded', data: { sku: 'c' } }],
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await http(baseUrl, 'PUT', '/api/streams/cart-1/snapshot', {
          version: 2,
          state: { items: 2 },
        })
      ).status,
    ).toBeLessThan(300);
    const loaded = await http(baseUrl, 'GET', '/api/streams/cart-1');
    expect(loaded.body).toMatchObject({
      streamId: 'cart-1',
      version: 2,
      snapshot: { version: 2, state: { items: 2 } },
    });
    // When the server restarts on the same data folder
    expect(await first.stop()).toBe(0);
    const second = await start();
    // Then everything is still there, after a new StartMarker
    const head = (await http(baseUrl, 'GET', '/api/events/head')).body.head;
    expect(head).toBe(9);
    expect((await http(baseUrl, 'GET', '/api/events/2')).body).toMatchObject({
      messageType: 'Embedded',
      body: { n: 1 },
    });
    expect((await http(baseUrl, 'GET', '/api/streams/cart-1/version')).body.version).toBe(2);
    expect((await http(baseUrl, 'GET', '/health')).body).toMatchObject({
      status: 'ok',
      database: 'up',
    });
    abort.abort();
    await second.stop();
  });

  it('refuses concurrent ordering on the embedded database, and refuses the embedded database in production', async () => {
    const concurrent = spawnServer({
      ORDINAL_EMBEDDED: '1',
      ORDINAL_EMBEDDED_DIR: `${dir}-concurrent`,
      ORDINAL_ORDERING: 'concurrent',
      PORT: '0',
    });
    expect(await concurrent.exited).toBe(1);
    expect(concurrent.output()).toContain(
      "Ordinal cannot start: ORDINAL_ORDERING=concurrent needs a PostgreSQL server: its low watermark reads other sessions' locks (pg_locks)",
    );
    const production = spawnServer({
      ORDINAL_ENV: 'production',
      ORDINAL_EMBEDDED: '1',
      DATABASE_URL: 'postgres://x@127.0.0.1:1/x',
      ORDINAL_TOKENS: `ops:${'a'.repeat(43)}:admin`,
      PORT: '0',
    });
    expect(await production.exited).toBe(1);
    expect(production.output()).toContain(
      'Ordinal cannot start: ORDINAL_EMBEDDED=1 is for development only',
    );
  });
});

describe('a projection in the server on the embedded database', () => {
  it('catches up, reports its lag through the API, and rebuilds', async () => {
    // Given the server's application on an in-memory embedded database, with the pool main.ts gives it
    const embedded = await startEmbeddedPostgres();
    const config = {
      ...loadConfig({
        ORDINAL_ENV: 'development',
        DATABASE_URL: embedded.url,
        AMQP_URL: '',
        ORDINAL_DUPLICATE_WINDOW: '0',
      }),
      dbPoolSize: EMBEDDED_POOL_SIZE,
    };
    const app = await createApp(config, { logger: false, openApiUi: false });
    const applied: number[] = [];
    try {
      app.get(SubscriptionsService).subscribe({
        name: 'embedded-audit',
        stream: '$all',
        handle: (m) => void applied.push(m.id),
      });
      await listen(app, 0, '127.0.0.1');
      const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
      // When messages are published
      for (let n = 0; n < 5; n++)
        expect(
          (
            await http(base, 'PUT', '/api/events/message', {
              messageType: 'Audited',
              content: { n },
            })
          ).status,
        ).toBe(201);
      const head = (await http(base, 'GET', '/api/events/head')).body.head as number;
      // Then the subscription applies every one, and says so with lag 0
      const status = await http(
        base,
        'GET',
        `/api/projections/embedded-audit?atLeast=${head}&timeoutMs=10000`,
      );
      expect(status.body).toMatchObject({
        reached: true,
        state: 'running',
        position: head,
        lag: 0,
      });
      expect(applied).toEqual(Array.from({ length: head }, (_, i) => i + 1));
      // And a rebuild replays the log into it again
      expect((await http(base, 'POST', '/api/projections/embedded-audit/rebuild')).status).toBe(
        202,
      );
      expect(
        (await http(base, 'GET', `/api/projections/embedded-audit?atLeast=${head}&timeoutMs=10000`))
          .body.reached,
      ).toBe(true);
      expect(applied.filter((i) => i === head)).toHaveLength(2);
    } finally {
      await app.close();
      await embedded.stop();
    }
  });
});

function dirname(path: string): string {
  return join(path, '..');
}
