import { toPosition } from '@ordinal/pg';
import type { RecordedEvent, StreamEvent } from '../streams/stream-event.js';

/**
 * A page of events comes back as one JSON array of arrays (`json_agg`), so the driver parses
 * one value per page instead of seven columns per row: most of a load's client-side cost.
 * `details` adds the global index and the creation time (REST reads); loads skip them.
 */
export function streamEventJson(details: boolean): string {
  return details
    ? 'json_build_array(stream_version, message_type, schema_version, body, metadata, index, created_at)'
    : 'json_build_array(stream_version, message_type, schema_version, body, metadata)';
}

type EventTuple = [
  number,
  string,
  number,
  unknown,
  Record<string, unknown> | null,
  number?,
  string?,
];

/** The one mapper of stream pages: positions through `toPosition`. */
export function toRecordedEvents(tuples: EventTuple[]): RecordedEvent[] {
  return tuples.map((t) => ({
    version: toPosition(t[0]),
    eventType: t[1],
    schemaVersion: t[2],
    data: t[3],
    metadata: t[4],
  }));
}

/** Like `toRecordedEvents`, with the index and creation time of `details` pages. */
export function toStreamEvents(tuples: EventTuple[]): StreamEvent[] {
  return tuples.map((t) => ({
    version: toPosition(t[0]),
    index: toPosition(t[5]),
    eventType: t[1],
    schemaVersion: t[2],
    data: t[3],
    metadata: t[4],
    createdAt: new Date(t[6]!).toISOString(),
  }));
}

export type { EventTuple };
