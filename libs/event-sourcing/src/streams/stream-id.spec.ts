import { isValidStreamId } from './stream-id.js';
import { assertExpectedVersion, assertVersion } from './versions.js';

describe('stream ids and versions', () => {
  it.each(['order-123', 'order', 'a', 'Order_1.v2:x@y-z', 'x'.repeat(200)])('accepts %s', (id) => {
    expect(isValidStreamId(id)).toBe(true);
  });

  it.each(['', '-order', 'order 1', 'order/1', 'ordér-1', 'x'.repeat(201), 'a\u0000b'])(
    'rejects %j',
    (id) => {
      expect(isValidStreamId(id)).toBe(false);
    },
  );

  it('accepts expected versions >= 0, any and no_stream only', () => {
    for (const ok of [0, 1, 42, 'any', 'no_stream'] as const)
      expect(() => assertExpectedVersion(ok)).not.toThrow();
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53])
      expect(() => assertExpectedVersion(bad)).toThrow(
        // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- Jest types asymmetric matchers as any
        expect.objectContaining({ code: 'invalid_version' }),
      );
  });

  it('accepts versions >= 1 only', () => {
    expect(() => assertVersion('v', 1)).not.toThrow();
    for (const bad of [0, -3, 2.5])
      expect(() => assertVersion('v', bad)).toThrow(
        // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- Jest types asymmetric matchers as any
        expect.objectContaining({ code: 'invalid_version' }),
      );
  });
});
