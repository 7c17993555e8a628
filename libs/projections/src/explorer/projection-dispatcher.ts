import type { UpcasterRegistry } from '@ordinal/event-sourcing';
import type { StoredMessage } from '@ordinal/log';
import type { ProjectionContext } from '../projection-context.js';
import type { HandlerRoute, ProjectionDefinition } from './projection-definition.js';

/**
 * Calls a projection's handlers for one stored message: a class handler gets an instance made
 * from the upcast body (without calling the constructor), a type-name handler the raw body.
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
    const routes = this.definition.routes.get(message.messageType);
    if (!routes) return;
    const instance = this.definition.instance as Record<
      string,
      (event: unknown, ctx: ProjectionContext) => unknown
    >;
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
