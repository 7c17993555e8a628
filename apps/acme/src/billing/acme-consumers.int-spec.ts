import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import {
  brokerUrl,
  connectTestBroker,
  uniqueName,
  type TestBroker,
} from '@ordinal/test-support/amqp-broker';
import { startAmqpContext, type AmqpContext } from '@ordinal/test-support/amqp-context';
import { waitFor } from '@ordinal/test-support/test-server';
import { BillingConsumer } from './billing-consumer.js';
import {
  NotificationsConsumer,
  type ShippedNotice,
} from '../notifications/notifications-consumer.js';

describe('ACME billing (replayable) and notifications (realtime) samples (docs/amqp.md)', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let context: AmqpContext | null = null;
  let dataSource: DataSource;
  let billing: BillingConsumer;
  let notifications: NotificationsConsumer;
  const notices: ShippedNotice[] = [];
  const billingName = uniqueName('acme-billing');
  const notifyName = uniqueName('acme-notify');
  const interfaces = [
    { name: billingName, type: 'replayable' as const, includeTypes: ['OrderPlaced'] },
    { name: notifyName, type: 'realtime' as const, includeTypes: ['OrderShipped'] },
  ];
  const start = () =>
    startAmqpContext(db.url, {
      inputQueue: false,
      interfaces,
      connectionName: uniqueName('ordinal-acme'),
    });
  const place = (customer: string, total: number) =>
    context!.writer.append({
      messages: [{ messageType: 'OrderPlaced', userId: customer, body: { total } }],
    });
  const charges = async () =>
    db.query<{ event_index: string; customer: string; amount: string }>(
      'SELECT * FROM billing_charges ORDER BY event_index',
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    broker = await connectTestBroker();
    context = await start();
    await waitFor(
      async () =>
        (await broker.exists(`${billingName}.sink`)) && (await broker.exists(`${notifyName}.sink`)),
      10_000,
      'the interface queues',
    );
    dataSource = await new DataSource({
      type: 'postgres',
      url: db.url,
      extra: { max: 2 },
    }).initialize();
    billing = new BillingConsumer({ amqpUrl: brokerUrl(), interfaceName: billingName, dataSource });
    await billing.start();
    notifications = new NotificationsConsumer(
      brokerUrl(),
      notifyName,
      (notice) => void notices.push(notice),
    );
    await notifications.start();
  });
  afterAll(async () => {
    await billing?.stop();
    await notifications?.stop();
    await context?.close();
    await dataSource?.destroy();
    await broker?.deleteQueues(`${billingName}.sink`, `${billingName}.ack`, `${notifyName}.sink`);
    await broker?.close();
    await db?.drop();
  });

  it('charges each order once, even when Ordinal resends after a restart', async () => {
    // Given three orders placed and one shipped
    await place('wile', 49.9);
    await place('wile', 10);
    await place('road-runner', 5);
    await context!.writer.append({
      messages: [{ messageType: 'OrderShipped', userId: 'wile', body: { orderId: 'o-1' } }],
    });
    await waitFor(async () => (await charges()).length === 3, 10_000, 'three charges');
    // And notifications told Wile once
    await waitFor(() => notices.length === 1, 5000, 'one notice');
    expect(notices[0]).toMatchObject({ customer: 'wile', order: { orderId: 'o-1' } });

    // When Ordinal restarts before a whole batch (1000) of acks moved the bookmark, so it resends
    await context!.close();
    context = await start();
    await waitFor(() => billing.duplicates === 3, 10_000, 'the three resent orders recognised');

    // Then nobody was charged twice, and the realtime notifications did not replay history
    expect((await charges()).map((c) => [c.customer, Number(c.amount)])).toEqual([
      ['wile', 49.9],
      ['wile', 10],
      ['road-runner', 5],
    ]);
    await context.writer.append({
      messages: [{ messageType: 'OrderShipped', userId: 'road-runner', body: { orderId: 'o-3' } }],
    });
    await waitFor(() => notices.length === 2, 5000, 'the second notice');
    expect(notices.map((n) => n.customer)).toEqual(['wile', 'road-runner']);
  });
});
