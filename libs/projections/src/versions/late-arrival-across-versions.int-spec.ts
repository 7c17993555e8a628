import type { INestApplicationContext, Provider } from '@nestjs/common';
import { LogWriter, type LogModuleOptions } from '@ordinal/log';
import { SEQUENCE } from '@ordinal/log/internal';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { ProjectionsService } from '../projections.service.js';
import {
  Tally,
  TALLY_DDL,
  TallyV1,
  TallyV2,
  VersionProbe,
} from './versioned-projections.fixture.js';

/**
 * Concurrent ordering: a row may commit late at a position every reader passed (it is watched
 * for a while, ORDINAL_LATE_WATCH_MS). A build promoted over (`previous`) owns the side effects
 * at or below its stop, late ones included, so it must not be left while a row can still
 * arrive there: the build promoted over it gets such a row as a replay, and would run its side
 * effect nowhere.
 */
describe('Versioned projections: a late arrival below a previous build’s stop (concurrent ordering)', () => {
  let db: TestDatabase;
  let v1: INestApplicationContext | undefined;
  let v2: INestApplicationContext | undefined;
  const log: LogModuleOptions = {
    ordering: 'concurrent',
    gapTimeoutMs: 60_000,
    lateRescanMs: 100,
    lateWatchMs: 60_000,
  };
  const app = (providers: Provider[]) =>
    startProjectionsApp(db!.url, {
      log,
      providers: [VersionProbe, ...providers],
      subscriptions: { idlePollMs: 50, lateCheckMs: 100 },
      entities: [Tally],
    });

  beforeEach(async () => {
    db = await createTestDatabase();
    await db.query(TALLY_DDL);
  });
  afterEach(async () => {
    await v2?.close();
    await v1?.close();
    v1 = v2 = undefined;
    await db.drop();
  });

  it('runs its side effect once: the previous build stays until no row can arrive at or below its stop', async () => {
    // Given v1 serving, past a position drawn by hand in a transaction that ended (no row yet)
    v1 = await app([TallyV1]);
    const [{ p }] = await db.query<{ p: string }>(`SELECT nextval('${SEQUENCE}')::text AS p`);
    const drawn = Number(p);
    const written = await v1.get(LogWriter).append({
      messages: ['a', 'b', 'c'].map((id) => ({ messageType: 'Counted', body: { id } })),
      skipDuplicateWindow: true,
    });
    const last = Math.max(
      ...written.entries.map((e) => (e.status === 'created' ? e.message.id : 0)),
    );
    expect(last).toBeGreaterThan(drawn);
    const projections = v1.get(ProjectionsService);
    await projections.waitFor('bg-tally', last, 10_000);
    // And v2 deployed beside it, caught up, promoted by hand
    v2 = await app([TallyV2]);
    await waitFor(
      async () =>
        (await projections.listVersions('bg-tally')).find(
          (v) => v.version === 2 && v.position >= last,
        ),
      15_000,
      'v2 caught up',
    );
    await projections.promote('bg-tally', 2);
    const v1Build = async () =>
      (await projections.listVersions('bg-tally')).find((v) => v.version === 1)!;
    // When v1 has reached its stop and either left it or is known to wait for late rows
    await waitFor(
      async () => {
        const b = await v1Build();
        return b.state === 'previous' && b.position >= b.stopAt! && (!b.running || b.awaitingLate);
      },
      10_000,
      'v1 at its stop',
    );
    // And a row commits late at the drawn position, below v1's stop
    await db.query(
      `INSERT INTO messages (index, message_type, body, content_hash) VALUES ($1, 'Counted', '{"id":"a"}'::jsonb, 'late')`,
      [drawn],
    );
    // Then v2 gets it as a replay, and v1 (still running) gets it live: one side effect
    const saw = (probe: VersionProbe) => probe.seen.some((s) => s.index === drawn);
    await waitFor(
      async () =>
        saw(v2!.get(VersionProbe)) && (saw(v1!.get(VersionProbe)) || !(await v1Build()).running),
      10_000,
      'the late row reached both builds, or v1 was left',
    );
    const live = [...v1.get(VersionProbe).live(1), ...v2.get(VersionProbe).live(2)];
    expect(live.filter((index) => index === drawn)).toHaveLength(1);
    // And once nothing can arrive below its stop any more, v1 is left
    await waitFor(async () => !(await v1Build()).running, 10_000, 'v1 left after the late row');
    expect((await v1Build()).awaitingLate).toBe(false);
  });
});
