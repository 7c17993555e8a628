import { settleSafely } from './settle-safely.js';

describe('settleSafely', () => {
  it('skips an ack on a channel amqplib already closed', () => {
    const closed = Object.assign(new Error('Channel closed'), { name: 'IllegalOperationError' });
    expect(
      settleSafely(() => {
        throw closed;
      }),
    ).toBe(false);
  });

  it('reports an operation that went out', () => {
    let sent = 0;
    expect(settleSafely(() => void sent++)).toBe(true);
    expect(sent).toBe(1);
  });

  it('rethrows anything else', () => {
    expect(() =>
      settleSafely(() => {
        throw new TypeError('a bug');
      }),
    ).toThrow('a bug');
  });
});
