import { Mailbox } from './mailbox.js';
import type { StoredMessage } from '../message.js';
import { storedMessage } from '@ordinal/test-support/stored-message';

const idOf = (item: StoredMessage | undefined) => item?.id;

const message = (id: number, messageType = 'A') => storedMessage(id, { messageType });

describe('Mailbox (R3)', () => {
  it('keeps accepted messages in order and remembers how far the router got', () => {
    // Given a mailbox that accepts type A only
    const mailbox = new Mailbox(10, 5, (m) => m.messageType === 'A');
    // When the router offers a batch with a B in it
    expect(mailbox.offer([message(11), message(12, 'B'), message(13)], 13)).toBe(true);
    // Then the A messages wait in order and the position covers the B
    expect(mailbox.seenUpTo).toBe(13);
    expect([idOf(mailbox.take()), idOf(mailbox.take()), mailbox.take()]).toEqual([
      11,
      13,
      undefined,
    ]);
  });

  it('hands the positions a read passed without a row to its feed as it is offered, before any of it is taken', () => {
    // Given a mailbox registered at 10 whose feed has taken nothing
    const marks: unknown[] = [];
    const mailbox = new Mailbox(10, 5, null, Number.POSITIVE_INFINITY, (mark) => marks.push(mark));
    // When the router offers 11 and 13 with 12 passed inside an abandoned hole
    mailbox.offer([message(11), message(13)], 13, { passed: [12], xmax: '100' });
    // Then the feed learns of 12 at once (a slow feed watches it from now), and the mailbox holds the messages only
    expect(marks).toEqual([{ passed: [12], xmax: '100' }]);
    expect([idOf(mailbox.take()), idOf(mailbox.take()), idOf(mailbox.take())]).toEqual([
      11,
      13,
      undefined,
    ]);
  });

  it('overflows instead of growing past its bound, and then refuses more', () => {
    // Given a mailbox of 3
    const mailbox = new Mailbox(0, 3, null);
    // When 4 messages are offered
    expect(
      mailbox.offer(
        [1, 2, 3, 4].map((i) => message(i)),
        4,
      ),
    ).toBe(false);
    // Then it is empty, marked overflowed, and takes nothing more
    expect(mailbox.overflowed).toBe(true);
    expect(mailbox.size).toBe(0);
    expect(mailbox.offer([message(5)], 5)).toBe(false);
  });

  it('wakes a waiter on offer and on close', async () => {
    const mailbox = new Mailbox(0, 10, null);
    const woken = mailbox.wait();
    mailbox.offer([message(1)], 1);
    await woken;
    const closing = mailbox.wait();
    mailbox.close();
    await closing;
    expect(mailbox.closed).toBe(true);
  });

  it('overflows on bytes as on messages: the message that would take it over its byte bound empties it', () => {
    // Given a mailbox of at most 100 messages and 250 bytes
    const mailbox = new Mailbox(10, 100, null, 250);
    // When two messages of 100 bytes wait, one is taken, and more come
    expect(mailbox.offer([message(11), message(12)], 12, undefined, [100, 100])).toBe(true);
    expect(mailbox.bytes).toBe(200);
    mailbox.take();
    expect(mailbox.bytes).toBe(100);
    expect(mailbox.offer([message(13)], 13, undefined, [100])).toBe(true);
    // Then the one that would hold 300 bytes overflows it: it is emptied and refuses more
    expect(mailbox.offer([message(14)], 14, undefined, [100])).toBe(false);
    expect(mailbox.overflowed).toBe(true);
    expect(mailbox.bytes).toBe(0);
    expect(mailbox.take()).toBeUndefined();
  });
});
