import type { Options } from 'amqplib';
import { toOrdinalRecord, type FeedMessage, type StoredMessage } from '@ordinal/log';
import { HEADERS } from '../amqp.constants.js';

/**
 * The body of an interface delivery: the message's content JSON; for a tombstone (a hidden or
 * erased message, docs/lifecycle.md) the tombstone's JSON, `{id, messageType, …, tombstone}`.
 */
export function deliveryBody(message: StoredMessage): Buffer {
  return Buffer.from(
    JSON.stringify(message.tombstone === undefined ? message.body : toOrdinalRecord(message)),
  );
}

/**
 * Properties of an interface delivery: persistent, headers index (a signed 64-bit integer), messageType, userId
 * (absent when none), metadata (a JSON string, absent when none), contentHash and, for
 * replayable interfaces, this run's serverCorrelationUuid; `late: true` on a late arrival;
 * correlationId, causationId and traceparent when stored; `redacted` (a JSON array of pointers)
 * on a message with personal fields, whose body holds their replacements. `messageId` is the index too, the
 * AMQP `correlation_id` property the message's correlation id.
 */
/** The longest AMQP short string (a property such as correlation_id), in bytes. */
const MAX_SHORT_STRING_BYTES = 255;

export function deliveryProperties(
  message: FeedMessage,
  correlationUuid: string | null,
): Options.Publish {
  const headers: Record<string, unknown> = {
    // Always a signed 64-bit integer ('l'): amqplib picks the narrowest type for a bare number
    // (int8 for small indices), and a Java or .NET consumer would get Byte, Short, Integer or Long.
    [HEADERS.index]: { '!': 'int64', value: message.id },
    [HEADERS.messageType]: message.messageType,
  };
  // A tombstone says so (its reason) and keeps only the tombstone's fields.
  if (message.tombstone !== undefined) headers[HEADERS.tombstone] = message.tombstone;
  else {
    headers[HEADERS.contentHash] = message.contentHash;
    if (message.userId !== null) headers[HEADERS.userId] = message.userId;
    if (message.metadata !== null) headers[HEADERS.metadata] = JSON.stringify(message.metadata);
    if (message.redacted) headers[HEADERS.redacted] = JSON.stringify(message.redacted);
  }
  if (correlationUuid !== null) headers[HEADERS.serverCorrelationUuid] = correlationUuid;
  if (message.late) headers[HEADERS.late] = true;
  if (message.correlationId !== null) headers[HEADERS.correlationId] = message.correlationId;
  if (message.causationId !== null) headers[HEADERS.causationId] = message.causationId;
  if (message.traceparent !== null && message.tombstone === undefined)
    headers[HEADERS.traceparent] = message.traceparent;
  // AMQP's correlation_id is a short string (at most 255 bytes; amqplib would write a longer
  // one's length modulo 256, a frame the broker refuses): a longer id travels in the header alone.
  const correlation =
    message.correlationId === null ||
    Buffer.byteLength(message.correlationId) > MAX_SHORT_STRING_BYTES
      ? {}
      : { correlationId: message.correlationId };
  return {
    ...correlation,
    persistent: true,
    mandatory: true,
    contentType: 'application/json',
    messageId: String(message.id),
    type: message.messageType,
    timestamp: Math.floor(Date.parse(message.createdAt) / 1000),
    headers,
  };
}
