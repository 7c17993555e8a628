import { AggregateRoot as CqrsAggregateRoot, type IEvent } from '@nestjs/cqrs';
import { eventClassOf, eventMetadataOf } from '../events/event-codec.js';

/** Where the repository keeps the persisted version (a symbol: never part of a snapshot). */
export const PERSISTED_VERSION = Symbol('ordinal:persistedVersion');

/** Where the repository keeps the aggregate's tenant (a symbol: never part of a snapshot). */
const TENANT = Symbol('ordinal:tenant');

/**
 * An event-sourced aggregate on the log, building on @nestjs/cqrs's `AggregateRoot`:
 * command methods call `this.apply(new OrderPlaced(...))`, handlers are `onOrderPlaced(event)`
 * (named after the `@DomainEvent` type, else the class name). Subclasses take the stream id
 * as their only constructor argument.
 *
 * Snapshots use `toSnapshot()`/`restoreSnapshot()`: by default the aggregate's own enumerable
 * properties as JSON except `id`; override both for Maps, Dates or private state.
 */
export abstract class AggregateRoot<
  EventBase extends IEvent = IEvent,
> extends CqrsAggregateRoot<EventBase> {
  private [PERSISTED_VERSION] = 0;
  private [TENANT]: string | null = null;

  constructor(readonly id: string) {
    super();
  }

  /** The stream version this instance was loaded or last saved at (0 = new): the expected version of the next save. */
  get version(): number {
    return this[PERSISTED_VERSION];
  }

  /**
   * The tenant whose stream this aggregate is (docs/tenants.md): the tenant of the repository
   * view (`repository.forTenant(tenant)`) that created or loaded it; null for none. `id` is
   * the tenant's plain stream id.
   */
  get tenant(): string | null {
    return this[TENANT];
  }

  /** The state to snapshot (JSON). */
  toSnapshot(): unknown {
    const { id: _id, ...state } = JSON.parse(JSON.stringify(this)) as Record<string, unknown>;
    return state;
  }

  /** Restores the state `toSnapshot` returned. */
  restoreSnapshot(state: unknown): void {
    Object.assign(this, state);
  }

  protected override getEventName(event: object): string {
    const type = eventClassOf(event);
    return (type && eventMetadataOf(type)?.eventType) ?? super.getEventName(event);
  }
}

/** Sets the tenant (the repository's only way in; not part of the public API). */
export function markTenant(aggregate: AggregateRoot, tenant: string | null): void {
  (aggregate as unknown as Record<symbol, string | null>)[TENANT] = tenant;
}

/** Sets the persisted version (the repository's only way in; not part of the public API). */
export function markPersisted(aggregate: AggregateRoot, version: number): void {
  (aggregate as unknown as Record<symbol, number>)[PERSISTED_VERSION] = version;
}
