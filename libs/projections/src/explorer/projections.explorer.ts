import {
  Inject,
  Injectable,
  type Type,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { UpcasterRegistry } from '@ordinal/event-sourcing';
import { LiveRouter, TenantSessions } from '@ordinal/log';
import { SubscriptionsService, type MessageHandler } from '@ordinal/subscriptions';
import { PacedRun, SUBSCRIPTION_NOTICES } from '@ordinal/subscriptions/internal';
import {
  DataSource,
  DefaultNamingStrategy,
  getMetadataArgsStorage,
  type EntityManager,
} from 'typeorm';
import 'reflect-metadata';
import { ProjectionVersionConflictError, TenantWallUnavailableError } from '../errors/index.js';
import { PROJECTION_METADATA } from '../projections.constants.js';
import type { ProjectionMetadata } from '../projection-options.js';
import {
  ProjectionVersionsService,
  type DeclaredProjection,
} from '../versions/projection-versions.service.js';
import type { BuildRow } from '../versions/sql/builds.sql.js';
import { defineProjection, type ProjectionDefinition } from './projection-definition.js';
import { ProjectionDispatcher } from './projection-dispatcher.js';
import { projectionPartitions } from './projection-partitions.js';
import { behindTenantWall } from './tenant-wall.js';

/**
 * How often a process looks at the builds of its projections (docs/projections.md, "How
 * replicas follow the builds"): new ones to run (a rebuild started in another process),
 * finished or retired ones to stop, candidates it runs to promote by themselves. This often
 * while it runs a build that moves on by itself (a candidate's lag, a previous build reaching
 * its stop), or while NOTIFY does not reach it.
 */
const BUILD_CHECK_MS = 250;
/**
 * How often otherwise: every change of a build's row is announced (`projection-builds`, a
 * trigger on projection_versions) and looked at at once; this is only the net.
 */
const BUILD_CHECK_QUIET_MS = 5_000;

/** A projection this process has the code of. */
interface LocalProjection {
  definition: ProjectionDefinition;
  declared: DeclaredProjection;
  dispatcher: ProjectionDispatcher;
  /** The builds it runs here, by consumer (group) name. */
  builds: Map<string, BuildRow>;
}

/**
 * Finds `@Projection` providers in every module through Nest's public DiscoveryService and
 * MetadataScanner (at module init), and at bootstrap, once migrations ran, registers the
 * builds its version runs (docs/projections.md, "Versions") as subscription groups of kind
 * `projection`. While it runs it follows the projection_versions rows, when one is written
 * (NOTIFY) and every BUILD_CHECK_MS or BUILD_CHECK_QUIET_MS: it joins builds of its version
 * started anywhere (ownership shares their partitions with the other processes), leaves the
 * retired ones and the previous ones at their stop, and promotes the candidates it runs once
 * they are close enough.
 */
@Injectable()
export class ProjectionsExplorer implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ProjectionsExplorer.name);
  private readonly definitions: ProjectionDefinition[] = [];
  private readonly local = new Map<string, LocalProjection>();
  private closed = false;
  /** The last check failed (warned once until one succeeds). */
  private failing = false;
  /** Changes to what runs here, one at a time (the periodic check, a rebuild, the start). */
  private queue: Promise<void> = Promise.resolve();
  /** The look at the builds: at once when one is announced, else every checkDelay(). */
  private readonly checks = new PacedRun(
    () => this.check(),
    () => this.checkDelay(),
  );
  private stopNotices: (() => void) | null = null;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly subscriptions: SubscriptionsService,
    private readonly versions: ProjectionVersionsService,
    private readonly dataSource: DataSource,
    private readonly tenants: TenantSessions,
    private readonly router: LiveRouter,
    @Optional() @Inject(UpcasterRegistry) private readonly upcasters?: UpcasterRegistry,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const { metatype } = wrapper;
      const instance: unknown = wrapper.instance;
      if (!metatype || typeof metatype !== 'function') continue;
      const metadata = Reflect.getMetadata(PROJECTION_METADATA, metatype) as
        ProjectionMetadata | undefined;
      if (!metadata) continue;
      if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
        // As @nestjs/schedule does for request scope (and for transient scope too): such an instance is not the one that would run.
        this.logger.warn(
          `Projection '${metadata.name}' (${metatype.name}) is not registered: it is request- or transient-scoped; make it a singleton (the default scope)`,
        );
        continue;
      }
      if (!instance) continue;
      const methods = this.scanner.getAllMethodNames(Object.getPrototypeOf(instance) as object);
      const definition = defineProjection(metadata, instance, methods, (message) =>
        this.logger.warn(message),
      );
      projectionPartitions(
        definition.name,
        definition.options.partitions,
        definition.options.partitionBy,
      );
      this.definitions.push(definition);
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const definition of this.definitions.splice(0)) await this.register(definition);
    // A build written anywhere, or NOTIFY heard again (or no longer): look now.
    this.stopNotices = this.router.onNotice((notice) => {
      if (
        notice.kind === 'delivery' ||
        (notice.kind === 'notice' && notice.payload === SUBSCRIPTION_NOTICES.projectionBuilds)
      )
        this.checks.now();
    });
    this.checks.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    this.stopNotices?.();
    this.checks.close();
    await this.queue;
  }

  /** The projection's local code, or undefined when this process does not declare it. */
  declared(projection: string): LocalProjection | undefined {
    return this.local.get(projection);
  }

  /**
   * A blue/green rebuild: a new build of the declared version beside the serving one, run here
   * at once; the other processes with this code join it at their next check.
   */
  async rebuild(projection: string): Promise<BuildRow> {
    const local = this.local.get(projection)!;
    const build = await this.versions.startBuild(local.declared);
    await this.serially(() => this.follow(local));
    return build;
  }

  private async register(definition: ProjectionDefinition): Promise<void> {
    const dispatcher = new ProjectionDispatcher(definition, this.upcasters ?? null);
    const { options } = definition;
    // Never without the wall it asks for: the start fails instead.
    if (options.tenantIsolation && !(await this.tenants.hasWall()))
      throw new TenantWallUnavailableError(definition.name);
    const declared: DeclaredProjection = {
      projection: definition.name,
      version: options.version ?? 1,
      tables: (options.readModels ?? []).map((entity) => tableOf(this.dataSource, entity)),
      promoteAtLag: options.promoteAtLag === false ? null : (options.promoteAtLag ?? 0),
      createTables: options.createTables,
    };
    const local: LocalProjection = { definition, declared, dispatcher, builds: new Map() };
    this.local.set(definition.name, local);
    await this.versions.register(declared);
    await this.serially(() => this.follow(local, true));
  }

  /**
   * Runs the builds this code should run now and stops the others (ProjectionVersionsService
   * .runnable): a build started in another process is joined, a retired one or a previous one
   * at its stop is left (ownership hands its partitions over). At start, previous builds
   * short of their stop are run too.
   */
  private async follow(local: LocalProjection, start = false, known?: BuildRow[]): Promise<void> {
    const { rows, run } = await this.versions.runnable(
      local.declared,
      start ? 'all' : new Set(local.builds.keys()),
      known,
      (consumers) => this.subscriptions.pendingLate(consumers),
    );
    if (this.closed) return;
    const wanted = new Map(run.map((b) => [b.consumers, b]));
    for (const [consumers, build] of local.builds) {
      if (wanted.has(consumers)) continue;
      local.builds.delete(consumers);
      await this.subscriptions.unsubscribe(consumers);
      const now = rows.find((r) => r.consumers === consumers);
      this.logger.log(
        `Projection '${build.projection}' v${build.version} (build ${build.build}) stops here: ${now?.state === 'previous' ? `previous, at its stop (index ${now.stop_at}), no late row can arrive below it` : 'retired'}`,
      );
    }
    for (const build of run) {
      if (local.builds.has(build.consumers)) local.builds.set(build.consumers, build);
      else this.run(local, build);
    }
    if (start && run.length === 0)
      this.logger.log(
        `Projection '${local.declared.projection}' v${local.declared.version}: no build of it to run (retired, or previous at its stop)`,
      );
  }

  /** Registers one build as a subscription group: its partitions, its gate, its rebuild hooks. */
  private run(local: LocalProjection, build: BuildRow): void {
    const { definition, dispatcher } = local;
    const { options } = definition;
    const key = { projection: build.projection, version: build.version, build: build.build };
    const partitions = projectionPartitions(
      build.consumers,
      options.partitions,
      options.partitionBy,
    );
    local.builds.set(build.consumers, build);
    this.subscriptions.subscribeGroup(
      build.consumers,
      partitions.names.map((name, i) => ({
        name,
        kind: 'projection',
        stream: options.stream ?? { types: dispatcher.types },
        batchSize: options.batchSize,
        onError: options.onError,
        accepts: partitions.accepts[i],
        acceptsKeys: partitions.acceptsKeys[i],
        handle: this.handler(definition, dispatcher),
        gate: this.versions.gate(key),
        reset: async (manager) => {
          await this.versions.resetInPlace(manager, key);
          await this.reset(definition, manager);
        },
        // Blue/green needs to know the tables (the views are named after them); else a rebuild
        // is in place. A per-tenant projection's rebuilds are in place: a build's own schema is
        // not behind the tenant wall.
        rebuild:
          local.declared.tables.length > 0 && !options.tenantIsolation
            ? async () => {
                await this.rebuild(definition.name);
              }
            : undefined,
      })),
    );
    const split = partitions.names.length > 1 ? ` in ${partitions.names.length} partitions` : '';
    this.logger.log(
      `Projection '${definition.name}' v${build.version} (build ${build.build}, ${build.state}) handles ${dispatcher.types.join(', ')}${split}`,
    );
  }

  /**
   * What applies one event: the dispatcher, behind the tenant wall for a per-tenant projection
   * (an event of no tenant runs without it, as `ctx.tenant` null says; warned once).
   */
  private handler(
    definition: ProjectionDefinition,
    dispatcher: ProjectionDispatcher,
  ): MessageHandler {
    if (!definition.options.tenantIsolation)
      return (message, ctx) => dispatcher.dispatch(message, ctx);
    let warned = false;
    return (message, ctx) => {
      if (message.tenant !== null)
        return behindTenantWall(ctx.manager, message.tenant, () =>
          dispatcher.dispatch(message, ctx),
        );
      if (!warned)
        this.logger.warn(
          `Projection '${definition.name}' has tenantIsolation and got an event of no tenant (index ${message.id}, ${message.messageType}): such events run without the tenant wall, with ctx.tenant null`,
        );
      warned = true;
      return dispatcher.dispatch(message, ctx);
    };
  }

  /** An in-place rebuild clears the declared read models and calls the projection's own `reset(manager)`. */
  private async reset(definition: ProjectionDefinition, manager: EntityManager): Promise<void> {
    for (const entity of definition.options.readModels ?? []) {
      await manager.createQueryBuilder().delete().from(entity).execute();
    }
    const hook = (
      definition.instance as { reset?: (manager: EntityManager) => Promise<void> | void }
    ).reset;
    if (typeof hook === 'function') await hook.call(definition.instance, manager);
  }

  /** Runs `task` after the changes queued before it (never two at once). */
  private serially<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queue.then(task);
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /**
   * BUILD_CHECK_MS while a build here moves on by itself (a candidate towards promotion, a
   * previous build towards its stop: no row is written for that), while NOTIFY does not
   * reach this process, or after a failed check; BUILD_CHECK_QUIET_MS otherwise.
   */
  private checkDelay(): number {
    if (this.failing || !this.router.notifyVerified) return BUILD_CHECK_MS;
    for (const local of this.local.values())
      for (const build of local.builds.values())
        if (build.state !== 'serving') return BUILD_CHECK_MS;
    return BUILD_CHECK_QUIET_MS;
  }

  /** Follows the builds of each projection, then promotes what is ready. */
  private check(): Promise<void> {
    return this.serially(async () => {
      if (this.local.size === 0) return;
      // One read of every build for all the projections here, however many.
      const known = await this.versions.builds();
      for (const local of this.local.values()) {
        await this.follow(local, false, known);
        await this.promoteReady(local);
      }
    }).then(
      () => {
        if (this.failing) this.logger.log('Projection builds: looked at again');
        this.failing = false;
      },
      (error: Error) => {
        if (!this.failing)
          this.logger.warn(
            `Projection builds: looking at them failed (${error.message}); trying again every ${BUILD_CHECK_MS} ms`,
          );
        this.failing = true;
      },
    );
  }

  /**
   * Promotes, by itself, a candidate this process runs once its lag is at most its
   * promoteAtLag. Every process running it may try; a lost race (another promoted it) is fine.
   */
  private async promoteReady(local: LocalProjection): Promise<void> {
    if (this.closed || local.declared.promoteAtLag === null) return;
    const candidates = [...local.builds.values()].filter((b) => b.state === 'candidate');
    if (candidates.length === 0) return;
    const status = await this.versions.status(local.declared.projection);
    for (const build of candidates) {
      const now = status.find((s) => s.version === build.version && s.build === build.build);
      if (!now || now.state !== 'candidate' || now.lag > local.declared.promoteAtLag) continue;
      try {
        await this.versions.promoteCandidate(build);
      } catch (error) {
        if (error instanceof ProjectionVersionConflictError) continue;
        this.logger.warn(
          `Projection '${build.projection}' v${build.version}: automatic promotion did not happen (${(error as Error).message})`,
        );
      }
    }
  }
}

/**
 * The table of a read-model entity: from the data source when it lists the entity, else from
 * its `@Entity(name)` (or TypeORM's default name), so a projection whose entity the data
 * source does not list still starts.
 */
function tableOf(dataSource: DataSource, entity: Type): string {
  if (dataSource.hasMetadata(entity)) return dataSource.getMetadata(entity).tableName;
  const declared = getMetadataArgsStorage().tables.find((t) => t.target === entity)?.name;
  return declared ?? new DefaultNamingStrategy().tableName(entity.name, undefined);
}
