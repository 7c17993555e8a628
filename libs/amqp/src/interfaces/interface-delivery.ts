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
export function deliveryProperties(message: FeedMessage, correlationUuid: string | null): Options.Publish {
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
  const correlation = message.correlationId === null ? {} : { correlationId: message.correlationId };
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
