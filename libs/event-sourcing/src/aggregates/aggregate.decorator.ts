import 'reflect-metadata';
import { AGGREGATE_METADATA } from '../event-sourcing.constants.js';
import type { EventClass } from '../events/event-codec.js';

/** Options of `@Aggregate`. */
export interface AggregateOptions {
  /** Every event class the aggregate's streams may hold (each decorated with `@DomainEvent`). */
  events: EventClass[];
  /**
   * Save a snapshot after a save crosses a multiple of this many events (Cursus suggests 500
   * as a starting point). 0 = only explicit `repository.saveSnapshot`. @default 0
   */
  snapshotEvery?: number;
  /** Schema of the snapshot state; snapshots of another schema are ignored (full replay). @default 1 */
  snapshotSchemaVersion?: number;
}

/** Describes an aggregate class: its events and snapshot policy. Only records metadata. */
export function Aggregate(options: AggregateOptions): ClassDecorator {
  return (target) => Reflect.defineMetadata(AGGREGATE_METADATA, options, target);
}
