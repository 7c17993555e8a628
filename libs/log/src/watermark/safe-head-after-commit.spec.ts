import type { DataSource } from 'typeorm';
import { LogWatermark } from './log-watermark.service.js';
import type { ResolvedLogOptions } from '../log-options.js';

/** A scan the test finishes by hand, with the safe head it found. */
function deferred() {
  let finish!: (head: number) => void;
  const promise = new Promise<number>((resolve) => (finish = resolve));
  return { promise, finish };
}

/**
 * Concurrent mode shares one scan among the callers of `safeHead` that come while it runs. A
 * caller that asked after its own commit joined a scan that had started before it, and got a
 * head without its message (archive.int-spec in CI: 2,499 after the 2,500th append returned).
 */
describe('LogWatermark.safeHead (concurrent mode)', () => {
  const watermark = new LogWatermark(
    {} as DataSource,
    {
      ordering: 'concurrent',
    } as ResolvedLogOptions,
  );
  const scans: ReturnType<typeof deferred>[] = [];
  (watermark as unknown as { advance: () => Promise<number> }).advance = () => {
    const scan = deferred();
    scans.push(scan);
    return scan.promise;
  };

  it('answers a caller who comes during a scan with a scan that starts after it asked', async () => {
    // Given a scan under way (it read the log before the message below committed)
    const first = watermark.safeHead();
    // When a caller asks once its message committed, and another one after it
    const second = watermark.safeHead();
    const third = watermark.safeHead();
    scans[0].finish(2_499);
    // Then the first caller has the first scan's head, and the later ones a scan of their own,
    // one for both, started once the first ended
    expect(await first).toBe(2_499);
    await Promise.resolve();
    expect(scans).toHaveLength(2);
    scans[1].finish(2_500);
    expect(await second).toBe(2_500);
    expect(await third).toBe(2_500);
    // And a caller after that starts a scan again
    const fourth = watermark.safeHead();
    expect(scans).toHaveLength(3);
    scans[2].finish(2_501);
    expect(await fourth).toBe(2_501);
  });
});
