import type { INestApplicationContext } from '@nestjs/common';
import { LiveRouter, LogWriter, type RouterNotice } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import pg from 'pg';
import { SubscriptionsService } from './subscriptions.service.js';
import { SUBSCRIPTION_NOTICES } from './subscriptions.constants.js';

/** Longer than any wait below: a poll this slow cannot be what woke anything in these tests. */
const NEVER_MS = 120_000;

/**
 * An idle process does not poll the database for what NOTIFY tells it: other processes'
 * commits wake its subscriptions, a consumer request wakes its owner (a trigger announces the
 * row), and the live router says whether NOTIFY reaches it at all (a probe of its own), so that
 * they poll at their configured rate only while it does not.
 */
describe('idle consumers wake on NOTIFY', () => {
  let db: TestDatabase;
  const apps: INestApplicationContext[] = [];
  const start = async (options: Parameters<typeof startProjectionsApp>[1] = {}) => {
    const app = await startProjectionsApp(db.url, options);
    apps.push(app);
    return app;
  };

  beforeAll(async () => {
    db = await createTestDatabase('idle_wake');
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('a subscription whose polls are minutes apart applies another process’s commit at once', async () => {
    // Given a process whose subscription and live router poll only every two minutes
    const reader = await start({
      log: { livePollMs: NEVER_MS },
      subscriptions: { idlePollMs: NEVER_MS },
    });
    const seen: number[] = [];
    reader.get(SubscriptionsService).subscribe({
      name: 'wake-feed',
      stream: { types: ['Woken'] },
      handle: (message) => void seen.push(message.id),
    });
    await waitFor(
      () =>
        reader.get(LiveRouter).notifyVerified &&
        reader.get(SubscriptionsService).get('wake-feed').status().state === 'running',
      10_000,
      'the subscription running, NOTIFY heard',
    );
    // When another process commits an event
    const writer = await start();
    const result = await writer.get(LogWriter).append({
      messages: [{ messageType: 'Woken', body: {} }],
    });
    const id = (result.entries[0] as { message: { id: number } }).message.id;
    // Then the subscription applies it long before any poll: NOTIFY woke it
    await waitFor(() => seen.includes(id), 10_000, 'the event applied');
  });

  it('the live router tells heads of other processes, other notices, and whether NOTIFY reaches it', async () => {
    // Given a process whose router hears NOTIFY
    const app = await start({ log: { livePollMs: NEVER_MS } });
    const router = app.get(LiveRouter);
    await waitFor(() => router.notifyVerified, 10_000, 'NOTIFY verified');
    const notices: RouterNotice[] = [];
    router.onNotice((notice) => void notices.push(notice));
    // When another process commits, and another library's notice is sent
    const other = await start();
    const result = await other.get(LogWriter).append({
      messages: [{ messageType: 'Told', body: {} }],
    });
    const id = (result.entries[0] as { message: { id: number } }).message.id;
    await db.query('SELECT pg_notify($1, $2)', ['ordinal_log', 'some-library-notice']);
    // Then the router told both
    await waitFor(
      () => notices.some((n) => n.kind === 'head' && n.head >= id),
      10_000,
      'the head told',
    );
    await waitFor(
      () => notices.some((n) => n.kind === 'notice' && n.payload === 'some-library-notice'),
      10_000,
      'the notice told',
    );
    // When its LISTEN connection is lost
    notices.length = 0;
    await db.admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = $1 AND application_name = 'ordinal-listener'`,
      [db.name],
    );
    // Then it says NOTIFY no longer reaches it, and again once reconnected and heard
    await waitFor(
      () => notices.some((n) => n.kind === 'delivery' && !n.verified),
      10_000,
      'delivery lost',
    );
    await waitFor(
      () => notices.some((n) => n.kind === 'delivery' && n.verified) && router.notifyVerified,
      15_000,
      'delivery verified again',
    );
  });

  it('a row in consumer_requests is announced on the log’s channel, whoever writes it', async () => {
    // Given the tables (a started app ran the migrations) and a session listening
    await start();
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on('notification', (n) => void heard.push(n.payload ?? ''));
      await listener.query('LISTEN ordinal_log');
      // When a request row is written by hand
      await db.query(`INSERT INTO consumer_requests (consumer, command) VALUES ('x', 'resume')`);
      // Then its notice arrives
      await waitFor(
        () => heard.includes(SUBSCRIPTION_NOTICES.consumerRequest),
        10_000,
        'the consumer-request notice',
      );
    } finally {
      await listener.end();
    }
  });

  it('the owner runs another process’s command when the request is announced, not at its next poll', async () => {
    // Given an owner of a subscription whose NOTIFY is heard (its request poll is then 5 s apart)
    const owner = await start();
    owner
      .get(SubscriptionsService)
      .subscribe({ name: 'asked-feed', stream: '$all', handle: () => {} });
    await waitFor(
      () =>
        owner.get(LiveRouter).notifyVerified &&
        owner.get(SubscriptionsService).get('asked-feed').currentLease,
      10_000,
      'the owner holding the subscription, NOTIFY heard',
    );
    const asker = await start();
    // When another process asks it to resume, three times
    const took: number[] = [];
    for (let i = 0; i < 3; i++) {
      const at = Date.now();
      await asker.get(SubscriptionsService).resume('asked-feed');
      took.push(Date.now() - at);
    }
    // Then each ran well within the 5 s poll: the owner looked when the row was announced
    expect(Math.max(...took)).toBeLessThan(2_500);
  });
});
