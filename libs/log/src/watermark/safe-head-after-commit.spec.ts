import type { DataSource } from 'typeorm';
import { LogWatermark } from './log-watermark.service.js';
import type { ResolvedLogOptions } from '../log-options.js';

/** A scan the test ends by hand, with the safe head it found or an error. */
function deferred() {
  let finish!: (head: number) => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<number>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { promise, finish, fail };
}

/** A caller's head, or its error's message (never rejects: a test that fails early leaves none unhandled). */
const outcome = (head: Promise<number>): Promise<number | string> =>
  head.then(
    (position) => position,
    (error: Error) => error.message,
  );

/**
 * Concurrent mode shares one scan among the callers of `safeHead` that come while it runs. A
 * caller that asked after its own commit joined a scan that had started before it, and got a
 * head without its message (archive.int-spec in CI: 2,499 after the 2,500th append returned).
 */
describe('LogWatermark.safeHead (concurrent mode)', () => {
  let watermark: LogWatermark;
  let scans: ReturnType<typeof deferred>[];
  /** Scans running now, and the most that ever ran at once. */
  let running: number;
  let most: number;

  beforeEach(() => {
    watermark = new LogWatermark(
      {} as DataSource,
      { ordering: 'concurrent' } as ResolvedLogOptions,
    );
    scans = [];
    running = 0;
    most = 0;
    (watermark as unknown as { advance: () => Promise<number> }).advance = () => {
      const scan = deferred();
      scans.push(scan);
      running += 1;
      most = Math.max(most, running);
      return scan.promise.finally(() => (running -= 1));
    };
  });

  it('answers a caller who comes during a scan with a scan that starts after it asked', async () => {
    // Given a scan under way (it read the log before the message below committed)
    const first = outcome(watermark.safeHead());
    // When a caller asks once its message committed, and another one after it
    const second = outcome(watermark.safeHead());
    const third = outcome(watermark.safeHead());
    scans[0].finish(2_499);
    // Then the first caller has the first scan's head, and the later ones a scan of their own,
    // one for both, started once the first ended
    expect(await first).toBe(2_499);
    expect(scans).toHaveLength(2);
    scans[1].finish(2_500);
    expect(await second).toBe(2_500);
    expect(await third).toBe(2_500);
    // And a caller after that starts a scan again
    const fourth = outcome(watermark.safeHead());
    expect(scans).toHaveLength(3);
    scans[2].finish(2_501);
    expect(await fourth).toBe(2_501);
  });

  it('runs one scan at a time, also for callers who come in the steps after a scan ends', async () => {
    // Given a scan under way, and a caller waiting for the next one
    const first = outcome(watermark.safeHead());
    const second = outcome(watermark.safeHead());
    // When the scan ends, and a caller comes at each of the promise steps that follow
    scans[0].finish(10);
    const later: Promise<number | string>[] = [];
    for (let step = 0; step < 10; step++) {
      later.push(outcome(watermark.safeHead()));
      await Promise.resolve();
    }
    // Then the waiting caller's scan ran alone, and every later caller shares it or the one after it
    expect(most).toBe(1);
    expect(await first).toBe(10);
    scans[1].finish(11);
    expect(await second).toBe(11);
    expect(scans).toHaveLength(3);
    scans[2].finish(12);
    for (const head of await Promise.all(later)) expect([11, 12]).toContain(head);
    expect(most).toBe(1);
  });

  it('gives a failed scan the error to its own callers only; those who came meanwhile get the next scan', async () => {
    // Given a scan under way and a caller waiting for the next one
    const first = outcome(watermark.safeHead());
    const second = outcome(watermark.safeHead());
    // When the running scan fails
    scans[0].fail(new Error('connection lost'));
    // Then its caller has the error, and the waiting one the next scan
    expect(await first).toBe('connection lost');
    expect(scans).toHaveLength(2);
    const third = outcome(watermark.safeHead());
    scans[1].fail(new Error('connection lost again'));
    expect(await second).toBe('connection lost again');
    // And a caller who came during the failed scan gets the one after it
    expect(scans).toHaveLength(3);
    scans[2].finish(7);
    expect(await third).toBe(7);
    expect(most).toBe(1);
  });
});
