import type { Type } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { StoredMessage } from '@ordinal/log';
import type { ErrorPolicy, SubscriptionStream } from '@ordinal/subscriptions';

/** What a partitioned projection's events are keyed by: a stored field, or a function of the message. */
export type PartitionKey = 'streamId' | 'userId' | ((message: StoredMessage) => string);

/** Options of `@Projection(name, options)` (or `@Projection({ name, ...options })`). */
export interface ProjectionOptions {
  /**
   * The projection's version. Deploying a higher one starts it as a *candidate* beside the
   * serving version, in its own tables (schema `<projection>_v<version>`), replaying from the
   * first event with side effects held back; it serves reads once promoted
   * (docs/projections.md, "Versions and blue/green deploys"). @default 1
   */
  version?: number;
  /**
   * A candidate is promoted by itself once its lag is at most this (behind the head, or behind
   * the serving version while a process runs that); `false`: promote by hand only. @default 0
   */
  promoteAtLag?: number | false;
  /**
   * Creates a new build's read-model tables: the transaction's search_path is the build's
   * schema, so unqualified `CREATE TABLE order_summaries (…)` lands in it. This is where a
   * version's own migrations go. @default tables shaped like the serving build's
   * (`CREATE TABLE … (LIKE … INCLUDING ALL)` for each of `readModels`)
   */
  createTables?: (manager: EntityManager) => Promise<void>;
  /**
   * Entity classes of the read model. Readers get them through views of the same names that
   * point at the serving version's tables; a blue/green rebuild builds them anew beside the
   * serving ones, an in-place rebuild deletes their rows before replaying (a `reset(manager)`
   * method on the projection runs too).
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
  /**
   * A per-tenant projection (docs/tenants.md): each event's handlers run, in the batch's
   * transaction, as the role `ordinal_tenant` with `ordinal.tenant` naming the event's tenant,
   * so PostgreSQL's row-level security on the read-model tables (put behind the wall by your
   * migration with `tenantIsolationSql`) shows them only that tenant's rows and refuses a row
   * written for another tenant. The checkpoint is written as before, after the role is switched
   * back. An event of no tenant runs without the wall (`ctx.tenant` is null). The projection
   * does not start (TenantWallUnavailableError) when the database user cannot take the role.
   * Not with `version` above 1 yet; its rebuilds are in place. @default false
   */
  tenantIsolation?: boolean;
}

/** What `@Projection` records on a class. */
export interface ProjectionMetadata {
  name: string;
  options: ProjectionOptions;
}
