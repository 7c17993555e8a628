import type { Options } from 'amqplib';
import type { FeedMessage, StoredMessage } from '@ordinal/log';
import { HEADERS } from '../amqp.constants.js';

/** The body of an interface delivery: the message's content JSON. */
export function deliveryBody(message: StoredMessage): Buffer {
  return Buffer.from(JSON.stringify(message.body));
}

/**
 * Properties of an interface delivery: persistent, headers index, messageType, userId
 * (absent when none), metadata (a JSON string, absent when none), contentHash and, for
 * replayable interfaces, this run's serverCorrelationUuid; `late: true` on a late arrival;
 * correlationId, causationId and traceparent when stored. `messageId` is the index too, the
 * AMQP `correlation_id` property the message's correlation id.
 */
/** The longest AMQP short string (a property such as correlation_id), in bytes. */
const MAX_SHORT_STRING_BYTES = 255;

export function deliveryProperties(
  message: FeedMessage,
  correlationUuid: string | null,
): Options.Publish {
  const headers: Record<string, unknown> = {
    [HEADERS.index]: message.id,
    [HEADERS.messageType]: message.messageType,
    [HEADERS.contentHash]: message.contentHash,
  };
  if (message.userId !== null) headers[HEADERS.userId] = message.userId;
  if (message.metadata !== null) headers[HEADERS.metadata] = JSON.stringify(message.metadata);
  if (correlationUuid !== null) headers[HEADERS.serverCorrelationUuid] = correlationUuid;
  if (message.late) headers[HEADERS.late] = true;
  if (message.correlationId !== null) headers[HEADERS.correlationId] = message.correlationId;
  if (message.causationId !== null) headers[HEADERS.causationId] = message.causationId;
  if (message.traceparent !== null) headers[HEADERS.traceparent] = message.traceparent;
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
