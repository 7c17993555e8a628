import { Injectable, type Type } from '@nestjs/common';
import {
  SubscriptionsService,
  type ParkedMessage,
  type SubscriptionReport,
} from '@ordinal/subscriptions';
import 'reflect-metadata';
import { InvalidProjectionError } from './errors/index.js';
import { PROJECTION_METADATA } from './projections.constants.js';
import type { ProjectionMetadata } from './projection-options.js';

/** A projection by name or by its `@Projection` class. */
export type ProjectionRef = string | Type;

/** Domain-code access to projections: read-your-own-writes, status, rebuild. */
@Injectable()
export class ProjectionsService {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  /**
   * Resolves once the projection has applied every event up to `index` (e.g. the index an
   * append returned); WaitTimeoutError after `timeoutMs`.
   */
  waitFor(projection: ProjectionRef, index: number, timeoutMs = 5000): Promise<number> {
    return this.subscriptions.waitFor(nameOf(projection), index, timeoutMs);
  }

  /**
   * Every projection any process registered on the database: owner (pid, host), heartbeat
   * age, position, head, lag, state, last error, parked count, partitions (subscriptions
   * from code are left out; `SubscriptionsService.report()` has them too).
   */
  async report(): Promise<SubscriptionReport[]> {
    return (await this.subscriptions.report()).filter((s) => s.kind === 'projection');
  }

  /** The projection's parked messages (its `park` error policy), oldest first. */
  listParked(projection: ProjectionRef): Promise<ParkedMessage[]> {
    return this.subscriptions.listParked(nameOf(projection));
  }

  /** Applies the parked messages again after a fix (through the upcasters, like any event). */
  replayParked(
    projection: ProjectionRef,
  ): Promise<{ replayed: number; remaining: number; error: string | null }> {
    return this.subscriptions.replayParked(nameOf(projection));
  }

  /** Resumes a projection its `stop` error policy stopped (after a fix). */
  resume(projection: ProjectionRef): Promise<void> {
    return this.subscriptions.resume(nameOf(projection));
  }

  /** Clears the read model, resets the checkpoint with a new replay boundary, replays (wherever it is owned). */
  rebuild(projection: ProjectionRef): Promise<void> {
    return this.subscriptions.rebuild(nameOf(projection));
  }
}

function nameOf(projection: ProjectionRef): string {
  if (typeof projection === 'string') return projection;
  const metadata = Reflect.getMetadata(PROJECTION_METADATA, projection) as
    ProjectionMetadata | undefined;
  if (!metadata) throw new InvalidProjectionError(`${projection.name} is not a @Projection class`);
  return metadata.name;
}
