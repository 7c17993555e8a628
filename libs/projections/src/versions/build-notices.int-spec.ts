import type { INestApplicationContext } from '@nestjs/common';
import { LiveRouter } from '@ordinal/log';
import { SubscriptionsService } from '@ordinal/subscriptions';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { ProjectionsService } from '../projections.service.js';
import { ProjectionVersionsService } from './projection-versions.service.js';
import { Pair, PAIR_DDL, PairV1 } from './versioned-projections.fixture.js';

/**
 * A process that runs only serving builds and hears NOTIFY looks at projection_versions every
 * 5 s as a net; a build written in another process is announced by a trigger
 * (`projection-builds`) and joined at once.
 */
describe('projection builds are followed on NOTIFY', () => {
  let db: TestDatabase;
  const apps: INestApplicationContext[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('build_notices');
    await db.query(PAIR_DDL);
  });
  afterAll(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await db?.drop();
  });

  it('an idle replica reads the builds rarely, and runs a rebuild started in another replica at once', async () => {
    // Given two replicas running only the serving build, each hearing NOTIFY
    for (let i = 0; i < 2; i++)
      apps.push(
        await startProjectionsApp(db.url, {
          providers: [PairV1],
          log: { takeoverMs: 1000 },
          entities: [Pair],
        }),
      );
    const [a, b] = apps;
    await waitFor(
      () =>
        apps.every((app) => app.get(LiveRouter).notifyVerified) &&
        apps.every((app) => app.get(SubscriptionsService).names().includes('bg-pair')),
      10_000,
      'both replicas running bg-pair, NOTIFY heard',
    );
    // Then replica b, idle, reads the builds at most once in two seconds (its net is 5 s apart)
    const versions = b.get(ProjectionVersionsService);
    const builds = versions.builds.bind(versions);
    let reads = 0;
    versions.builds = (...args: Parameters<typeof builds>) => {
      reads += 1;
      return builds(...args);
    };
    const quietFrom = Date.now();
    await waitFor(() => Date.now() - quietFrom >= 2_000, 5_000, 'two seconds of idle');
    expect(reads).toBeLessThanOrEqual(1);
    // When replica a starts a blue/green rebuild
    const at = Date.now();
    await a.get(ProjectionsService).rebuild('bg-pair');
    // Then replica b runs the new build well before its next check: it looked when the row was announced
    await waitFor(
      () => b.get(SubscriptionsService).names().includes('bg-pair@v1.2'),
      10_000,
      'the new build running in replica b',
    );
    expect(Date.now() - at).toBeLessThan(2_500);
  });
});
