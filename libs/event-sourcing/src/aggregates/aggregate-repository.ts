import { Logger } from '@nestjs/common';
import type { EventBus } from '@nestjs/cqrs';
import {
  correlationOf,
  runWithCorrelation,
  type ExpectedVersion,
  type StoredMessage,
} from '@ordinal/log';
import 'reflect-metadata';
import { AGGREGATE_METADATA } from '../event-sourcing.constants.js';
import {
  AggregateNotFoundError,
  InvalidAggregateError,
  MissingUpcasterError,
  UnknownEventTypeError,
} from '../errors/index.js';
import {
  eventClassOf,
  fromEventData,
  requireEventMetadata,
  toEventData,
  type EventClass,
} from '../events/event-codec.js';
import type { StreamStore } from '../streams/stream-store.service.js';
import type {
  DeletedStream,
  DeleteStreamOptions,
  RecordedEvent,
  Snapshot,
} from '../streams/stream-event.js';
import { assertStreamId } from '../streams/stream-id.js';
import type { UpcasterRegistry } from '../upcasting/upcaster-registry.service.js';
import { retryOnConflict, type RetryOptions } from '../retry/retry-on-conflict.js';
import { markPersisted, markTenant, type AggregateRoot } from './aggregate-root.js';
import type { AggregateOptions } from './aggregate.decorator.js';

/** An aggregate class: its constructor takes the stream id. */
export type AggregateClass<T extends AggregateRoot = AggregateRoot> = new (id: string) => T;

/** Options of `AggregateRepository.save`. */
export interface SaveOptions {
  /** Metadata stored with every event of this save (correlation ids, the user, …). */
  metadata?: Record<string, unknown>;
  /** Overrides the loaded version: `'any'` skips the check. @default aggregate.version */
  expectedVersion?: ExpectedVersion;
  /**
   * The correlation of the saved events. @default the current correlation (the message a
   * projection, subscription or EventBus handler is handling; the HTTP request), else a new one
   */
  correlationId?: string;
  /** What caused them (a command id, say). @default the current correlation's cause (the handled message's index) */
  causationId?: string;
}

/** What a save wrote. */
export interface SaveResult {
  streamId: string;
  version: number;
  firstIndex: number;
  lastIndex: number;
}

/**
 * Loads and saves one aggregate class. `load` applies the newest snapshot and only the
 * events after it, read one page per query, each upcast to its class's schema version.
 * `save` appends the uncommitted events expecting the loaded version, then (after commit)
 * publishes them on the EventBus and applies the snapshot policy.
 *
 * The repository injected is that of no tenant; `forTenant('acme')` is tenant `acme`'s
 * (docs/tenants.md): the same methods, on the tenant's own streams.
 */
export class AggregateRepository<T extends AggregateRoot> {
  /**
   * The tenant whose aggregates this repository loads and saves (`forTenant`), null for none.
   * Its aggregates carry it (`aggregate.tenant`).
   */
  readonly tenant: string | null = null;
  private readonly logger: Logger;
  private readonly events = new Map<string, { type: EventClass; schemaVersion: number }>();
  private readonly snapshotEvery: number;
  private readonly snapshotSchemaVersion: number;

  constructor(
    readonly aggregate: AggregateClass<T>,
    private readonly store: StreamStore,
    private readonly upcasters: UpcasterRegistry,
    private readonly eventBus: EventBus | null,
  ) {
    const options = Reflect.getMetadata(AGGREGATE_METADATA, aggregate) as
      AggregateOptions | undefined;
    if (!options)
      throw new InvalidAggregateError(
        `${aggregate.name} is not an aggregate: decorate it with @Aggregate({ events: [...] })`,
      );
    for (const type of options.events) {
      const { eventType, schemaVersion, personal } = requireEventMetadata(type);
      if (personal) store.declarePersonalData(eventType, personal);
      const existing = this.events.get(eventType);
      if (existing && existing.type !== type)
        throw new InvalidAggregateError(
          `${aggregate.name} declares two classes for '${eventType}'`,
        );
      this.events.set(eventType, { type, schemaVersion });
    }
    this.snapshotEvery = options.snapshotEvery ?? 0;
    this.snapshotSchemaVersion = options.snapshotSchemaVersion ?? 1;
    this.logger = new Logger(`AggregateRepository<${aggregate.name}>`);
  }

  /**
   * The repository of `tenant`'s aggregates (docs/tenants.md): loads, saves, snapshots,
   * deletes, `find` and `update` on the tenant's own streams (`StreamStore.forTenant`), so
   * tenant `acme`'s `order-1` and tenant `globex`'s are two aggregates, and one tenant's is
   * not found through another's repository. The aggregates it creates or loads carry the
   * tenant (`aggregate.tenant`), and it saves no other tenant's. `undefined` or null: the
   * repository of no tenant (the injected one). A cheap view: take one per request.
   */
  forTenant(tenant?: string | null): AggregateRepository<T> {
    const root =
      this.tenant === null ? this : (Object.getPrototypeOf(this) as AggregateRepository<T>);
    const store = root.store.forTenant(tenant);
    if (store.tenant === null) return root;
    return Object.create(root, {
      tenant: { value: store.tenant, enumerable: true },
      store: { value: store },
    }) as AggregateRepository<T>;
  }

  /** A new aggregate (version 0) for a stream that does not exist yet. */
  create(streamId: string): T {
    assertStreamId(streamId);
    const aggregate = new this.aggregate(streamId);
    if (this.tenant !== null) markTenant(aggregate, this.tenant);
    return aggregate;
  }

  /**
   * Deletes the aggregate's stream (docs/lifecycle.md): `mode: 'soft'` (the default) hides its
   * events, and creating the aggregate again continues at `lastVersion + 1`; `'tombstone'`
   * ends it for ever. `expectedVersion`: the version it must be at (say, `aggregate.version`).
   */
  async delete(streamId: string, options: DeleteStreamOptions = {}): Promise<DeletedStream> {
    return this.store.delete(streamId, options);
  }

  /**
   * The aggregate from its newest snapshot and later events, or null when the stream is empty.
   * A soft-deleted stream throws `StreamDeletedError`, a tombstoned one `StreamTombstonedError`.
   */
  async find(streamId: string): Promise<T | null> {
    let slice = await this.store.slice(streamId, 1, true);
    if (slice.version === 0) return null;
    if (slice.snapshot && slice.snapshot.schemaVersion !== this.snapshotSchemaVersion) {
      // A snapshot of another state schema cannot be restored: replay the stream instead.
      slice = await this.store.slice(streamId, 1, false);
    }
    const aggregate = this.create(streamId);
    if (slice.snapshot) {
      aggregate.restoreSnapshot(slice.snapshot.state);
      markPersisted(aggregate, slice.snapshot.version);
    }
    this.replay(aggregate, slice.events);
    if (aggregate.version < slice.version) {
      for await (const page of this.store.pages(streamId, aggregate.version, slice.version))
        this.replay(aggregate, page);
    }
    return aggregate;
  }

  /** The aggregate; `AggregateNotFoundError` when its stream has no events. */
  async load(streamId: string): Promise<T> {
    const aggregate = await this.find(streamId);
    if (!aggregate) throw new AggregateNotFoundError(streamId);
    return aggregate;
  }

  /**
   * Appends the uncommitted events expecting the version the aggregate was loaded at. A
   * concurrent change rejects with `VersionConflictError` and leaves the aggregate as it was.
   * Returns null when there was nothing to save.
   */
  async save(aggregate: T, options: SaveOptions = {}): Promise<SaveResult | null> {
    this.assertOwn(aggregate);
    const pending = [...aggregate.getUncommittedEvents()];
    if (pending.length === 0) return null;
    const before = aggregate.version;
    const appended = await this.store.append(
      aggregate.id,
      options.expectedVersion ?? before,
      pending.map((event) => ({
        ...this.encode(event, options.metadata),
        correlationId: options.correlationId,
        causationId: options.causationId,
      })),
    );
    markPersisted(aggregate, appended.version);
    aggregate.uncommit();
    if (this.eventBus) this.publish(pending, appended.messages);
    await this.applySnapshotPolicy(aggregate, before);
    return {
      streamId: appended.streamId,
      version: appended.version,
      firstIndex: appended.firstIndex,
      lastIndex: appended.lastIndex,
    };
  }

  /**
   * Publishes each saved event on the EventBus inside its stored message's correlation, so
   * what its handlers save is caused by it (the bus calls handlers synchronously).
   */
  private publish(events: object[], stored: StoredMessage[]): void {
    const bus = this.eventBus!;
    if (stored.length !== events.length) {
      bus.publishAll(events);
      return;
    }
    events.forEach((event, i) =>
      runWithCorrelation(correlationOf(stored[i]), () => {
        bus.publish(event);
      }),
    );
  }

  /** Snapshots the aggregate at its saved version (save its pending events first). */
  async saveSnapshot(aggregate: T): Promise<Snapshot> {
    this.assertOwn(aggregate);
    if (aggregate.getUncommittedEvents().length > 0) {
      throw new InvalidAggregateError(
        `${aggregate.id} has unsaved events; save before snapshotting`,
      );
    }
    return this.store.saveSnapshot(
      aggregate.id,
      aggregate.version,
      aggregate.toSnapshot(),
      this.snapshotSchemaVersion,
    );
  }

  /**
   * Loads fresh state, runs `command`, saves; on a version conflict does it all again
   * (`retryOnConflict`, 3 tries unless told otherwise). Returns the saved aggregate.
   */
  async update(
    streamId: string,
    command: (aggregate: T) => void | Promise<void>,
    options?: RetryOptions & SaveOptions,
  ): Promise<T> {
    return retryOnConflict(async () => {
      const aggregate = await this.load(streamId);
      await command(aggregate);
      await this.save(aggregate, {
        metadata: options?.metadata,
        correlationId: options?.correlationId,
        causationId: options?.causationId,
      });
      return aggregate;
    }, options);
  }

  /**
   * An aggregate of another tenant (or of one, through the repository of none) is refused; a
   * new one of none (`new Order(id)`, version 0) becomes this repository's tenant's.
   */
  private assertOwn(aggregate: T): void {
    if (aggregate.tenant === null && this.tenant !== null && aggregate.version === 0)
      markTenant(aggregate, this.tenant);
    if (aggregate.tenant !== this.tenant)
      throw new InvalidAggregateError(
        `${aggregate.id} is ${aggregate.tenant === null ? 'of no tenant' : `tenant ${aggregate.tenant}'s`}: save it through ${aggregate.tenant === null ? 'the repository of no tenant' : `repository.forTenant('${aggregate.tenant}')`}`,
      );
  }

  private encode(event: object, metadata: Record<string, unknown> | undefined) {
    const type = eventClassOf(event) as EventClass;
    const { eventType, schemaVersion } = requireEventMetadata(type);
    if (this.events.get(eventType)?.type !== type) {
      throw new InvalidAggregateError(
        `${this.aggregate.name} applied ${type.name}, which its @Aggregate({ events }) does not list`,
      );
    }
    return { eventType, schemaVersion, data: toEventData(event), metadata: metadata ?? null };
  }

  private replay(aggregate: T, events: RecordedEvent[]): void {
    if (events.length === 0) return;
    for (const event of events) aggregate.apply(this.decode(aggregate.id, event), true);
    markPersisted(aggregate, events[events.length - 1].version);
  }

  private decode(streamId: string, event: RecordedEvent): object {
    const known = this.events.get(event.eventType);
    if (!known)
      throw new UnknownEventTypeError(
        this.aggregate.name,
        event.eventType,
        streamId,
        event.version,
      );
    if (event.schemaVersion >= known.schemaVersion) return fromEventData(known.type, event.data);
    const { schemaVersion, data } = this.upcasters.upcast(
      event.eventType,
      event.schemaVersion,
      event.data,
      event.metadata,
      known.schemaVersion,
    );
    if (schemaVersion < known.schemaVersion)
      throw new MissingUpcasterError(event.eventType, schemaVersion, known.schemaVersion);
    return fromEventData(known.type, data);
  }

  private async applySnapshotPolicy(aggregate: T, before: number): Promise<void> {
    const every = this.snapshotEvery;
    if (every <= 0 || Math.floor(before / every) === Math.floor(aggregate.version / every)) return;
    try {
      await this.saveSnapshot(aggregate);
    } catch (error) {
      // The events are committed; a missing snapshot only costs replay time.
      this.logger.warn(
        `Snapshot of ${aggregate.id} at version ${aggregate.version} failed: ${(error as Error).message}`,
      );
    }
  }
}
