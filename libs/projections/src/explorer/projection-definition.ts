import { eventMetadataOf, type EventClass } from '@ordinal/event-sourcing';
import { InvalidProjectionError } from '../errors/index.js';
import { handledEventsOf } from '../decorators/event-handler.decorator.js';
import type { ProjectionMetadata } from '../projection-options.js';

/** One handler of one stored type. */
export interface HandlerRoute {
  method: string;
  /** Decode into this class (after upcasting), or hand over the raw body when null. */
  eventClass: EventClass | null;
  /** The schema version the class is written with (upcast target). */
  schemaVersion: number;
}

/** A discovered projection: its name, options and handlers by stored type. */
export interface ProjectionDefinition extends ProjectionMetadata {
  instance: object;
  routes: Map<string, HandlerRoute[]>;
}

/**
 * Builds a projection's definition from its methods' `@EventHandler` metadata. Throws an
 * InvalidProjectionError for a malformed handler; reports duplicates through `warn`.
 */
export function defineProjection(
  metadata: ProjectionMetadata,
  instance: object,
  methodNames: string[],
  warn: (message: string) => void,
): ProjectionDefinition {
  const { name } = metadata;
  if (typeof name !== 'string' || name.trim() === '' || name.length > 200) {
    throw new InvalidProjectionError(
      `${instance.constructor.name} has @Projection(${JSON.stringify(name)}); give it a name of 1-200 characters`,
    );
  }
  const { version, promoteAtLag } = metadata.options;
  if (version !== undefined && (!Number.isInteger(version) || version < 1 || version > 1_000_000)) {
    throw new InvalidProjectionError(
      `Projection '${name}' has version: ${String(version)}; use a whole number from 1 (the default) up`,
    );
  }
  if (
    promoteAtLag !== undefined &&
    promoteAtLag !== false &&
    (!Number.isInteger(promoteAtLag) || promoteAtLag < 0)
  ) {
    throw new InvalidProjectionError(
      `Projection '${name}' has promoteAtLag: ${String(promoteAtLag)}; use a whole number of events (0 by default) or false to promote by hand`,
    );
  }
  if (version !== undefined && version > 1 && !metadata.options.readModels?.length) {
    throw new InvalidProjectionError(
      `Projection '${name}' has version ${version} but no readModels: a version's tables live in its own schema and readers get them through views named after its entities' tables, so name its entities in readModels (and create their tables in createTables(manager) if their shape changed)`,
    );
  }
  if (metadata.options.tenantIsolation && version !== undefined && version > 1) {
    throw new InvalidProjectionError(
      `Projection '${name}' has tenantIsolation and version ${version}: a version's tables are made in a schema of its own, which the tenant wall does not cover yet; keep tenantIsolation to version 1 (rebuilds run in place)`,
    );
  }
  const routes = new Map<string, HandlerRoute[]>();
  for (const method of methodNames) {
    const fn = (instance as Record<string, unknown>)[method];
    for (const event of handledEventsOf(fn)) {
      const route = toRoute(name, method, event);
      const list = routes.get(route.type) ?? [];
      if (list.length > 0)
        warn(
          `Projection '${name}': ${method}() and ${list.map((r) => r.method + '()').join(', ')} both handle '${route.type}'; all of them run, in declaration order`,
        );
      list.push({ method, eventClass: route.eventClass, schemaVersion: route.schemaVersion });
      routes.set(route.type, list);
    }
  }
  if (routes.size === 0) {
    throw new InvalidProjectionError(
      `Projection '${name}' (${instance.constructor.name}) has no @EventHandler methods; add one, e.g. @EventHandler(OrderPlaced) onPlaced(event, ctx)`,
    );
  }
  return { ...metadata, instance, routes };
}

function toRoute(
  projection: string,
  method: string,
  event: unknown,
): HandlerRoute & { type: string } {
  if (typeof event === 'string') {
    if (event.trim() === '')
      throw new InvalidProjectionError(
        `Projection '${projection}': @EventHandler('') on ${method}(); name a stored message type`,
      );
    return { type: event, method, eventClass: null, schemaVersion: Number.MAX_SAFE_INTEGER };
  }
  if (typeof event === 'function') {
    const eventClass = event as EventClass;
    const metadata = eventMetadataOf(eventClass);
    if (!metadata) {
      throw new InvalidProjectionError(
        `Projection '${projection}': @EventHandler(${event.name}) on ${method}() names a class without @DomainEvent; decorate ${event.name} with @DomainEvent('${event.name}') or pass the type name as a string`,
      );
    }
    return {
      type: metadata.eventType,
      method,
      eventClass,
      schemaVersion: metadata.schemaVersion,
    };
  }
  throw new InvalidProjectionError(
    `Projection '${projection}': @EventHandler(${String(event)}) on ${method}() is neither an event class nor a type name`,
  );
}
