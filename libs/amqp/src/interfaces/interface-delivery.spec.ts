import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FeedMessage } from '@ordinal/log';
import { HEADERS } from '../amqp.constants.js';
import { deliveryBody, deliveryProperties } from './interface-delivery.js';

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
  tenant: null,
  schemaVersion: 1,
  idempotencyKey: null,
  correlationId,
  causationId: correlationId,
  traceparent: null,
  redacted: null,
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

/** amqplib's own field-table codec: what it writes on the wire for a headers table. */
const codec = createRequire(import.meta.url)(
  join(dirname(createRequire(import.meta.url).resolve('amqplib')), 'lib', 'codec.js'),
) as { encodeTable(buffer: Buffer, table: Record<string, unknown>, offset: number): number };

/** The AMQP type tag amqplib writes for one header of the table ('l' is a signed 64-bit integer). */
function wireTag(headers: Record<string, unknown>, name: string): string {
  const buffer = Buffer.alloc(65536);
  const length = codec.encodeTable(buffer, headers, 0);
  // A table: uint32 size, then entries of shortstr name (uint8 length + bytes), a type tag, a value.
  for (let offset = 4; offset < length;) {
    const nameLength = buffer.readUInt8(offset);
    const key = buffer.toString('utf8', offset + 1, offset + 1 + nameLength);
    const tag = String.fromCharCode(buffer[offset + 1 + nameLength]);
    if (key === name) return tag;
    // Only the index is looked up; decode the rest by encoding the entry alone to learn its size.
    const entry = Buffer.alloc(65536);
    const size = codec.encodeTable(entry, { [key]: headers[key] }, 0) - 4;
    offset += size;
  }
  throw new Error(`no ${name} header`);
}

describe('deliveryProperties: the index header', () => {
  it.each([1, 127, 200, 40_000, 3_000_000_000, 2 ** 53 - 1])(
    'is a signed 64-bit integer on the wire whatever its size (index %d)',
    (id) => {
      const headers = deliveryProperties({ ...message(null), id }, null).headers as Record<
        string,
        unknown
      >;
      expect(wireTag(headers, HEADERS.index)).toBe('l');
      // And amqplib's consumers still read it as a number
      const buffer = Buffer.alloc(65536);
      const length = codec.encodeTable(buffer, headers, 0);
      const decoded = (
        codec as unknown as { decodeFields(b: Buffer): Record<string, unknown> }
      ).decodeFields(buffer.subarray(4, length));
      expect(decoded[HEADERS.index]).toBe(id);
    },
  );
});

describe('deliveryProperties: a message with personal fields (docs/personal-data.md)', () => {
  it('names the redacted pointers in a header; the body is the stored one, with the replacements', () => {
    const sealed: FeedMessage = { ...message(null), body: { email: null }, redacted: ['/email'] };
    const headers = deliveryProperties(sealed, null).headers as Record<string, unknown>;
    expect(headers[HEADERS.redacted]).toBe('["/email"]');
    expect(JSON.parse(deliveryBody(sealed).toString())).toEqual({ email: null });
    expect(
      (deliveryProperties(message(null), null).headers as Record<string, unknown>)[
        HEADERS.redacted
      ],
    ).toBeUndefined();
  });
});

describe('deliveryBody and deliveryProperties: a tombstone (docs/lifecycle.md)', () => {
  it('says so in a header and carries the tombstone, never the body, user or metadata', () => {
    // Given the position of a message of a deleted stream
    const tombstone: FeedMessage = {
      ...message('c-1'),
      userId: 'alice',
      streamId: 'order-1',
      streamVersion: 2,
      tombstone: 'deleted',
    };
    // When it is pushed
    const headers = deliveryProperties(tombstone, 'run-1').headers as Record<string, unknown>;
    const body = JSON.parse(deliveryBody(tombstone).toString()) as unknown;
    // Then the header names the reason, the index stays, and only the kept fields travel
    expect(headers[HEADERS.tombstone]).toBe('deleted');
    expect(headers[HEADERS.index]).toEqual({ '!': 'int64', value: 7 });
    expect(headers[HEADERS.userId]).toBeUndefined();
    expect(headers[HEADERS.contentHash]).toBeUndefined();
    expect(body).toEqual({
      id: 7,
      messageType: 'OrderPlaced',
      createdAt: '2026-12-01T00:00:00.000Z',
      streamId: 'order-1',
      streamVersion: 2,
      correlationId: 'c-1',
      causationId: 'c-1',
      tombstone: { reason: 'deleted' },
    });
  });
});
