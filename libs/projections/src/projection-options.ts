import type { ErrorPolicy, SubscriptionStream } from '@ordinal/subscriptions';

/** Options of `@Projection(name, options)`. */
export interface ProjectionOptions {
  /**
   * Entity classes of the read model: a rebuild deletes their rows (in the rebuild's
   * transaction) before replaying. A `reset(manager)` method on the projection runs too.
   */
  readModels?: Function[];
  /**
   * What the projection reads. By default the types its handlers name, across categories
   * (through the low watermark in concurrent mode); `{ category: 'order' }` reads one
   * category and skips the watermark (S5).
   */
  stream?: SubscriptionStream;
  /** Most events per batch (one transaction). @default the SubscriptionsModule's batchSize */
  batchSize?: number;
  /**
   * A handler that keeps failing: `{ retries, then: 'stop' | 'skip' | 'park', rebuild }`
   * (see docs/projections.md). @default retry with back-off until fixed; `stop` while rebuilding
   */
  onError?: ErrorPolicy;
}

/** What `@Projection` records on a class. */
export interface ProjectionMetadata {
  name: string;
  options: ProjectionOptions;
}
