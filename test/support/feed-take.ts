import type { FeedMessage, LogFeed } from '../../libs/log/src/router/log-feed.js';

const iterators = new WeakMap<LogFeed, AsyncIterator<FeedMessage>>();

/** Pulls `count` messages from a feed (one iterator per feed, kept between calls), failing after the deadline. */
export async function take(feed: LogFeed, count: number, timeoutMs = 5000): Promise<FeedMessage[]> {
  let iterator = iterators.get(feed);
  if (!iterator) iterators.set(feed, (iterator = feed[Symbol.asyncIterator]()));
  const out: FeedMessage[] = [];
  const timer = setTimeout(() => feed.close(), timeoutMs);
  try {
    while (out.length < count) {
      const next = await iterator.next();
      if (next.done) break;
      out.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
  if (out.length < count)
    throw new Error(
      `Got ${out.length} of ${count} messages within ${timeoutMs} ms: ${out.map((m) => m.id).join(',')}`,
    );
  return out;
}
