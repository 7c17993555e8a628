import { Injectable, type Type } from '@nestjs/common';
import {
  SubscriptionsService,
  WaitTimeoutError,
  type ParkedMessage,
  type SubscriptionReport,
} from '@ordinal/subscriptions';
import 'reflect-metadata';
import { DataSource, type EntityManager } from 'typeorm';
import { InvalidProjectionError } from './errors/index.js';
import { ProjectionVersionsService } from './versions/projection-versions.service.js';
import type { ProjectionVersionStatus } from './versions/projection-version-status.js';
import { PROJECTION_METADATA } from './projections.constants.js';
import type { ProjectionMetadata } from './projection-options.js';

/** How long `waitFor` waits on one build before it looks again which one serves. */
const WAIT_SLICE_MS = 500;

/** A projection by name or by its `@Projection` class. */
export type ProjectionRef = string | Type;

/** What `read` answers: the data, and the version (and its position) that served it. */
export interface ProjectionRead<T> {
  data: T;
  /** The version that served the read (its tables are behind the views). */
  version: number;
  build: number;
  /** Every event up to here is in the data. */
  position: number;
}

/** What a report of a build of a versioned projection carries beside the consumer's. */
export interface BuildFields {
  projection?: string;
  version?: number;
  build?: number;
  versionState?: ProjectionVersionStatus['state'];
}

/** What the report of one versioned projection carries: who serves reads, and every build. */
export interface ServingFields {
  servingVersion?: number;
  servingBuild?: number;
  servingPosition?: number;
  versions?: ProjectionVersionStatus[];
}

/** Options of a blue/green or in-place rebuild. */
export interface RebuildOptions {
  /**
   * `blue-green`: a fresh build beside the serving one, switched on promotion (readers keep
   * the full model meanwhile). `in-place`: clear the read model and replay into it (readers see
   * it empty, then filling up; for models too large to hold twice). @default 'blue-green'
   */
  mode?: 'blue-green' | 'in-place';
}

/** Domain-code access to projections: read-your-own-writes, status, versions, rebuild. */
@Injectable()
export class ProjectionsService {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly versions: ProjectionVersionsService,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * Resolves once the version that serves reads has applied every event up to `index` (e.g.
   * the index an append returned); WaitTimeoutError after `timeoutMs`. A promotion while it
   * waits is followed: the answer is for the version serving when it resolves.
   */
  async waitFor(projection: ProjectionRef, index: number, timeoutMs = 5000): Promise<number> {
    const name = nameOf(projection);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const group = await this.servingConsumers(name);
      // In slices: a build promoted away meanwhile stops short of `index`, so look again.
      const slice = Math.min(Math.max(0, deadline - Date.now()), WAIT_SLICE_MS);
      try {
        const reached = await this.subscriptions.waitFor(group, index, slice);
        if ((await this.servingConsumers(name)) === group) return reached;
      } catch (error) {
        if (!(error instanceof WaitTimeoutError)) throw error;
        if (Date.now() >= deadline) throw new WaitTimeoutError(name, index, timeoutMs);
      }
    }
  }

  /**
   * Runs `query` on the read model in one transaction and says which version served it and
   * at which position; with `atLeast`, first waits until the serving version applied that
   * index (read-your-own-writes across a promotion).
   */
  async read<T>(
    projection: ProjectionRef,
    query: (manager: EntityManager) => Promise<T>,
    options: { atLeast?: number; timeoutMs?: number } = {},
  ): Promise<ProjectionRead<T>> {
    const name = nameOf(projection);
    if (options.atLeast !== undefined)
      await this.waitFor(name, options.atLeast, options.timeoutMs ?? 5000);
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const serving = (await this.versions.status(name)).find((v) => v.state === 'serving');
      const data = await query(manager);
      return {
        data,
        version: serving?.version ?? 1,
        build: serving?.build ?? 1,
        position: serving?.position ?? 0,
      };
    });
  }

  /** The consumer group of the serving build (the projection's own name before any version). */
  async servingConsumers(projection: ProjectionRef): Promise<string> {
    const name = nameOf(projection);
    return (await this.versions.serving(name))?.consumers ?? name;
  }

  /**
   * Reports (of `report()`) with each build of a versioned projection marked: `projection`,
   * `version`, `build`, `versionState`.
   */
  async annotate<R extends { name: string }>(reports: R[]): Promise<(R & BuildFields)[]> {
    const builds = new Map((await this.versions.builds()).map((b) => [b.consumers, b]));
    return reports.map((report) => {
      const build = builds.get(report.name);
      if (!build) return report;
      return {
        ...report,
        projection: build.projection,
        version: build.version,
        build: build.build,
        versionState: build.state,
      };
    });
  }

  /**
   * One projection as readers see it: the report of its serving build under the projection's
   * name, with `servingVersion`, `servingBuild`, `servingPosition` and every build in
   * `versions`. A consumer name that is not a versioned projection gets its plain report.
   */
  async describe(name: string): Promise<SubscriptionReport & BuildFields & ServingFields> {
    const serving = await this.versions.serving(name);
    if (!serving) {
      const [plain] = await this.annotate(await this.subscriptions.report(name));
      return plain;
    }
    const [report] = await this.subscriptions.report(serving.consumers);
    const versions = await this.versions.status(name);
    return {
      ...report,
      name,
      servingVersion: serving.version,
      servingBuild: serving.build,
      servingPosition: report.position,
      versions,
    };
  }

  /** Every build of the projection's versions: state (candidate, serving, previous, retired), position, lag. */
  listVersions(projection: ProjectionRef): Promise<ProjectionVersionStatus[]> {
    return this.versions.status(nameOf(projection));
  }

  /**
   * Makes `version` (its candidate build) serve reads, in one transaction; the serving one
   * becomes `previous`. ProjectionVersionConflictError when it already serves (a racing
   * promotion won).
   */
  async promote(projection: ProjectionRef, version: number): Promise<void> {
    await this.versions.promote(nameOf(projection), version);
  }

  /** Points readers back at the previous version (while its tables are kept). */
  async rollback(projection: ProjectionRef): Promise<void> {
    await this.versions.rollback(nameOf(projection));
  }

  /** Drops the tables of `version`'s builds that do not serve (never done automatically); returns the schemas dropped. */
  retire(projection: ProjectionRef, version: number): Promise<string[]> {
    return this.versions.retire(nameOf(projection), version);
  }

  /**
   * Every consumer any process registered on the database, projections and subscriptions
   * (`kind` tells them apart): owner (pid, host, heartbeat age, whether it is overdue), the
   * processes standing by, position, head, lag, state, last error, parked count, partitions.
   * Facts only the owner knows (`retries`, `pendingLate`, …) are there only when this process
   * runs the consumer.
   */
  async report(): Promise<(SubscriptionReport & BuildFields)[]> {
    return this.annotate(await this.subscriptions.report());
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

  /**
   * Rebuilds the serving version (wherever it is owned): by default blue/green, a new build
   * beside the serving one that replaces it on promotion; `mode: 'in-place'` clears the read
   * model, resets the checkpoint with a new replay boundary and replays.
   */
  async rebuild(projection: ProjectionRef, options: RebuildOptions = {}): Promise<void> {
    const group = await this.servingConsumers(projection);
    await this.subscriptions.rebuild(group, options.mode === 'in-place' ? 'in-place' : 'own');
  }
}

function nameOf(projection: ProjectionRef): string {
  if (typeof projection === 'string') return projection;
  const metadata = Reflect.getMetadata(PROJECTION_METADATA, projection) as
    ProjectionMetadata | undefined;
  if (!metadata) throw new InvalidProjectionError(`${projection.name} is not a @Projection class`);
  return metadata.name;
}
