import 'reflect-metadata';
import { EVENT_METADATA } from '../event-sourcing.constants.js';
import { InvalidAggregateError } from '../errors/index.js';
import type { EventMetadata } from './domain-event.decorator.js';

/** An event class (constructor arguments are free; reads do not call it). */
export type EventClass<E extends object = object> = abstract new (...args: never[]) => E;

/** The `@DomainEvent` metadata of a class, or null when it has none. */
export function eventMetadataOf(type: EventClass): EventMetadata | null {
  return (Reflect.getMetadata(EVENT_METADATA, type) as EventMetadata | undefined) ?? null;
}

/** The metadata of an event class; throws naming the class when it is not decorated. */
export function requireEventMetadata(type: EventClass): EventMetadata {
  const metadata = eventMetadataOf(type);
  if (!metadata)
    throw new InvalidAggregateError(
      `${type.name} is not an event class: decorate it with @DomainEvent('${type.name}')`,
    );
  return metadata;
}

/** The class an event is an instance of (undefined for an object without a prototype). */
export function eventClassOf(event: object): EventClass | undefined {
  return (Object.getPrototypeOf(event) as object | null)?.constructor as EventClass | undefined;
}

/** The data stored for an event: its own enumerable properties. */
export function toEventData(event: object): Record<string, unknown> {
  return { ...(event as Record<string, unknown>) };
}

/** An instance of `type` holding `data`, made without calling the constructor. */
export function fromEventData<E extends object>(type: EventClass<E>, data: unknown): E {
  return Object.assign(Object.create(type.prototype as object) as E, data);
}
