import type { Type } from '@nestjs/common';
import type { StoredMessage } from '@ordinal/log';
import type { ErrorPolicy, SubscriptionStream } from '@ordinal/subscriptions';

/** What a partitioned projection's events are keyed by: a stored field, or a function of the message. */
export type PartitionKey = 'streamId' | 'userId' | ((message: StoredMessage) => string);

/** Options of `@Projection(name, options)`. */
export interface ProjectionOptions {
  /**
   * Entity classes of the read model: a rebuild deletes their rows (in the rebuild's
   * transaction) before replaying. A `reset(manager)` method on the projection runs too.
   */
  readModels?: Type[];
  /**
   * What the projection reads. By default the types its handlers name, across categories
   * (through the low watermark in concurrent mode); `{ category: 'order' }` reads one
   * category and skips the watermark.
   */
  stream?: SubscriptionStream;
  /** Most events per batch (one transaction). @default the SubscriptionsModule's batchSize */
  batchSize?: number;
  /**
   * A handler that keeps failing: `{ retries, then: 'stop' | 'skip' | 'park', rebuild }`
   * (see docs/projections.md). @default retry with back-off until fixed; `stop` while rebuilding
   */
  onError?: ErrorPolicy;
  /**
   * Split the projection into this many partitions, `<name>#0` … `<name>#n-1`, each with its
   * own checkpoint and owner, so the processes of a service share the work. An event goes to
   * partition `murmur3(key) mod n` (the log's shard function), so one key's events stay in
   * index order. Changing it later means a rebuild. @default 1
   */
  partitions?: number;
  /** The key of a partitioned projection's events (a missing field is the empty key). @default 'streamId' */
  partitionBy?: PartitionKey;
}

/** What `@Projection` records on a class. */
export interface ProjectionMetadata {
  name: string;
  options: ProjectionOptions;
}
