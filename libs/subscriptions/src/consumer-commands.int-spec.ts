import type { INestApplicationContext } from '@nestjs/common';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { ConsumerNotRunningError } from './errors/index.js';
import { SubscriptionsService } from './subscriptions.service.js';

/** Ownership's takeover bound in these apps: a consumer runs again within it (ms). */
const TAKEOVER_MS = 1_500;

/**
 * A command for a consumer (resume, rebuild, replay parked) runs in the process that owns it.
 * Ownership promises that a consumer whose owner stopped, died or left it (a projection's build
 * after a rollback) runs again within the takeover bound; a command asked inside that window
 * waits for the new owner instead of failing with ConsumerNotRunningError (issue 26: a rebuild
 * asked in the second after a re-promotion answered "not running").
 */
describe('a consumer command asked while the consumer has no live owner', () => {
  let db: TestDatabase;
  const apps: INestApplicationContext[] = [];

  const start = async (subscribeTo?: string) => {
    const app = await startProjectionsApp(db.url, { log: { takeoverMs: TAKEOVER_MS } });
    apps.push(app);
    if (subscribeTo)
      app
        .get(SubscriptionsService)
        .subscribe({ name: subscribeTo, stream: '$all', handle: () => {} });
    return app;
  };
  const stop = async (app: INestApplicationContext) => {
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  };
  const ownerOf = async (app: INestApplicationContext, name: string) =>
    (await app.get(SubscriptionsService).report(name))[0]?.owner ?? null;

  beforeAll(async () => {
    db = await createTestDatabase('consumer_commands');
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('waits for the process that takes the consumer over, and runs there', async () => {
    // Given a subscription whose only process stopped (its lease released: no live owner)
    const first = await start('audit-feed');
    await waitFor(() => ownerOf(first, 'audit-feed'), 10_000, 'the first owner');
    await stop(first);
    const asker = await start();
    expect(await ownerOf(asker, 'audit-feed')).toBeNull();
    // When another process asks for a resume, and only then a process that declares it starts
    const outcome = asker
      .get(SubscriptionsService)
      .resume('audit-feed')
      .then(
        () => 'resumed',
        (e: unknown) => e,
      );
    const second = await start('audit-feed');
    // Then the command waited for the new owner and ran there
    expect(await outcome).toBe('resumed');
    expect(second.get(SubscriptionsService).get('audit-feed').currentLease).toBeTruthy();
  });

  it('still answers ConsumerNotRunningError once the takeover bound passed with no owner', async () => {
    // Given a subscription that no running process declares any more
    const first = await start('orphan-feed');
    await waitFor(() => ownerOf(first, 'orphan-feed'), 10_000, 'the first owner');
    await stop(first);
    const asker = await start();
    // When a resume is asked, Then it fails as not running, after waiting the bound
    const askedAt = Date.now();
    await expect(asker.get(SubscriptionsService).resume('orphan-feed')).rejects.toBeInstanceOf(
      ConsumerNotRunningError,
    );
    expect(Date.now() - askedAt).toBeGreaterThanOrEqual(TAKEOVER_MS);
  });
});
