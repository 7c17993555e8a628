import fc from 'fast-check';
import { BookmarkTracker } from './bookmark-tracker.js';

const RUN = 'run-uuid';

function dispatched(start: number, upTo: number, batch: number): BookmarkTracker {
  const tracker = new BookmarkTracker(start, batch, RUN);
  tracker.dispatched(upTo);
  return tracker;
}

describe('BookmarkTracker (P2)', () => {
  it('holds the bookmark at 5 when 7 is acknowledged before 6', () => {
    // Given a run from 0 with batch 1 that dispatched 1..7 and got acks for 1..5
    const tracker = dispatched(0, 7, 1);
    for (let i = 1; i <= 5; i++) tracker.ack(i, RUN);
    // When 7 is acknowledged before 6
    tracker.ack(7, RUN);
    // Then the bookmark stays at 5
    expect(tracker.target).toBe(5);
    expect(tracker.held).toBe(1);
    // And when 6 arrives, it moves over 6 and 7
    tracker.ack(6, RUN);
    expect(tracker.target).toBe(7);
  });

  it('moves only in whole batches', () => {
    // Given batch 5 from bookmark 20
    const tracker = dispatched(20, 40, 5);
    // When 21..24 are acknowledged
    for (let i = 21; i <= 24; i++) tracker.ack(i, RUN);
    // Then the bookmark stays at 20 until the batch is whole
    expect(tracker.target).toBe(20);
    tracker.ack(25, RUN);
    expect(tracker.target).toBe(25);
    for (let i = 26; i <= 34; i++) tracker.ack(i, RUN);
    expect(tracker.target).toBe(30);
  });

  it('drops a stale uuid, an unknown index and a repeat', () => {
    // Given a run that dispatched 1..3
    const tracker = dispatched(0, 3, 1);
    // When acknowledgements of another run, beyond the dispatched range and repeated arrive
    // Then none moves the bookmark
    expect(tracker.ack(1, 'previous-run')).toBe('stale');
    expect(tracker.ack(4, RUN)).toBe('unknown');
    expect(tracker.target).toBe(0);
    expect(tracker.ack(1, RUN)).toBe('accepted');
    expect(tracker.ack(1, RUN)).toBe('duplicate');
    expect(tracker.target).toBe(1);
  });

  it('counts skipped messages as acknowledged', () => {
    // Given batch 2 where 2 is outside includeTypes
    const tracker = new BookmarkTracker(0, 2, RUN);
    tracker.dispatched(1);
    tracker.skip(2);
    // When 1 is acknowledged
    tracker.ack(1, RUN);
    // Then the batch 1..2 is whole
    expect(tracker.target).toBe(2);
  });

  it('keeps the saved bookmark once confirmed', () => {
    // Given a target of 10 that has been saved
    const tracker = dispatched(0, 12, 5);
    for (let i = 1; i <= 12; i++) tracker.ack(i, RUN);
    tracker.markSaved(tracker.target);
    // Then the bookmark is 10 and the target stays there until 15
    expect(tracker.bookmark).toBe(10);
    expect(tracker.target).toBe(10);
  });

  describe('properties over random ack orders and batch sizes', () => {
    const scenario = fc
      .record({
        start: fc.integer({ min: 0, max: 1000 }),
        n: fc.integer({ min: 1, max: 120 }),
        batch: fc.integer({ min: 1, max: 40 }),
      })
      .chain(({ start, n, batch }) =>
        fc.record({
          start: fc.constant(start),
          n: fc.constant(n),
          batch: fc.constant(batch),
          // a random order of the indices, some acknowledged twice, some never, some stale
          acks: fc.array(
            fc.record({ offset: fc.integer({ min: 1, max: n }), stale: fc.boolean() }),
            { maxLength: n * 3 },
          ),
          order: fc.shuffledSubarray(
            [...Array(n).keys()].map((k) => k + 1),
            { minLength: 0, maxLength: n },
          ),
        }),
      );

    it('never passes an unacknowledged index, moves in whole batches, and is as far as the run allows', () => {
      fc.assert(
        fc.property(scenario, ({ start, n, batch, acks, order }) => {
          // Given a run from `start` that dispatched n indices
          const tracker = dispatched(start, start + n, batch);
          const acknowledged = new Set<number>();
          let previous = start;
          const events = [
            ...acks.map((a) => ({ index: start + a.offset, stale: a.stale })),
            ...order.map((o) => ({ index: start + o, stale: false })),
          ];
          for (const { index, stale } of events) {
            // When acknowledgements arrive in this order
            tracker.ack(index, stale ? 'other-run' : RUN);
            if (!stale) acknowledged.add(index);
            const target = tracker.target;
            // Then every index up to the target was acknowledged in this run
            for (let i = start + 1; i <= target; i++) expect(acknowledged.has(i)).toBe(true);
            // And the target moved by whole batches and never backwards
            expect((target - start) % batch).toBe(0);
            expect(target).toBeGreaterThanOrEqual(previous);
            // And it is the furthest whole batch of the contiguous run
            let run = start;
            while (acknowledged.has(run + 1)) run++;
            expect(tracker.contiguous).toBe(run);
            expect(target).toBe(start + Math.floor((run - start) / batch) * batch);
            previous = target;
          }
        }),
      );
    });

    it('after a restart, the resent set is exactly the indices above the saved bookmark', () => {
      fc.assert(
        fc.property(scenario, ({ start, n, batch, order }) => {
          // Given a run whose targets were all saved as they moved
          const tracker = dispatched(start, start + n, batch);
          for (const o of order) {
            tracker.ack(start + o, RUN);
            tracker.markSaved(tracker.target);
          }
          // When the server restarts, it resends everything after the saved bookmark
          const resent = [...Array(n).keys()]
            .map((k) => start + k + 1)
            .filter((i) => i > tracker.bookmark);
          // Then nothing acknowledged inside a whole batch is resent, and nothing unacknowledged is lost
          const unacked = new Set(
            [...Array(n).keys()]
              .map((k) => start + k + 1)
              .filter((i) => !order.includes(i - start)),
          );
          for (const i of unacked) expect(resent).toContain(i);
          expect(resent.length).toBeLessThanOrEqual(unacked.size === 0 ? batch - 1 : n);
          expect(tracker.bookmark + resent.length).toBe(start + n);
        }),
      );
    });
  });
});
