import { InvalidMessageError } from '../errors/index.js';
import { hasNulEscape, isStorableText } from '@ordinal/pg';
import { rowsJson } from '../sql/insert-messages.sql.js';
import { createHash } from 'node:crypto';
import { prepareMessage } from './pending-append.js';

describe('prepareMessage', () => {
  it('serialises body and metadata once and hashes the body', () => {
    const prepared = prepareMessage({ messageType: 'A', body: { k: 1 }, metadata: { m: true } });
    expect(prepared.bodyJson).toBe('{"k":1}');
    expect(prepared.hash).toBe(createHash('sha256').update('{"k":1}').digest('hex'));
    expect(prepared.metadataJson).toBe('{"m":true}');
    expect(prepared.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(prepareMessage({ messageType: 'A', body: { k: 1 } }).hash).toBe(prepared.hash);
  });

  it('refuses a NUL character in the content or the metadata with InvalidMessageError, naming which', () => {
    expect(() => prepareMessage({ messageType: 'A', body: { s: 'a\u0000b' } })).toThrow(
      InvalidMessageError,
    );
    expect(() => prepareMessage({ messageType: 'A', body: { s: 'a\u0000b' } })).toThrow(/content/);
    expect(() => prepareMessage({ messageType: 'A', body: {}, metadata: { s: '\u0000' } })).toThrow(
      /metadata/,
    );
  });

  it('tells an escaped NUL from an escaped backslash followed by u0000', () => {
    expect(hasNulEscape(JSON.stringify({ s: '\u0000' }))).toBe(true);
    expect(hasNulEscape(JSON.stringify({ s: '\\u0000' }))).toBe(false);
    expect(hasNulEscape(JSON.stringify({ s: '\\\u0000' }))).toBe(true);
    expect(hasNulEscape(JSON.stringify({ s: '\\u0000', t: '\u0000' }))).toBe(true);
    expect(hasNulEscape(null)).toBe(false);
  });

  it('refuses text fields PostgreSQL cannot store as given, and a missing or non-string type', () => {
    expect(() => prepareMessage({ messageType: 'A', userId: 'x\ud800', body: {} })).toThrow(
      /userId/,
    );
    expect(() => prepareMessage({ messageType: 'A', idempotencyKey: 'k\u0000', body: {} })).toThrow(
      /idempotencyKey/,
    );
    expect(() => prepareMessage({ messageType: undefined as unknown as string, body: {} })).toThrow(
      /messageType is required/,
    );
    expect(() => prepareMessage({ messageType: 7 as unknown as string, body: {} })).toThrow(
      /messageType must be a string/,
    );
    expect(() => prepareMessage({ messageType: 'A', body: undefined })).toThrow(
      /content must be JSON/,
    );
    expect(() => prepareMessage({ messageType: 'A', userId: 'emoji 😀', body: {} })).not.toThrow();
  });
});

describe('isStorableText', () => {
  it('accepts paired surrogates and refuses NUL and unpaired ones', () => {
    expect(isStorableText('plain ✓ 😀')).toBe(true);
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText('\ud83d')).toBe(false);
    expect(isStorableText('\ude00x')).toBe(false);
    expect(isStorableText('x\ud83d\ude00')).toBe(true);
  });
});

describe('rowsJson', () => {
  it('writes valid JSON with nulls for missing values and bodies as they are', () => {
    const text = rowsJson({
      index: [1],
      messageType: ['A "quoted" \\ type'],
      userId: [undefined as unknown as null],
      streamId: [null],
      streamVersion: [null],
      category: [null],
      body: ['{"k":[1,"\\u0000 text"]}'],
      metadata: [null],
      schemaVersion: [1],
      contentHash: ['h'],
      idempotencyKey: [null],
      correlationId: ['c-1'],
      causationId: [null],
      traceparent: [null],
    });
    expect(JSON.parse(text)).toEqual([
      {
        message_type: 'A "quoted" \\ type',
        user_id: null,
        stream_id: null,
        stream_version: null,
        category: null,
        body: { k: [1, '\u0000 text'] },
        metadata: null,
        schema_version: 1,
        content_hash: 'h',
        idempotency_key: null,
        correlation_id: 'c-1',
        causation_id: null,
        trace_parent: null,
        personal: null,
        tenant: null,
      },
    ]);
  });
});
