import { toPosition } from '@ordinal/pg';
import type { SealedFields } from '@ordinal/log';
import type { RecordedEvent, StreamEvent } from '../streams/stream-event.js';

/**
 * A page of events comes back as one JSON array of arrays (`json_agg`), so the driver parses
 * one value per page instead of seven columns per row: most of a load's client-side cost.
 * `details` adds the global index and the creation time (REST reads); loads skip them.
 */
export function streamEventJson(details: boolean): string {
  // `personal` last: the sealed personal fields (docs/personal-data.md), null for most events.
  return details
    ? 'json_build_array(stream_version, message_type, schema_version, body, metadata, index, created_at, personal)'
    : 'json_build_array(stream_version, message_type, schema_version, body, metadata, personal)';
}

type EventTuple = [
  number,
  string,
  number,
  unknown,
  Record<string, unknown> | null,
  (number | SealedFields | null)?,
  string?,
  (SealedFields | null)?,
];

/** The sealed personal fields, when the event has any (else nothing: the common shape). */
const sealedOf = (personal: unknown) =>
  personal ? { personal: personal as SealedFields } : undefined;

/** The one mapper of stream pages: positions through `toPosition`. */
export function toRecordedEvents(tuples: EventTuple[]): RecordedEvent[] {
  return tuples.map((t) => ({
    version: toPosition(t[0]),
    eventType: t[1],
    schemaVersion: t[2],
    data: t[3],
    metadata: t[4],
    ...sealedOf(t[5]),
  }));
}

/** Like `toRecordedEvents`, with the index and creation time of `details` pages. */
export function toStreamEvents(tuples: EventTuple[]): StreamEvent[] {
  return tuples.map((t) => ({
    version: toPosition(t[0]),
    index: toPosition(t[5] as number),
    eventType: t[1],
    schemaVersion: t[2],
    data: t[3],
    metadata: t[4],
    createdAt: new Date(t[6]!).toISOString(),
    ...(t[7] ? { personal: t[7], redacted: t[7].fields } : {}),
  }));
}

export type { EventTuple };
