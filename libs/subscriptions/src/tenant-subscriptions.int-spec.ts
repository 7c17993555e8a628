import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter, type AppendRequest } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { SubscriptionsService } from './subscriptions.service.js';
import type { SubscriptionStream } from './source/subscription-stream.js';

interface Seen {
  index: number;
  tenant: string | null;
  streamId: string | null;
}

describe('Subscriptions and tenants (docs/tenants.md)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let subscriptions: SubscriptionsService;

  const append = async (request: Omit<AppendRequest, 'messages'>, type = 'OrderPlaced') => {
    const result = await app.get(LogWriter).append({
      ...request,
      messages: [{ messageType: type, body: {} }],
      skipDuplicateWindow: true,
    });
    const [entry] = result.entries;
    if (entry.status !== 'created') throw new Error(`not stored: ${entry.status}`);
    return entry.message.id;
  };
  const collect = (name: string, stream: SubscriptionStream, tenant?: string): Seen[] => {
    const seen: Seen[] = [];
    subscriptions.subscribe({
      name,
      stream,
      tenant,
      handle: (m, ctx) =>
        void seen.push({ index: ctx.index, tenant: ctx.tenant, streamId: m.streamId }),
    });
    return seen;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startProjectionsApp(db.url);
    subscriptions = app.get(SubscriptionsService);
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('gives each handler ctx.tenant, the message’s tenant (null for none); a subscription with `tenant` gets only that tenant’s messages', async () => {
    // Given a subscription of every tenant and one of tenant a
    const all = collect('all-orders', { types: ['OrderPlaced'] });
    const mine = collect('a-orders', { types: ['OrderPlaced'] }, 'a');
    // When tenants a and b and no tenant write
    const a1 = await append({ tenant: 'a' });
    const b1 = await append({ tenant: 'b' });
    const none = await append({});
    const a2 = await append({ tenant: 'a' });
    const b2 = await append({ tenant: 'b' });
    await subscriptions.waitFor('all-orders', b2, 10_000);
    // Then the handler of every tenant's saw each message with its tenant
    expect(all.map((s) => [s.index, s.tenant])).toEqual([
      [a1, 'a'],
      [b1, 'b'],
      [none, null],
      [a2, 'a'],
      [b2, 'b'],
    ]);
    // And tenant a's subscription passed over the others' messages to the head, handling a's only
    await subscriptions.waitFor('a-orders', b2, 10_000);
    expect(mine.map((s) => [s.index, s.tenant])).toEqual([
      [a1, 'a'],
      [a2, 'a'],
    ]);
    expect((await subscriptions.report('a-orders'))[0].position).toBeGreaterThanOrEqual(b2);
  });

  it('a category subscription with `tenant` reads that tenant’s category only, its stream ids plain', async () => {
    // Given tenants a and b each with their own stream cart-1 (and a's cart-2)
    const a1 = await append(
      { tenant: 'a', stream: { streamId: 'cart-1', expectedVersion: 'no_stream' } },
      'CartOpened',
    );
    await append(
      { tenant: 'b', stream: { streamId: 'cart-1', expectedVersion: 'no_stream' } },
      'CartOpened',
    );
    const a2 = await append(
      { tenant: 'a', stream: { streamId: 'cart-2', expectedVersion: 'no_stream' } },
      'CartOpened',
    );
    const last = await append(
      { tenant: 'b', stream: { streamId: 'cart-1', expectedVersion: 'stream_exists' } },
      'CartClosed',
    );
    // When tenant a's subscription to the category reads it
    const seen = collect('a-carts', { category: 'cart' }, 'a');
    await subscriptions.waitFor('a-carts', last, 10_000);
    // Then it got a's two streams, named as a names them, and nothing of b's
    expect(seen).toEqual([
      { index: a1, tenant: 'a', streamId: 'cart-1' },
      { index: a2, tenant: 'a', streamId: 'cart-2' },
    ]);
  });

  it('refuses a tenant that is no tenant id', () => {
    expect(() =>
      subscriptions.subscribe({
        name: 'bad-tenant',
        stream: '$all',
        tenant: 'a/b',
        handle: () => undefined,
      }),
    ).toThrow(/tenant id/);
  });
});
