import 'reflect-metadata';
import type { EventClass } from '@ordinal/event-sourcing';
import { EVENT_HANDLER_METADATA } from '../projections.constants.js';

/** An event a handler takes: an `@DomainEvent` class (decoded, upcast) or a stored type name (raw body). */
export type HandledEvent = EventClass | string;

/**
 * Marks a projection method as the handler of an event: `@EventHandler(OrderPlaced)` gets an
 * instance of the class (upcast to its schema version), `@EventHandler('OrderPlaced')` the raw
 * stored body; both get the `ProjectionContext` second. Repeatable. Only records metadata.
 */
export function EventHandler(...events: HandledEvent[]): MethodDecorator {
  return (target, key, descriptor) => {
    const method = descriptor.value as object;
    const existing =
      (Reflect.getMetadata(EVENT_HANDLER_METADATA, method) as HandledEvent[] | undefined) ?? [];
    Reflect.defineMetadata(EVENT_HANDLER_METADATA, [...existing, ...events], method);
  };
}

/** The events recorded on a method, or none. */
export function handledEventsOf(method: unknown): HandledEvent[] {
  if (typeof method !== 'function') return [];
  return (Reflect.getMetadata(EVENT_HANDLER_METADATA, method) as HandledEvent[] | undefined) ?? [];
}
