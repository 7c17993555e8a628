import { RenderedMessage, toStoredMessage, type MessageRow } from './row-mapper.js';

/** The largest integer a JSON number holds exactly (2^53 - 1), and the first ones it does not. */
const MAX_EXACT = '9007199254740991';
const TWO_TO_53 = '9007199254740992';
const ABOVE = '9007199254740993';

const row = (over: Partial<MessageRow>): MessageRow => ({
  index: '1',
  message_type: 'OrderPlaced',
  user_id: null,
  body: { n: 1 },
  metadata: null,
  content_hash: 'h',
  created_at: '2026-01-01T00:00:00.000Z',
  stream_id: 'order-1',
  stream_version: '1',
  schema_version: 1,
  idempotency_key: null,
  correlation_id: null,
  causation_id: null,
  trace_parent: null,
  ...over,
});

describe('the row mapper (pg returns int8 as text)', () => {
  it('maps indices and versions below 2^53 to the exact number', () => {
    // Given a row at the largest exact index and version
    const message = toStoredMessage(row({ index: MAX_EXACT, stream_version: MAX_EXACT }));
    // Then both are that number, digit for digit
    expect(String(message.id)).toBe(MAX_EXACT);
    expect(String(message.streamVersion)).toBe(MAX_EXACT);
    expect(String(new RenderedMessage({ ...row({}), index: MAX_EXACT, json: '{}' }).id)).toBe(
      MAX_EXACT,
    );
  });

  it.each([TWO_TO_53, ABOVE, '18446744073709551615'])(
    'refuses index %s instead of rounding it',
    (index) => {
      // Given a row whose index a JSON number cannot hold exactly
      // Then reading it throws, naming the position (a rounded index would name another message)
      expect(() => toStoredMessage(row({ index }))).toThrow(`Position ${index} is not exact`);
      expect(() => new RenderedMessage({ ...row({}), index, json: '{}' })).toThrow(
        `Position ${index} is not exact`,
      );
    },
  );

  it('refuses a stream version above 2^53 instead of rounding it', () => {
    // Given a row whose stream version a JSON number cannot hold exactly
    // Then reading it throws, naming the version
    expect(() => toStoredMessage(row({ stream_version: ABOVE }))).toThrow(
      `Position ${ABOVE} is not exact`,
    );
  });
});
