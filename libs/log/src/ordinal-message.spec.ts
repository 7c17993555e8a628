import { MESSAGE_FIELDS } from '@ordinal/contract';
import type { StoredMessage } from './message.js';
import { storedValue, toOrdinalMessage } from './ordinal-message.js';
import { storedMessage } from '@ordinal/test-support/stored-message';

const plain: StoredMessage = storedMessage(7, {
  messageType: 'OrderPlaced',
  body: { orderId: 'o-1' },
  contentHash: 'h',
  createdAt: '2026-12-01T08:00:00.000Z',
});

describe('toOrdinalMessage', () => {
  it('keeps the always-present fields, nulls included, and leaves out unset optional ones', () => {
    // Given a message with no optional field set and a default schema version
    // When it is put in its wire shape
    const wire = toOrdinalMessage(plain);
    // Then only the required fields are there, in the contract's order
    expect(Object.keys(wire)).toEqual(
      Object.keys(MESSAGE_FIELDS).filter(
        (name) => !MESSAGE_FIELDS[name as keyof typeof MESSAGE_FIELDS].optional,
      ),
    );
    expect(wire.userId).toBeNull();
    expect(wire.metadata).toBeNull();
  });

  it('writes every field in the contract’s order when all are set', () => {
    // Given a message with every optional field set
    const full: StoredMessage = {
      ...plain,
      userId: 'u',
      metadata: { m: 1 },
      streamId: 'order-1',
      streamVersion: 3,
      tenant: 'acme',
      schemaVersion: 2,
      idempotencyKey: 'k',
      correlationId: 'c',
      causationId: '6',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      redacted: ['/email'],
    };
    // When it is put in its wire shape
    const wire = toOrdinalMessage(full);
    // Then it has every field, keys in MESSAGE_FIELDS order, values as stored
    expect(Object.keys(wire)).toEqual(Object.keys(MESSAGE_FIELDS));
    expect(wire).toEqual(full);
  });

  it('leaves out a field equal to its default, and ties streamVersion to streamId', () => {
    // Given a schema version at its default and a stream version without a stream
    const wire = toOrdinalMessage({ ...plain, schemaVersion: 1, streamVersion: 4 });
    // Then neither is on the wire
    expect(wire).not.toHaveProperty('schemaVersion');
    expect(wire).not.toHaveProperty('streamVersion');
    // And a stream message always carries its version
    const stream = toOrdinalMessage({ ...plain, streamId: 's-1', streamVersion: 1 });
    expect(stream).toMatchObject({ streamId: 's-1', streamVersion: 1 });
  });
});

describe('storedValue', () => {
  it('reads an absent optional field as its default, else null', () => {
    expect(storedValue({}, 'schemaVersion')).toBe(1);
    expect(storedValue({ schemaVersion: 3 }, 'schemaVersion')).toBe(3);
    expect(storedValue({}, 'streamId')).toBeNull();
    expect(storedValue({ streamId: 's' }, 'streamId')).toBe('s');
  });

  it('turns a wire message back into the stored message it came from', () => {
    // Given a stored message with some optional fields set
    const stored: StoredMessage = { ...plain, streamId: 's-1', streamVersion: 2, traceparent: 't' };
    // When it goes to the wire and each field is read back
    const wire = toOrdinalMessage(stored);
    const back = Object.fromEntries(
      Object.keys(MESSAGE_FIELDS).map((name) => [
        name,
        storedValue(wire, name as keyof typeof MESSAGE_FIELDS),
      ]),
    );
    // Then it is the same message
    expect(back).toEqual(stored);
  });
});
