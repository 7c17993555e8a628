import type { INestApplicationContext } from '@nestjs/common';
import { SubjectErasedError, SubjectErasure } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startEventStoreContext } from '@ordinal/test-support/event-store-context';
import { Aggregate } from './aggregate.decorator.js';
import { AggregateRoot } from './aggregate-root.js';
import type { AggregateRepository } from './aggregate-repository.js';
import { aggregateRepositoryToken } from './aggregate-repository.token.js';
import { DomainEvent } from '../events/domain-event.decorator.js';

@DomainEvent('CustomerSignedUp', {
  personal: { subject: '/customerId', fields: ['/email'], replacement: { '/email': 'forgotten' } },
})
class CustomerSignedUp {
  constructor(
    readonly customerId: string,
    readonly email: string,
  ) {}
}

@Aggregate({ events: [CustomerSignedUp] })
class Customer extends AggregateRoot {
  email: string | null = null;

  signUp(email: string): void {
    this.apply(new CustomerSignedUp(this.id, email));
  }

  onCustomerSignedUp(event: CustomerSignedUp): void {
    this.email = event.email;
  }

  override toSnapshot(): unknown {
    return { email: this.email };
  }
}

describe('Personal data through the framework (@DomainEvent personal, erasure.erase)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let customers: AggregateRepository<Customer>;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startEventStoreContext(db.url, { aggregates: [Customer] });
    customers = app.get(aggregateRepositoryToken(Customer));
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('seals the declared field, loads it in clear, and after erase.erase loads the replacement without the snapshot', async () => {
    // Given a customer saved with a snapshot
    const customer = customers.create('c-9');
    customer.signUp('dora@example.com');
    await customers.save(customer);
    await customers.saveSnapshot(customer);
    // Then the log holds no clear value, and a load gets it in clear
    const rows = await db.query<{ row: string }>(
      "SELECT m::text AS row FROM messages m WHERE stream_id = 'c-9'",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].row).not.toContain('dora@example.com');
    const fresh = await customers.load('c-9');
    expect(fresh.email).toBe('dora@example.com');
    // When the subject is erased through the framework
    const result = await app.get(SubjectErasure).erase('c-9', 'test');
    expect(result.alreadyErased).toBe(false);
    // Then its snapshot is gone, and a load replays the events, which read the replacement
    expect(await db.query("SELECT 1 FROM snapshots WHERE stream_id = 'c-9'")).toHaveLength(0);
    expect((await customers.load('c-9')).email).toBe('forgotten');
    // and a new event for the subject is refused
    const again = await customers.load('c-9');
    again.signUp('dora@again.example');
    await expect(customers.save(again)).rejects.toBeInstanceOf(SubjectErasedError);
  });
});
