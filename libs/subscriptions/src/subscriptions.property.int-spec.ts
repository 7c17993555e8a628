import type { INestApplicationContext } from '@nestjs/common';
import fc from 'fast-check';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp, RawWriter } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { SubscriptionsService } from './subscriptions.service.js';

type Op = {
  writer: number;
  action: 'insert' | 'commit' | 'rollback';
  category: number;
  count: number;
};

describe('$all subscription property (fast-check, real concurrent transactions)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let subscriptions: SubscriptionsService;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startProjectionsApp(db.url, {
      log: { ordering: 'concurrent', gapTimeoutMs: 60_000 },
    });
    subscriptions = app.get(SubscriptionsService);
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('delivers exactly the committed messages, in index order, whatever the interleaving of appends, commits and rollbacks', async () => {
    const op = fc.record({
      writer: fc.integer({ min: 0, max: 2 }),
      action: fc.constantFrom('insert', 'insert', 'commit', 'rollback'),
      category: fc.integer({ min: 0, max: 1 }),
      count: fc.integer({ min: 1, max: 3 }),
    }) as fc.Arbitrary<Op>;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        // Given a new $all subscription starting at the head, and three writers
        const name = `prop-${run++}`;
        const delivered: number[] = [];
        subscriptions.subscribe({
          name,
          stream: '$all',
          startAt: 'end',
          handle: (m) => void delivered.push(m.id),
        });
        await waitFor(
          async () => (await subscriptions.report(name))[0].state === 'running',
          10_000,
          'the subscription to start',
        );
        const pool = await Promise.all(
          [0, 1, 2].map((i) => RawWriter.open(db.url, `prop-writer-${i}`)),
        );
        try {
          const open = [false, false, false];
          const pending: number[][] = [[], [], []];
          const committed: number[] = [];
          // When the writers interleave (each writer its own categories: one category's writers serialise on its lock)
          for (const { writer: i, action, category, count } of ops) {
            if (action === 'insert') {
              if (!open[i]) await pool[i].begin();
              open[i] = true;
              pending[i].push(...(await pool[i].insert(`w${i}c${category}`, count)));
            } else if (open[i]) {
              await (action === 'commit' ? pool[i].commit() : pool[i].rollback());
              if (action === 'commit') committed.push(...pending[i]);
              pending[i] = [];
              open[i] = false;
            }
          }
          for (let i = 0; i < 3; i++) {
            if (!open[i]) continue;
            await pool[i].commit();
            committed.push(...pending[i]);
          }
          committed.sort((x, y) => x - y);
          // And a marker commits above everything (so that "nothing more" is judged once the
          // subscription has passed every position the run drew, not at once)
          await pool[0].begin();
          const [marker] = await pool[0].insert('marker', 1, 'Marker');
          await pool[0].commit();
          // Then the subscription's output is exactly the committed positions, in order, then the marker
          await subscriptions.waitFor(name, marker, 10_000);
          expect(delivered).toEqual([...committed, marker]);
        } finally {
          await Promise.all(pool.map((w) => w.end()));
          await subscriptions.unsubscribe(name);
        }
      }),
      { numRuns: Number(process.env.PROP_RUNS ?? 20) },
    );
  }, 120_000);
});
