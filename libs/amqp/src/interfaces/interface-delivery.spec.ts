import type { FeedMessage } from '@ordinal/log';
import { HEADERS } from '../amqp.constants.js';
import { deliveryProperties } from './interface-delivery.js';

const message = (correlationId: string | null): FeedMessage => ({
  id: 7,
  messageType: 'OrderPlaced',
  userId: null,
  body: {},
  metadata: null,
  contentHash: 'h',
  createdAt: '2026-12-01T00:00:00.000Z',
  streamId: null,
  streamVersion: null,
  schemaVersion: 1,
  idempotencyKey: null,
  correlationId,
  causationId: correlationId,
  traceparent: null,
});

describe('deliveryProperties: the correlation of a pushed message', () => {
  it('sets the AMQP correlation_id and the header', () => {
    const properties = deliveryProperties(message('order-1'), null);
    expect(properties.correlationId).toBe('order-1');
    expect(
      (properties.headers as Record<string, unknown> | undefined)?.[HEADERS.correlationId],
    ).toBe('order-1');
  });

  it('keeps an id longer than an AMQP short string (255 bytes) in the header only, so the frame stays valid', () => {
    // 100 characters, 300 bytes in UTF-8: accepted by the log (1-200 characters), too long for the property
    const id = '€'.repeat(100);
    const properties = deliveryProperties(message(id), null);
    expect(properties.correlationId).toBeUndefined();
    expect(
      (properties.headers as Record<string, unknown> | undefined)?.[HEADERS.correlationId],
    ).toBe(id);
    // 255 bytes still fit
    expect(deliveryProperties(message('a'.repeat(200)), null).correlationId).toBe('a'.repeat(200));
  });
});
