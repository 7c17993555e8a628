import type { StoredMessage } from '@ordinal/log';

/** A stored message at `id` for unit tests of what carries messages (type 'A', no stream, empty body). */
export const storedMessage = (id: number, fields: Partial<StoredMessage> = {}): StoredMessage => ({
  id,
  messageType: 'A',
  userId: null,
  body: {},
  metadata: null,
  contentHash: '',
  createdAt: '',
  streamId: null,
  streamVersion: null,
  tenant: null,
  schemaVersion: 1,
  idempotencyKey: null,
  correlationId: null,
  causationId: null,
  traceparent: null,
  redacted: null,
  ...fields,
});
