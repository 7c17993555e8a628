import 'reflect-metadata';
import type { PersonalDataRule } from '@ordinal/log';
import { EVENT_METADATA } from '../event-sourcing.constants.js';

/** What `@DomainEvent` records on an event class. */
export interface EventMetadata {
  /** The stored `message_type`: stable across renames of the class. */
  eventType: string;
  /** The schema version new events of this class are written with. */
  schemaVersion: number;
  /** Its personal data (docs/personal-data.md), when it holds any. */
  personal?: PersonalDataRule;
}

/** Options of `@DomainEvent`. */
export interface DomainEventOptions {
  /** @default 1 */
  schemaVersion?: number;
  /**
   * Which of its fields are personal data, and whose, as JSON pointers into its data:
   * `{subject: '/customerId', fields: ['/email'], replacement: {'/email': null}}`. They are
   * stored sealed under the subject's key, read in clear by loads, and forgotten by an erasure
   * (docs/personal-data.md).
   */
  personal?: PersonalDataRule;
}

/**
 * Registers an event class under a stored name and a schema version:
 * `@DomainEvent('OrderPlaced', { schemaVersion: 2 })`. The class's own enumerable properties
 * are its data; on read an instance is made without calling the constructor.
 * Only records metadata.
 */
export function DomainEvent(eventType: string, options: DomainEventOptions = {}): ClassDecorator {
  const metadata: EventMetadata = {
    eventType,
    schemaVersion: options.schemaVersion ?? 1,
    ...(options.personal ? { personal: options.personal } : {}),
  };
  return (target) => Reflect.defineMetadata(EVENT_METADATA, metadata, target);
}

/** `@Event` is `@DomainEvent` under the name the issue uses. */
export const Event = DomainEvent;
