import type { INestApplicationContext } from '@nestjs/common';
import { LogWriter } from '@ordinal/log';
import { HeldTransaction, sessionsBlockedBy } from '@ordinal/test-support/held-transaction';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { SubscriptionsService } from '../subscriptions.service.js';

/**
 * The `stop` error policy shows the subscription `stopped` at once, then records the stop on
 * its checkpoint row before its loop ends. A resume asked in between (a user who saw the state,
 * a test polling it) must run it again: it used to find the loop still there, do nothing, and
 * leave the subscription stopped for good once the loop ended.
 */
describe('a resume asked while the stop policy is still recording the stop', () => {
  let db: TestDatabase;
  let app: INestApplicationContext;
  let held: HeldTransaction | null = null;

  beforeAll(async () => {
    db = await createTestDatabase('stop_policy_resume');
    app = await startProjectionsApp(db.url);
  });
  afterAll(async () => {
    // A held lock would keep the loop (and the shutdown waiting for it) blocked.
    await held?.rollback();
    await app?.close();
    await db?.drop();
  });

  const append = async (body: Record<string, unknown>): Promise<number> => {
    const result = await app.get(LogWriter).append({
      messages: [{ messageType: 'Guarded', body }],
      skipDuplicateWindow: true,
    });
    const [entry] = result.entries;
    if (entry.status !== 'created') throw new Error(`append was ${entry.status}`);
    return entry.message.id;
  };

  it('runs it again once the stop is recorded, and it applies the message it stopped at', async () => {
    const subscriptions = app.get(SubscriptionsService);
    let broken = true;
    const applied: number[] = [];
    // Given a subscription that stops at the first failure of a poison message
    subscriptions.subscribe({
      name: 'guarded',
      stream: { types: ['Guarded'] },
      onError: { retries: 0, then: 'stop' },
      handle: (message) => {
        if (broken && (message.body as { poison?: boolean }).poison) throw new Error('refusing');
        applied.push(message.id);
      },
    });
    // And running, at the end of the log
    await subscriptions.waitFor('guarded', await append({ n: 1 }), 10_000);
    // And its checkpoint row locked by a transaction of the test's own, so recording a stop waits
    held = await HeldTransaction.begin(db.url);
    await held.query('SELECT name FROM checkpoints WHERE name = $1 FOR UPDATE', ['guarded']);
    const pid = await held.pid();
    // When the poison stops it: stopped in its status, the stop's write waiting on the lock
    const poison = await append({ poison: true });
    await waitFor(
      async () => (await subscriptions.report('guarded'))[0].state === 'stopped',
      10_000,
      'the stop policy to stop it',
    );
    await waitFor(
      async () => (await sessionsBlockedBy((text, values) => db.query(text, values), pid)) > 0,
      10_000,
      'the stop to be recorded (blocked on the lock)',
    );
    // And the handler is fixed and the subscription resumed, before the stop's write is done
    broken = false;
    await subscriptions.resume('guarded');
    await held.commit();
    held = null;
    // Then it runs again and applies the poison
    await subscriptions.waitFor('guarded', poison, 10_000);
    expect(applied).toContain(poison);
    expect((await subscriptions.report('guarded'))[0]).toMatchObject({ state: 'running' });
  });
});
