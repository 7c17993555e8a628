import fc from 'fast-check';
import { DeliveryLedger } from './delivery-ledger.js';

describe('DeliveryLedger', () => {
  it('acknowledges up to the first delivery still pending', () => {
    // Given deliveries 1..5, of which 1, 2 and 4 are appended and 3 is pending
    const ledger = new DeliveryLedger();
    for (let tag = 1; tag <= 5; tag++) ledger.add(tag);
    ledger.done(1);
    ledger.done(2);
    ledger.done(4);
    // When the ackable run is taken
    // Then it stops before 3
    expect(ledger.takeAckable()).toBe(2);
    expect(ledger.takeAckable()).toBeNull();
    // And when 3 is requeued on its own, the run continues past it to 4
    ledger.settled(3);
    expect(ledger.takeAckable()).toBe(4);
    expect(ledger.outstanding).toBe(1);
  });

  it('never covers a pending delivery, whatever the completion order (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 60 }), fc.constantFrom('done', 'settled')), {
          maxLength: 120,
        }),
        (events) => {
          // Given 60 deliveries finishing in a random order
          const ledger = new DeliveryLedger();
          for (let tag = 1; tag <= 60; tag++) ledger.add(tag);
          const finished = new Map<number, string>();
          let acked = 0;
          for (const [tag, how] of events) {
            if (finished.has(tag)) continue;
            finished.set(tag, how);
            if (how === 'done') ledger.done(tag);
            else ledger.settled(tag);
            // When the ackable run is taken
            const upTo = ledger.takeAckable();
            if (upTo === null) continue;
            // Then every delivery it covers has finished, and it was appended
            for (let t = 1; t <= upTo; t++) expect(finished.has(t)).toBe(true);
            expect(finished.get(upTo)).toBe('done');
            expect(upTo).toBeGreaterThan(acked);
            acked = upTo;
          }
        },
      ),
    );
  });
});
