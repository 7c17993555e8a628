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
