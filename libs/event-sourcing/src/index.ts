// The public door of @ordinal/event-sourcing. What only sibling libraries use is in ./internal.ts.
export * from './errors/index.js';
export type { EventSourcingOptions } from './event-sourcing-options.js';
export * from './event-sourcing.module.js';
export * from './events/domain-event.decorator.js';
export { eventMetadataOf, type EventClass } from './events/event-codec.js';
export * from './upcasting/upcaster-definition.js';
export * from './upcasting/upcaster.decorator.js';
export * from './upcasting/upcaster-registry.service.js';
export * from './aggregates/aggregate.decorator.js';
export { AggregateRoot } from './aggregates/aggregate-root.js';
export * from './aggregates/aggregate-repository.js';
export * from './aggregates/aggregate-repository.token.js';
export * from './retry/retry-on-conflict.js';
export * from './streams/stream-event.js';
export * from './streams/stream-id.js';
export * from './streams/stream-store.service.js';
export * from './streams/stream-metadata.service.js';
