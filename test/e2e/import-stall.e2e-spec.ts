import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import {
  DEV_AUTH,
  rawHttp,
  startServer,
  waitFor,
  type TestServer,
} from '../support/test-server.js';

const NDJSON = { ...DEV_AUTH, 'content-type': 'application/x-ndjson' };

/** An import that sends one line and then nothing (its body never ends until `abort`). */
function stalledImport(baseUrl: string): {
  answer: Promise<{ status: number; body: unknown; ms: number }>;
  abort(): void;
} {
  const controller = new AbortController();
  const started = performance.now();
  const body = new ReadableStream<Uint8Array>({
    start(stream) {
      stream.enqueue(
        Buffer.from(JSON.stringify({ messageType: 'Imported', content: { i: 1 } }) + '\n'),
      );
      // No close: the client pauses after its first line.
    },
  });
  const answer = fetch(`${baseUrl}/api/events/import`, {
    method: 'POST',
    headers: NDJSON,
    body,
    duplex: 'half',
    signal: controller.signal,
  } as RequestInit).then(async (res) => ({
    status: res.status,
    body: (await res.json()) as unknown,
    ms: performance.now() - started,
  }));
  answer.catch(() => undefined);
  return { answer, abort: () => controller.abort() };
}

/** Waits until the import's own connection (application_name ordinal-import) holds its transaction. */
async function importRunning(db: TestDatabase): Promise<void> {
  await waitFor(
    async () =>
      (
        await db.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ordinal-import' AND xact_start IS NOT NULL`,
        )
      ).length > 0,
    10_000,
    'the import to hold its transaction',
  );
}

describe('a stalled import', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, { ORDINAL_IMPORT_IDLE_TIMEOUT_MS: '1000' });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('is aborted after the idle timeout with nothing stored, and the writers waiting behind it resume', async () => {
    // Given an import that sent one line and pauses, holding the log
    const importing = stalledImport(server.baseUrl);
    try {
      await importRunning(db);
      // When a publish waits behind it
      const started = performance.now();
      const publish = rawHttp(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'Published',
        content: { n: 1 },
      });
      // Then the import is answered 408 once no chunk came for 1 s (not after the client gives up)
      const imported = await Promise.race([
        importing.answer,
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error('The stalled import was not aborted within 8 s')),
            8000,
          ),
        ),
      ]);
      expect(imported.status).toBe(408);
      expect(imported.body).toMatchObject({ statusCode: 408, code: 'import_idle_timeout' });
      expect(imported.ms).toBeLessThan(5000);
      // And the publish goes through right after
      const published = await publish;
      expect(published.status).toBe(201);
      expect(performance.now() - started).toBeLessThan(6000);
      // And nothing of the import was stored
      const rows = await db.query(`SELECT 1 FROM messages WHERE message_type = 'Imported'`);
      expect(rows).toHaveLength(0);
    } finally {
      importing.abort();
    }
  });
});

describe('a keyed publish waiting behind an import', () => {
  let db: TestDatabase;
  let server: TestServer;
  const queryTimeoutMs = 2000;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db.url, {
      ORDINAL_QUERY_TIMEOUT_MS: String(queryTimeoutMs),
      ORDINAL_IMPORT_IDLE_TIMEOUT_MS: '60000',
    });
  });
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('answers 503 after ORDINAL_QUERY_TIMEOUT_MS from when it was sent, also when queued behind another publish', async () => {
    // Given an import holding the log, and a publish already waiting for it
    const importing = stalledImport(server.baseUrl);
    let keyed: Awaited<ReturnType<typeof rawHttp>> | undefined;
    try {
      await importRunning(db);
      const first = rawHttp(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'Published',
        content: { n: 1 },
      });
      await waitFor(
        async () =>
          (
            await db.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'ordinal' AND wait_event_type = 'Lock'`,
            )
          ).length > 0,
        10_000,
        'the first publish to wait for the lock',
      );
      // When a publish with an idempotency key is sent behind them
      const started = performance.now();
      keyed = await rawHttp(server.baseUrl, 'PUT', '/api/events/message', {
        messageType: 'Published',
        content: { n: 2 },
        idempotencyKey: 'behind-the-import',
      });
      const waited = performance.now() - started;
      // Then each is answered 503 once the query timeout has passed since it was sent, not later
      expect((await first).status).toBe(503);
      expect(keyed.status).toBe(503);
      expect(waited).toBeLessThan(queryTimeoutMs * 1.5);
    } finally {
      importing.abort();
    }
    // And what the keyed 503 said holds once the import is gone: without outcomeUnknown its
    // message was never sent, or never committed (a resend with the key is safe either way)
    await waitFor(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        ).length === 0,
      10_000,
      'the writes behind the import to end',
    );
    const stored = await db.query(
      `SELECT 1 FROM messages WHERE idempotency_key = 'behind-the-import'`,
    );
    if ((keyed?.body as { outcomeUnknown?: boolean } | undefined)?.outcomeUnknown !== true)
      expect(stored).toHaveLength(0);
  });
});
