import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startEventStoreContext } from '@ordinal/test-support/event-store-context';
import { Aggregate } from '../aggregates/aggregate.decorator.js';
import { AggregateRoot } from '../aggregates/aggregate-root.js';
import type { AggregateRepository } from '../aggregates/aggregate-repository.js';
import { aggregateRepositoryToken } from '../aggregates/aggregate-repository.token.js';
import { DomainEvent } from '../events/domain-event.decorator.js';
import { StreamStore } from '../streams/stream-store.service.js';
import { Upcaster } from './upcaster.decorator.js';
import type { EventUpcaster } from './upcaster-definition.js';

/** v1 {name}, v2 {name, email}, v3 {firstName, lastName, email}. */
@DomainEvent('CustomerRegistered', { schemaVersion: 3 })
class CustomerRegistered {
  constructor(
    readonly firstName: string,
    readonly lastName: string,
    readonly email: string,
  ) {}
}

/** A class whose v1 → v2 step has no upcaster. */
@DomainEvent('CustomerMoved', { schemaVersion: 2 })
class CustomerMoved {
  constructor(
    readonly city: string,
    readonly country: string,
  ) {}
}

@Injectable()
@Upcaster('CustomerRegistered', 1)
class CustomerRegisteredV1 implements EventUpcaster {
  upcast(data: { name: string }) {
    return { ...data, email: 'unknown' };
  }
}

@Aggregate({ events: [CustomerRegistered, CustomerMoved] })
class Customer extends AggregateRoot {
  firstName = '';
  lastName = '';
  email = '';
  city = '';

  onCustomerRegistered(event: CustomerRegistered): void {
    if (!(event instanceof CustomerRegistered)) throw new Error('handler got a plain object');
    this.firstName = event.firstName;
    this.lastName = event.lastName;
    this.email = event.email;
  }

  onCustomerMoved(event: CustomerMoved): void {
    this.city = event.city;
  }
}

describe('Upcasters (A4)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let customers: AggregateRepository<Customer>;
  let store: StreamStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startEventStoreContext(db.url, {
      aggregates: [Customer],
      // v1 → v2 is a discovered @Upcaster provider; v2 → v3 a plain definition in the options
      upcasters: [CustomerRegisteredV1],
      eventSourcing: {
        upcasters: [
          {
            eventType: 'CustomerRegistered',
            fromVersion: 2,
            upcast: (data: { name: string; email: string }) => {
              const [firstName, ...rest] = data.name.split(' ');
              return { firstName, lastName: rest.join(' '), email: data.email };
            },
          },
        ],
      },
    });
    customers = app.get(aggregateRepositoryToken(Customer));
    store = app.get(StreamStore);
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('applies the chain v1 → v2 → v3 on read and leaves the stored row unchanged', async () => {
    // Given a v1 and a v2 event stored by older code
    await store.append('customer-1', 0, [
      { eventType: 'CustomerRegistered', schemaVersion: 1, data: { name: 'Ada King Lovelace' } },
    ]);
    await store.append('customer-2', 0, [
      {
        eventType: 'CustomerRegistered',
        schemaVersion: 2,
        data: { name: 'Alan Turing', email: 'alan@example.com' },
      },
    ]);
    const before = await db.query(
      'SELECT body, schema_version FROM messages WHERE stream_id = $1',
      ['customer-1'],
    );
    // When they load
    const ada = await customers.load('customer-1');
    const alan = await customers.load('customer-2');
    // Then the aggregate sees v3 events
    expect(ada).toMatchObject({ firstName: 'Ada', lastName: 'King Lovelace', email: 'unknown' });
    expect(alan).toMatchObject({
      firstName: 'Alan',
      lastName: 'Turing',
      email: 'alan@example.com',
    });
    // And the stored events are exactly as written
    const after = await db.query('SELECT body, schema_version FROM messages WHERE stream_id = $1', [
      'customer-1',
    ]);
    expect(after).toEqual(before);
    expect(after).toEqual([{ body: { name: 'Ada King Lovelace' }, schema_version: 1 }]);
  });

  it('writes new events at the class schema version and reads them without upcasting', async () => {
    // Given a v3 event saved by the current code
    const grace = customers.create('customer-3');
    grace.apply(new CustomerRegistered('Grace', 'Hopper', 'grace@example.com'));
    await customers.save(grace);
    // Then it is stored as v3 and loads unchanged
    const [row] = await db.query<{ schema_version: number }>(
      'SELECT schema_version FROM messages WHERE stream_id = $1',
      ['customer-3'],
    );
    expect(row.schema_version).toBe(3);
    expect(await customers.load('customer-3')).toMatchObject({
      firstName: 'Grace',
      lastName: 'Hopper',
    });
  });

  it('fails with MissingUpcasterError when no chain reaches the class version', async () => {
    // Given a v1 CustomerMoved and no upcaster from v1
    await store.append('customer-4', 0, [
      {
        eventType: 'CustomerRegistered',
        schemaVersion: 3,
        data: { firstName: 'A', lastName: 'B', email: 'c' },
      },
      { eventType: 'CustomerMoved', schemaVersion: 1, data: { town: 'Leeds' } },
    ]);
    // When it loads, Then the error names the type and the missing step
    await expect(customers.load('customer-4')).rejects.toMatchObject({
      code: 'missing_upcaster',
      eventType: 'CustomerMoved',
      reached: 1,
      wanted: 2,
    });
  });

  it('fails with UnknownEventTypeError for an event type the aggregate does not declare', async () => {
    await store.append('customer-5', 0, [{ eventType: 'SomethingElse', data: {} }]);
    await expect(customers.load('customer-5')).rejects.toMatchObject({
      code: 'unknown_event_type',
      eventType: 'SomethingElse',
      streamVersion: 1,
    });
  });
});
