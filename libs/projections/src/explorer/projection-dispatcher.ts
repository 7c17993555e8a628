import type { UpcasterRegistry } from '@ordinal/event-sourcing';
import type { StoredMessage, TombstoneReason } from '@ordinal/log';

/** The route of tombstones: `@EventHandler('$tombstone')` (docs/lifecycle.md). */
export const TOMBSTONE_ROUTE = '$tombstone';

/** What a `$tombstone` handler gets: the position of a hidden or erased message of a handled type. */
export interface TombstoneEvent {
  index: number;
  messageType: string;
  streamId: string | null;
  streamVersion: number | null;
  reason: TombstoneReason;
}
import type { ProjectionContext } from '../projection-context.js';
import type { HandlerRoute, ProjectionDefinition } from './projection-definition.js';

/**
 * Calls a projection's handlers for one stored message: a class handler gets an instance made
 * from the upcast body (without calling the constructor), a type-name handler the raw body. A
 * tombstone (a hidden or erased message, docs/lifecycle.md) never reaches its type's handlers:
 * it goes to the `$tombstone` handlers, if any, as a `TombstoneEvent`.
 */
export class ProjectionDispatcher {
  constructor(
    private readonly definition: ProjectionDefinition,
    private readonly upcasters: UpcasterRegistry | null,
  ) {}

  /** The stored types the projection handles. */
  get types(): string[] {
    return [...this.definition.routes.keys()];
  }

  async dispatch(message: StoredMessage, ctx: ProjectionContext): Promise<void> {
    const instance = this.definition.instance as Record<
      string,
      (event: unknown, ctx: ProjectionContext) => unknown
    >;
    if (message.tombstone !== undefined) {
      const event: TombstoneEvent = {
        index: message.id,
        messageType: message.messageType,
        streamId: message.streamId,
        streamVersion: message.streamVersion,
        reason: message.tombstone,
      };
      for (const route of this.definition.routes.get(TOMBSTONE_ROUTE) ?? [])
        await instance[route.method](event, ctx);
      return;
    }
    const routes = this.definition.routes.get(message.messageType);
    if (!routes) return;
    for (const route of routes) await instance[route.method](this.decode(message, route), ctx);
  }

  private decode(message: StoredMessage, route: HandlerRoute): unknown {
    if (!route.eventClass) return message.body;
    const data = this.upcasters
      ? this.upcasters.upcast(
          message.messageType,
          message.schemaVersion,
          message.body,
          message.metadata,
          route.schemaVersion,
        ).data
      : message.body;
    return Object.assign(Object.create(route.eventClass.prototype as object) as object, data);
  }
}
