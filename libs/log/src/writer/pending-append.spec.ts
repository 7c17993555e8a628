import { InvalidMessageError } from '../errors/index.js';
import { hasNulEscape } from '../jsonb-text.js';
import { prepareMessage } from './pending-append.js';

describe('prepareMessage', () => {
  it('serialises body and metadata once and hashes the body', () => {
    const prepared = prepareMessage({ messageType: 'A', body: { k: 1 }, metadata: { m: true } });
    expect(prepared.bodyJson).toBe('{"k":1}');
    expect(prepared.metadataJson).toBe('{"m":true}');
    expect(prepared.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(prepareMessage({ messageType: 'A', body: { k: 1 } }).hash).toBe(prepared.hash);
  });

  it('refuses a NUL character in the content or the metadata with InvalidMessageError, naming which', () => {
    expect(() => prepareMessage({ messageType: 'A', body: { s: 'a\u0000b' } })).toThrow(InvalidMessageError);
    expect(() => prepareMessage({ messageType: 'A', body: { s: 'a\u0000b' } })).toThrow(/content/);
    expect(() => prepareMessage({ messageType: 'A', body: {}, metadata: { s: '\u0000' } })).toThrow(/metadata/);
  });

  it('tells an escaped NUL from an escaped backslash followed by u0000', () => {
    expect(hasNulEscape(JSON.stringify({ s: '\u0000' }))).toBe(true);
    expect(hasNulEscape(JSON.stringify({ s: '\\u0000' }))).toBe(false);
    expect(hasNulEscape(JSON.stringify({ s: '\\\u0000' }))).toBe(true);
    expect(hasNulEscape(JSON.stringify({ s: '\\u0000', t: '\u0000' }))).toBe(true);
    expect(hasNulEscape(null)).toBe(false);
  });
});
