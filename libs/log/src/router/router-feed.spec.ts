import type { StoredMessage } from '../message.js';
import { storedMessage } from '@ordinal/test-support/stored-message';
import type { FeedMessage } from './log-feed.js';
import { Mailbox, type PassedMark } from './mailbox.js';
import { RouterFeed, type FeedSource } from './router-feed.js';

const message = (id: number) => storedMessage(id);

/** A router that has delivered nothing yet and hands its mailbox out: the test offers to it. */
function fakeRouter() {
  const watches: { feed: RouterFeed; positions: number[] }[] = [];
  let mailbox: Mailbox | null = null;
  const source: FeedSource = {
    ready: Promise.resolve(),
    replayBatchSize: 100,
    pageBytes: 1 << 20,
    mailboxLimit: 100,
    hold: () => undefined,
    release: () => undefined,
    releaseAll: () => undefined,
    attach: (limit, accepts, onPassed: (mark: PassedMark) => void) =>
      (mailbox = new Mailbox(0, limit, accepts, Number.POSITIVE_INFINITY, onPassed)),
    detach: () => undefined,
    suspended: () => undefined,
    safeHead: () => Promise.resolve(0),
    read: () => Promise.reject(new Error('nothing to replay')),
    openSkipped: () => Promise.resolve({ positions: [], xmax: '1' }),
    watch: (feed, positions) => void watches.push({ feed, positions }),
    unwatch: () => undefined,
    missingSince: () => undefined,
  };
  return {
    source,
    watches,
    offer: (messages: StoredMessage[], upTo: number, passed?: PassedMark) =>
      mailbox!.offer(messages, upTo, passed),
  };
}

describe('RouterFeed: a slow feed and the positions the router passes inside abandoned holes', () => {
  it('watches a passed position as the router passes it, while its consumer still holds an earlier message; the arrival comes right after it', async () => {
    // Given a live feed whose consumer has taken message 1 and not asked for more
    const router = fakeRouter();
    const feed = new RouterFeed(router.source, { fromIndex: 1 });
    await feed.headAtOpen;
    const iterator = feed[Symbol.asyncIterator]();
    router.offer([message(1)], 1);
    expect((await iterator.next()).value).toMatchObject({ id: 1 });
    // When the router reads on past 2 (abandoned, no row) to 3 and 4
    router.offer([message(3), message(4)], 4, { passed: [2], xmax: '100' });
    // Then the feed watches 2 now, not when its consumer comes back
    expect(router.watches).toEqual([{ feed, positions: [2] }]);
    // And a row arriving at 2 meanwhile is yielded late right after the feed passes 2
    expect(feed.offerLate(message(2))).toBe(true);
    const next: FeedMessage[] = [];
    for (let i = 0; i < 3; i++) next.push((await iterator.next()).value as FeedMessage);
    expect(next.map((m) => [m.id, m.late ?? false])).toEqual([
      [3, false],
      [2, true],
      [4, false],
    ]);
    feed.close();
  });
});
