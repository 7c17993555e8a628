import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import fc from 'fast-check';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startLogContext } from '@ordinal/test-support/log-context';
import { SEQUENCE } from '../log.constants.js';
import { LogWriter } from '../writer/log-writer.service.js';
import { LiveRouter } from '../router/live-router.service.js';
import { LogWatermark } from '../watermark/log-watermark.service.js';
import type { FeedMessage, LogFeed } from '../router/log-feed.js';

/**
 * The property: whatever external writers do besides Ordinal's appends — draw a position with
 * `nextval` and insert there later (in the same transaction, held past the gap timeout or
 * not, or in another one after the drawing one ended), roll back and have another session
 * insert at the rolled-back index — and however readers join and the process restarts, every
 * committed row reaches every reader once: in index order, or marked late; a durable consumer
 * (bookmark + watchAbandonedBelow across the restart) misses nothing; and the watermark
 * counts every late row. The late watch is short here, so many hand-written rows come after
 * it: each of those is refused with the `messages_index_passed` error and stored nowhere —
 * a row is either refused or delivered, never silently behind every reader.
 */

type Actor =
  | { kind: 'append'; at: number; n: number; stream: boolean }
  /** `nextval` in its own transaction, the row inserted at that index `delayMs` later. */
  | { kind: 'drawThenInsert'; at: number; delayMs: number }
  /** BEGIN; nextval; held `holdMs`; then INSERT there and COMMIT, or ROLLBACK. */
  | { kind: 'longTx'; at: number; holdMs: number; commit: boolean }
  /** An INSERT drawing inside it, rolled back; another session inserts at that index `delayMs` later. */
  | { kind: 'rollbackThenInsert'; at: number; delayMs: number }
  /** `delayMs` later, an INSERT with an explicit index: a hole the watermark passed, if any. */
  | { kind: 'explicitIndex'; at: number; delayMs: number; pick: number }
  /** A live feed joins at `offset` from the highest index and stays until the restart or the end. */
  | { kind: 'reader'; at: number; offset: number };

interface Scenario {
  before: Actor[];
  /** Actors after a restart (a new process on the same log), or none. */
  after: Actor[] | null;
}

const GAP_TIMEOUT_MS = 300;
/** Shorter than the longest delays: some hand-written rows come inside the watch, some after. */
const LATE_WATCH_MS = 400;
const WINDOW_MS = 1000;
const RUNS = 12;
/** After every writer ended: how long readers may take to have everything (late ones included). */
const SETTLE_MS = 8000;

const at = fc.integer({ min: 0, max: WINDOW_MS });
const hold = fc.integer({ min: 0, max: 3 * GAP_TIMEOUT_MS });
const actorArb: fc.Arbitrary<Actor> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      at,
      n: fc.integer({ min: 1, max: 3 }),
      stream: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('drawThenInsert' as const), at, delayMs: hold }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('longTx' as const),
      at,
      holdMs: hold,
      commit: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('rollbackThenInsert' as const), at, delayMs: hold }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('explicitIndex' as const),
      at,
      delayMs: hold,
      pick: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('reader' as const),
      at,
      offset: fc.integer({ min: -4, max: 1 }),
    }),
  },
);
const actors = (min: number, max: number) =>
  fc.array(actorArb, { minLength: min, maxLength: max }).map((l) => l.sort((x, y) => x.at - y.at));
const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  before: actors(3, 12),
  after: fc.option(actors(1, 8), { nil: null, freq: 2 }),
});

const startLog = (url: string) =>
  startLogContext(url, {
    ordering: 'concurrent',
    gapTimeoutMs: GAP_TIMEOUT_MS,
    lateWatchMs: LATE_WATCH_MS,
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What one reader received. */
interface Reader {
  label: string;
  start: number;
  inOrder: number[];
  late: number[];
  /** Open to the end of the run: owes every committed row from its start. */
  complete: boolean;
  /** A durable consumer: a late row may come again after its restart (at least once). */
  durable: boolean;
}

/** Pulls everything a feed yields into the reader until the feed is closed. */
function drain(feed: LogFeed, reader: Reader): Promise<void> {
  return (async () => {
    for await (const message of feed as AsyncIterable<FeedMessage>) {
      (message.late ? reader.late : reader.inOrder).push(message.id);
    }
  })().catch(() => undefined);
}

function violations(r: Reader, committed: number[], lateSet: Set<number>): string[] {
  const out: string[] = [];
  const committedSet = new Set(committed);
  const repeats = (list: number[]) => list.filter((i, k) => list.indexOf(i) !== k);
  const inOrderRepeats = repeats(r.inOrder);
  if (inOrderRepeats.length) out.push(`repeated in order ${inOrderRepeats.join(',')}`);
  const lateRepeats = r.durable ? [] : repeats(r.late);
  if (lateRepeats.length) out.push(`repeated late ${lateRepeats.join(',')}`);
  const both = r.late.filter((i) => r.inOrder.includes(i));
  if (both.length) out.push(`both in order and late ${both.join(',')}`);
  const disorder = r.inOrder.filter((i, k) => k > 0 && i <= r.inOrder[k - 1]);
  if (disorder.length) out.push(`out of order at ${disorder.join(',')}`);
  const phantom = [...r.inOrder, ...r.late].filter((i) => !committedSet.has(i) || i < r.start);
  if (phantom.length) out.push(`uncommitted or below its start ${phantom.join(',')}`);
  const falseLate = r.late.filter((i) => !lateSet.has(i));
  if (falseLate.length) out.push(`marked late, not in a passed position ${falseLate.join(',')}`);
  if (r.complete) {
    const got = new Set([...r.inOrder, ...r.late]);
    const missed = committed.filter((i) => i >= r.start && !got.has(i));
    if (missed.length) out.push(`MISSED ${missed.join(',')}`);
  }
  return out.map((v) => `${r.label} [from ${r.start}]: ${v}`);
}

describe('late arrivals property: external writers of every shape, readers joining, a restart', () => {
  let db: TestDatabase | null = null;
  /** Each run's refused indices (the runs must exercise the refusal, not only deliveries). */
  const refusals: number[][] = [];
  const clients = new Set<pg.Client>();
  const contexts = new Set<INestApplicationContext>();

  afterEach(async () => {
    for (const client of clients) await client.end().catch(() => undefined);
    clients.clear();
    for (const context of contexts) await context.close().catch(() => undefined);
    contexts.clear();
    await db?.drop();
    db = null;
  });

  async function run(scenario: Scenario): Promise<void> {
    const database = (db = await createTestDatabase());
    const session = async () => {
      const client = new pg.Client({ connectionString: database.url, application_name: 'hand' });
      client.on('error', () => undefined);
      await client.connect();
      clients.add(client);
      return client;
    };
    const done = async (client: pg.Client) => {
      clients.delete(client);
      await client.end().catch(() => undefined);
    };
    /** Indices whose hand-written row was refused because its position's watch was over. */
    const refused: number[] = [];
    refusals.push(refused);
    const insertAt = (client: pg.Client, index: number) =>
      client
        .query(
          `INSERT INTO messages (index, message_type, body, content_hash) VALUES ($1, 'ByHand', '{}'::jsonb, 'h')`,
          [index],
        )
        .then(
          () => true,
          (error: { code?: string; constraint?: string }) => {
            // The hole was taken meanwhile (a long transaction that drew it committed its row
            // there): the primary key refuses the second row, and the first is the one readers get.
            // (The primary key of the row's segment: `messages_<first index>_pkey`.)
            if (error.code === '23505' && /^messages_\w*pkey$/.test(error.constraint ?? ''))
              return false;
            if (error.code !== '23514' || error.constraint !== 'messages_index_passed') throw error;
            refused.push(index);
            return false;
          },
        );
    const draw = async (client: pg.Client) =>
      Number((await client.query<{ p: string }>(`SELECT nextval('${SEQUENCE}') AS p`)).rows[0].p);
    const maxIndex = async () =>
      Number(
        (
          await database.query<{ m: string }>(
            'SELECT coalesce(max(index), 0)::text AS m FROM messages',
          )
        )[0].m,
      );

    const watermarks: LogWatermark[] = [];
    let context: INestApplicationContext;
    const startProcess = async () => {
      context = await startLog(database.url);
      contexts.add(context);
      watermarks.push(context.get(LogWatermark));
    };
    const readers: Reader[] = [];
    let live: { feed: LogFeed; drained: Promise<void>; reader: Reader }[] = [];
    const open = (
      fromIndex: number,
      reader: Reader,
      watchBelow?: { arrivedSince: Date | null },
    ) => {
      const feed = context
        .get(LiveRouter)
        .open({ fromIndex, ...(watchBelow ? { watchAbandonedBelow: watchBelow } : {}) });
      live.push({ feed, drained: drain(feed, reader), reader });
    };
    const pending: Promise<unknown>[] = [];
    const failures: string[] = [];
    let appends = 0;

    const act = async (actor: Actor): Promise<void> => {
      switch (actor.kind) {
        case 'append': {
          const n = appends++;
          pending.push(
            context.get(LogWriter).append({
              messages: Array.from({ length: actor.n }, () => ({
                messageType: 'Own',
                body: { n },
              })),
              ...(actor.stream ? { stream: { streamId: `own-${n}`, expectedVersion: 'any' } } : {}),
            }),
          );
          return;
        }
        case 'drawThenInsert': {
          const s = await session();
          const p = await draw(s);
          pending.push(
            sleep(actor.delayMs)
              .then(() => insertAt(s, p))
              .finally(() => done(s)),
          );
          return;
        }
        case 'longTx': {
          const s = await session();
          await s.query('BEGIN');
          const p = await draw(s);
          pending.push(
            sleep(actor.holdMs)
              .then(async () => {
                if (!actor.commit) return s.query('ROLLBACK');
                return s.query((await insertAt(s, p)) ? 'COMMIT' : 'ROLLBACK');
              })
              .finally(() => done(s)),
          );
          return;
        }
        case 'rollbackThenInsert': {
          const s = await session();
          await s.query('BEGIN');
          const { rows } = await s.query<{ p: string }>(
            `INSERT INTO messages (index, message_type, body, content_hash)
             VALUES (nextval('${SEQUENCE}'), 'RolledBack', '{}'::jsonb, 'h') RETURNING index::text AS p`,
          );
          await s.query('ROLLBACK');
          await done(s);
          pending.push(
            sleep(actor.delayMs).then(async () => {
              const other = await session();
              await insertAt(other, Number(rows[0].p)).finally(() => done(other));
            }),
          );
          return;
        }
        case 'explicitIndex': {
          pending.push(
            sleep(actor.delayMs).then(async () => {
              const holes = await database.query<{ p: string }>(
                `SELECT s.position::text AS p FROM log_skipped s
                 WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.index = s.position) ORDER BY 1`,
              );
              if (holes.length === 0) return;
              const other = await session();
              await insertAt(other, Number(holes[actor.pick % holes.length].p)).finally(() =>
                done(other),
              );
            }),
          );
          return;
        }
        case 'reader': {
          const start = Math.max(1, (await maxIndex()) + actor.offset);
          const reader: Reader = {
            label: `reader@${actor.at}`,
            start,
            inOrder: [],
            late: [],
            complete: true,
            durable: false,
          };
          readers.push(reader);
          open(start, reader);
          return;
        }
      }
    };
    const phase = (list: Actor[]) => {
      const t0 = Date.now();
      return Promise.all(
        list.map(async (actor) => {
          await sleep(Math.max(0, t0 + actor.at - Date.now()));
          await act(actor).catch((e: unknown) => failures.push(`${actor.kind}: ${String(e)}`));
        }),
      );
    };

    // Given a process, and a durable consumer reading from the start
    await startProcess();
    const consumer: Reader = {
      label: 'consumer',
      start: 1,
      inOrder: [],
      late: [],
      complete: true,
      durable: true,
    };
    readers.push(consumer);
    open(1, consumer);
    // When the actors run, and the process restarts (if the scenario says so)
    await phase(scenario.before);
    if (scenario.after) {
      // The consumer writes its bookmark down, with its feed's arrivedSince, and stops; live
      // feeds end with the process.
      const savedAt = live.find((l) => l.reader === consumer)!.feed.arrivedSince;
      const bookmark = consumer.inOrder.at(-1) ?? 0;
      for (const l of live) {
        l.feed.close();
        if (l.reader !== consumer) l.reader.complete = false;
      }
      await Promise.all(live.map((l) => l.drained));
      live = [];
      await context!.close();
      contexts.delete(context!);
      await startProcess();
      open(bookmark + 1, consumer, { arrivedSince: savedAt });
      await phase(scenario.after);
    }
    const outcomes = await Promise.allSettled(pending);
    for (const o of outcomes)
      if (o.status === 'rejected') failures.push(`a writer failed: ${String(o.reason)}`);
    // And a reader joins from the start once every writer has ended
    const joiner: Reader = {
      label: 'joiner',
      start: 1,
      inOrder: [],
      late: [],
      complete: true,
      durable: false,
    };
    readers.push(joiner);
    open(1, joiner);

    // Then, within a deadline, every open reader has every committed row and every late row is counted
    const committedNow = async () =>
      (await database.query<{ i: string }>('SELECT index::text AS i FROM messages ORDER BY 1')).map(
        (r) => Number(r.i),
      );
    const arrivedNow = async () =>
      Number(
        (
          await database.query<{ n: string }>(
            `SELECT count(*)::text AS n FROM log_skipped s JOIN messages m ON m.index = s.position WHERE s.arrived_at IS NULL`,
          )
        )[0].n,
      ) === 0;
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      const committed = await committedNow();
      const settled = readers.every(
        (r) =>
          !r.complete ||
          committed.every((i) => i < r.start || r.inOrder.includes(i) || r.late.includes(i)),
      );
      if ((settled && (await arrivedNow())) || Date.now() > deadline) break;
      await sleep(50);
    }
    const committed = await committedNow();
    const lateRows = await database.query<{ p: string; arrived: boolean }>(
      `SELECT s.position::text AS p, s.arrived_at IS NOT NULL AS arrived
       FROM log_skipped s JOIN messages m ON m.index = s.position`,
    );
    const lateSet = new Set(lateRows.map((r) => Number(r.p)));
    const found = [...failures];
    const storedRefused = refused.filter((i) => committed.includes(i));
    if (storedRefused.length) found.push(`refused, yet stored: ${storedRefused.join(',')}`);
    for (const r of readers) found.push(...violations(r, committed, lateSet));
    const counted = watermarks.reduce((sum, w) => sum + w.counters.lateArrivals, 0);
    const claimed = lateRows.filter((r) => r.arrived).length;
    if (counted !== lateRows.length || claimed !== lateRows.length)
      found.push(
        `late arrivals counted ${counted}, claimed ${claimed}, rows in passed positions ${lateRows.length}`,
      );
    for (const l of live) l.feed.close();
    await Promise.all(live.map((l) => l.drained));
    if (found.length > 0)
      throw new Error(
        `${found.length} violation(s):\n  ${found.join('\n  ')}\n  refused: ${refused.join(',')}\n  scenario: ${JSON.stringify(scenario)}`,
      );
  }

  it(`every hand-written row is refused with a clear error or reaches every reader once, in order or late, and is counted (${RUNS} runs)`, async () => {
    let completed = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        try {
          await run(scenario);
        } finally {
          for (const client of clients) await client.end().catch(() => undefined);
          clients.clear();
          for (const context of contexts) await context.close().catch(() => undefined);
          contexts.clear();
          await db?.drop();
          db = null;
        }
        completed += 1;
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(completed).toBe(RUNS);
    expect(refusals.flat().length).toBeGreaterThan(0);
  }, 600_000);
});
