import type { StoredMessage } from '@ordinal/log';
import {
  changedIdentity,
  orderingKey,
  resolveGroupDefinition,
  type ConsumerGroupInput,
} from './group-definition.js';

const message = (over: Partial<StoredMessage>): StoredMessage =>
  ({
    id: 1,
    messageType: 'T',
    userId: null,
    body: {},
    metadata: null,
    streamId: null,
    ...over,
  }) as StoredMessage;

describe('consumer group definitions', () => {
  it('applies the defaults in one place (parkAfter follows maxDeliveries)', () => {
    expect(resolveGroupDefinition({ source: { all: true }, maxDeliveries: 4 })).toEqual({
      source: { all: true },
      from: 'start',
      strategy: 'round_robin',
      keyPath: null,
      ackTimeoutMs: 30_000,
      maxDeliveries: 4,
      maxInFlight: 100,
      parkAfter: 4,
    });
  });

  it.each<[string, unknown]>([
    ['two source kinds', { source: { all: true, category: 'order' } }],
    ['no source kind', { source: {} }],
    ['all not true', { source: { all: false } }],
    ['empty types', { source: { types: [] } }],
    ['a bad type', { source: { types: ['has space'] } }],
    ['a bad category', { source: { category: 'a-b' } }],
    ['pinned_by_key without keyPath', { source: { all: true }, strategy: 'pinned_by_key' }],
    ['keyPath without pinned_by_key', { source: { all: true }, keyPath: 'body.id' }],
    [
      'a keyPath outside the message',
      { source: { all: true }, strategy: 'pinned_by_key', keyPath: 'nope.id' },
    ],
    ['a negative from', { source: { all: true }, from: -1 }],
    ['an unknown from', { source: { all: true }, from: 'middle' }],
  ])('refuses %s with invalid_consumer_group', (_, input) => {
    let code: string | undefined;
    try {
      resolveGroupDefinition(input as ConsumerGroupInput);
    } catch (error) {
      code = (error as { code?: string }).code;
    }
    expect(code).toBe('invalid_consumer_group');
  });

  it.each<[string, string, unknown]>([
    ['strategy', 'a strategy not listed', { strategy: 'random' }],
    ['strategy', 'a strategy not text', { strategy: 1 }],
    ['keyPath', 'a keyPath not text', { strategy: 'pinned_by_key', keyPath: 5 }],
    [
      'keyPath',
      'a keyPath over 200 characters',
      { strategy: 'pinned_by_key', keyPath: `body.${'k'.repeat(200)}` },
    ],
    ['ackTimeoutMs', 'ackTimeoutMs as text', { ackTimeoutMs: '5s' }],
    ['ackTimeoutMs', 'ackTimeoutMs under 100', { ackTimeoutMs: 99 }],
    ['ackTimeoutMs', 'ackTimeoutMs over a day', { ackTimeoutMs: 86_400_001 }],
    ['maxDeliveries', 'a fractional maxDeliveries', { maxDeliveries: 1.5 }],
    ['maxDeliveries', 'maxDeliveries 0', { maxDeliveries: 0 }],
    ['maxDeliveries', 'maxDeliveries over 1000', { maxDeliveries: 1001 }],
    ['maxInFlight', 'maxInFlight 0', { maxInFlight: 0 }],
    ['maxInFlight', 'maxInFlight over 10,000', { maxInFlight: 10_001 }],
    ['maxInFlight', 'maxInFlight as text', { maxInFlight: '5' }],
    ['parkAfter', 'parkAfter 0', { parkAfter: 0 }],
    ['parkAfter', 'parkAfter over 1000', { parkAfter: 1001 }],
    ['ackTimeout', 'an unknown key (a typo of ackTimeoutMs)', { ackTimeout: 5000 }],
    ['name', 'a name (the declarations give it apart)', { name: 'g' }],
  ])(
    'refuses %s as DefineGroupDto does (%s) with invalid_consumer_group naming it',
    (field, _, over) => {
      let error: { code?: string; message?: string } | undefined;
      try {
        resolveGroupDefinition({ source: { all: true }, ...(over as object) });
      } catch (caught) {
        error = caught as { code?: string; message?: string };
      }
      expect(error?.code).toBe('invalid_consumer_group');
      expect(error?.message).toMatch(new RegExp(`^${field} `));
    },
  );

  it('takes every setting at its bounds, and null as left out', () => {
    const low = { ackTimeoutMs: 100, maxDeliveries: 1, maxInFlight: 1, parkAfter: 1 };
    expect(resolveGroupDefinition({ source: { all: true }, ...low })).toMatchObject(low);
    const high = {
      ackTimeoutMs: 86_400_000,
      maxDeliveries: 1000,
      maxInFlight: 10_000,
      parkAfter: 1000,
    };
    expect(resolveGroupDefinition({ source: { all: true }, ...high })).toMatchObject(high);
    expect(
      resolveGroupDefinition({
        source: { all: true },
        strategy: null,
        ackTimeoutMs: null,
      } as unknown as ConsumerGroupInput),
    ).toMatchObject({ strategy: 'round_robin', ackTimeoutMs: 30_000 });
  });

  it('keys events by stream id or by the value at keyPath; none under round_robin or when missing', () => {
    const m = message({ streamId: 'order-1', body: { customer: { id: 7 } } });
    expect(orderingKey({ strategy: 'round_robin', keyPath: null }, m)).toBeNull();
    expect(orderingKey({ strategy: 'pinned_by_stream', keyPath: null }, m)).toBe('order-1');
    expect(orderingKey({ strategy: 'pinned_by_key', keyPath: 'body.customer.id' }, m)).toBe('7');
    expect(orderingKey({ strategy: 'pinned_by_key', keyPath: 'body.missing.id' }, m)).toBeNull();
    expect(orderingKey({ strategy: 'pinned_by_stream', keyPath: null }, message({}))).toBeNull();
  });

  it('names the first identity field a redefinition would change; settings may change', () => {
    const stored = resolveGroupDefinition({ source: { types: ['A'] } });
    expect(
      changedIdentity(stored, resolveGroupDefinition({ source: { types: ['A'] }, maxInFlight: 5 })),
    ).toBeNull();
    expect(changedIdentity(stored, resolveGroupDefinition({ source: { types: ['B'] } }))).toBe(
      'source',
    );
    expect(
      changedIdentity(stored, resolveGroupDefinition({ source: { types: ['A'] }, from: 'end' })),
    ).toBe('from');
  });
});
