/** Table names of the event-sourcing library (the log's own live in @ordinal/log's TABLES). */
export const ES_TABLES = {
  snapshots: 'snapshots',
} as const;

/** Reflect-metadata keys the decorators write (decorators only record; nothing runs). */
export const EVENT_METADATA = Symbol('ordinal:event');
export const AGGREGATE_METADATA = Symbol('ordinal:aggregate');
export const UPCASTER_METADATA = Symbol('ordinal:upcaster');

/** Injection token of the resolved `EventSourcingOptions`. */
export const EVENT_SOURCING_OPTIONS = Symbol('EVENT_SOURCING_OPTIONS');
