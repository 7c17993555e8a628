import 'reflect-metadata';
import { UPCASTER_METADATA } from '../event-sourcing.constants.js';

/** What `@Upcaster` records on a provider class. */
export interface UpcasterMetadata {
  eventType: string;
  fromVersion: number;
}

/**
 * Marks a provider (implementing `EventUpcaster`) as the upcaster of `eventType` from schema
 * version `fromVersion` to `fromVersion + 1`. Discovered at start; chains are applied on read.
 * Only records metadata.
 */
export function Upcaster(eventType: string, fromVersion: number): ClassDecorator {
  const metadata: UpcasterMetadata = { eventType, fromVersion };
  return (target) => Reflect.defineMetadata(UPCASTER_METADATA, metadata, target);
}
