import { GroupWake } from './group-wake.js';

describe('GroupWake', () => {
  const settledYet = async (promise: Promise<void>) => {
    let settled = false;
    void promise.then(() => (settled = true));
    // Two turns of the microtask queue: an already-resolved wait has settled by then.
    await Promise.resolve();
    await Promise.resolve();
    return settled;
  };

  it('returns at once from a wait when the group was woken after the caller took its count (a wake it was not there for)', async () => {
    // Given a caller that took the count, then looked and found nothing, while an ack woke the group
    const wake = new GroupWake();
    const seen = wake.seen('g');
    wake.wake('g');
    // When it waits (a minute at most), then it does not wait
    expect(await settledYet(wake.wait('g', 60_000, undefined, seen))).toBe(true);
  });

  it('counts a wake of every group, and waits while nothing woke the group since the count', async () => {
    const wake = new GroupWake();
    const seen = wake.seen('g');
    wake.wake('other');
    const waiting = wake.wait('g', 60_000, undefined, seen);
    expect(await settledYet(waiting)).toBe(false);
    wake.wakeAll();
    expect(await settledYet(waiting)).toBe(true);
    // And a count taken before wakeAll is stale for every group
    const before = wake.seen('h');
    wake.wakeAll();
    expect(await settledYet(wake.wait('h', 60_000, undefined, before))).toBe(true);
  });
});
