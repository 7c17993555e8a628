import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { DEV_AUTH, http, waitFor } from '../support/test-server.js';
import { SseConnection } from '../support/sse-connection.js';
import { startOrdinalProcess, type OrdinalProcess } from '../support/ordinal-process.js';

/**
 * The rule of docs/lifecycle.md as a property: whatever the interleaving of stream appends,
 * soft deletes, metadata changes (truncateBefore, maxCount), scavenges and SSE readers joining,
 * in both ordering modes, every reader gets every index from its start exactly once, as a
 * message or a tombstone, in order; and a message a delete had hidden before the reader joined
 * never reaches it with its body. One server process per mode; runs use disjoint stream ids and
 * index ranges of one database.
 */

type Op =
  | { kind: 'append'; s: number; n: number }
  | { kind: 'delete'; s: number }
  | { kind: 'metadata'; s: number; truncateBefore: number | null; maxCount: number | null }
  | { kind: 'scavenge' }
  | { kind: 'reader' };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      s: fc.nat(2),
      n: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), s: fc.nat(2) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('metadata' as const),
      s: fc.nat(2),
      truncateBefore: fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }),
      maxCount: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'scavenge' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'reader' as const }) },
);

describe.each(['gapless', 'concurrent'] as const)(
  'Streams that end, the property (%s mode)',
  (mode) => {
    let db: TestDatabase;
    let server: OrdinalProcess;
    let run = 0;

    beforeAll(async () => {
      db = await createTestDatabase();
      server = await startOrdinalProcess(db.url, {
        ORDINAL_ENV: 'development',
        ORDINAL_ORDERING: mode,
        ORDINAL_GAP_TIMEOUT_MS: '500',
      });
    });
    afterAll(async () => {
      await server?.stop();
      await db?.drop();
    });

    const call = (method: string, path: string, body?: unknown) =>
      http(server.baseUrl, method, path, body, DEV_AUTH);

    it('every reader sees every index exactly once, as a message or a tombstone, and never a body hidden before it joined', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 14 }), async (ops) => {
          const prefix = `p${++run}x${mode[0]}`;
          const streamId = (s: number) => `${prefix}-${s}`;
          const readers: { from: number; joined: number; sse: SseConnection }[] = [];
          /** When each stream's delete answered, and the last version it hid. */
          const deletes: { streamId: string; at: number; lastVersion: number }[] = [];
          const head0 = (await call('GET', '/api/events/head')).body.head as number;
          // When every operation runs at once (their order is the interleaving)
          await Promise.all(
            ops.map(async (o) => {
              if (o.kind === 'append') {
                const res = await call('POST', `/api/streams/${streamId(o.s)}/events`, {
                  expectedVersion: 'any',
                  events: Array.from({ length: o.n }, (_, i) => ({
                    eventType: 'Put',
                    data: { i },
                  })),
                });
                expect(res.status).toBe(201);
              } else if (o.kind === 'delete') {
                const res = await call('DELETE', `/api/streams/${streamId(o.s)}`);
                expect([204, 404]).toContain(res.status);
                if (res.status === 204) {
                  const [row] = await db.query<{ deleted_through: string }>(
                    'SELECT deleted_through::text FROM stream_states WHERE stream_id = $1',
                    [streamId(o.s)],
                  );
                  deletes.push({
                    streamId: streamId(o.s),
                    at: Date.now(),
                    lastVersion: Number(row.deleted_through),
                  });
                }
              } else if (o.kind === 'metadata') {
                const body: Record<string, number> = {};
                if (o.truncateBefore !== null) body.truncateBefore = o.truncateBefore;
                if (o.maxCount !== null) body.maxCount = o.maxCount;
                expect(
                  (await call('PUT', `/api/streams/${streamId(o.s)}/metadata`, body)).status,
                ).toBe(200);
              } else if (o.kind === 'scavenge') {
                const res = await call(
                  'POST',
                  '/api/admin/scavenge?wait=true&batchSize=7&throttlePercent=100',
                );
                expect([200, 409]).toContain(res.status);
              } else {
                const joined = Date.now();
                const from = head0 + 1;
                const sse = await SseConnection.open(
                  server.baseUrl,
                  `/api/events/stream?startIndex=${from}`,
                  DEV_AUTH,
                );
                readers.push({ from, joined, sse });
              }
            }),
          );
          // And a last reader joins after everything
          const end = (await call('GET', '/api/events/head')).body.head as number;
          readers.push({
            from: head0 + 1,
            joined: Date.now(),
            sse: await SseConnection.open(
              server.baseUrl,
              `/api/events/stream?startIndex=${head0 + 1}`,
              DEV_AUTH,
            ),
          });
          const stored = (
            await db.query<{ index: string }>(
              'SELECT index::text FROM messages m WHERE m.index > $1 AND m.index <= $2 ORDER BY m.index',
              [head0, end],
            )
          ).map((r) => Number(r.index));
          try {
            for (const reader of readers) {
              const records = () =>
                reader.sse.events.filter((e) => e.event === 'message' || e.event === 'tombstone');
              await waitFor(
                () => records().some((e) => Number(e.id) >= end) || end <= head0,
                20_000,
                `a reader to reach ${end}`,
              );
              const got = records().filter((e) => Number(e.id) <= end);
              // Then it got every stored index from its start exactly once, in order
              expect(got.map((e) => Number(e.id))).toEqual(stored.filter((i) => i >= reader.from));
              for (const e of got) {
                if (e.event === 'tombstone') continue;
                const message = e.data.message as {
                  streamId?: string;
                  streamVersion?: number;
                  body: unknown;
                };
                // And a message never carries an erased body
                expect(message.body).not.toBeNull();
                // And nothing a delete had hidden before the reader joined comes with its body
                for (const d of deletes)
                  if (d.at < reader.joined && message.streamId === d.streamId)
                    expect(message.streamVersion! > d.lastVersion).toBe(true);
              }
            }
          } finally {
            for (const reader of readers) reader.sse.close();
          }
        }),
        { numRuns: 6 },
      );
    });
  },
);
