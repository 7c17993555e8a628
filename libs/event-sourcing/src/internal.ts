/** `@ordinal/event-sourcing/internal`: for Ordinal's sibling libraries and server only; not a public API. */
export { ES_TABLES, EVENT_SOURCING_OPTIONS } from './event-sourcing.constants.js';
export { EVENT_SOURCING_RAW_OPTIONS } from './event-sourcing.module-definition.js';
export {
  resolveEventSourcingOptions,
  type ResolvedEventSourcingOptions,
} from './event-sourcing-options.js';
export { assertExpectedVersion, assertVersion } from './streams/versions.js';
export { EVENT_SOURCING_MIGRATIONS } from './migrations/index.js';
export { AGGREGATE_METADATA } from './event-sourcing.constants.js';
export { eventClassOf, requireEventMetadata, toEventData } from './events/event-codec.js';
export { markPersisted } from './aggregates/aggregate-root.js';
