import type { INestApplicationContext, Provider } from '@nestjs/common';
import { LogWriter, type LogModuleOptions } from '@ordinal/log';
import { SEQUENCE } from '@ordinal/log/internal';
import { SubscriptionsService } from '@ordinal/subscriptions';
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

  /**
   * v1 serving, past a position drawn by hand in a transaction that ended (no row yet), then
   * v2 deployed beside it, caught up and promoted; returns once v1 reached its stop and either
   * left or is known to wait for late rows. `drawn`: the hole; `v1Build`: v1's status now;
   * `left`: whether v1's process no longer runs it (its own registration: a lease can lapse
   * for a moment under load, and `running` with it, while the build is still run there).
   */
  async function promotedOverAHole() {
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
    const { consumers } = await v1Build();
    const left = () => !v1!.get(SubscriptionsService).names().includes(consumers);
    await waitFor(
      async () => {
        const b = await v1Build();
        return b.state === 'previous' && b.position >= b.stopAt! && (left() || b.awaitingLate);
      },
      10_000,
      'v1 at its stop',
    );
    return { drawn, consumers, v1Build, left };
  }

  /**
   * Commits a row late at `drawn`; resolves, with the live side effects there, once both builds
   * had it or v1 was left. `replayed`: run once v2 had it.
   */
  async function lateRowAt(
    drawn: number,
    left: () => boolean,
    replayed: () => Promise<void> = () => Promise.resolve(),
  ): Promise<number[]> {
    await db.query(
      `INSERT INTO messages (index, message_type, body, content_hash) VALUES ($1, 'Counted', '{"id":"a"}'::jsonb, 'late')`,
      [drawn],
    );
    const saw = (probe: VersionProbe) => probe.seen.some((s) => s.index === drawn);
    await waitFor(() => saw(v2!.get(VersionProbe)), 10_000, 'v2 replayed the late row');
    await replayed();
    await waitFor(
      () => saw(v1!.get(VersionProbe)) || left(),
      15_000,
      'the late row reached v1, or v1 was left',
    );
    return [...v1!.get(VersionProbe).live(1), ...v2!.get(VersionProbe).live(2)].filter(
      (index) => index === drawn,
    );
  }

  it('runs its side effect once: the previous build stays until no row can arrive at or below its stop', async () => {
    // Given v1 promoted over, at its stop, a hole below it
    const { drawn, v1Build, left } = await promotedOverAHole();
    // When a row commits late at the hole
    // Then v2 gets it as a replay, and v1 (still running) gets it live: one side effect
    expect(await lateRowAt(drawn, left)).toHaveLength(1);
    // And once nothing can arrive below its stop any more, v1 is left
    await waitFor(left, 10_000, 'v1 left after the late row');
    expect((await v1Build()).awaitingLate).toBe(false);
  });

  it('runs it once when the previous build loses its lease for a while as the row arrives', async () => {
    // Given v1 promoted over, at its stop, a hole below it
    const { drawn, consumers, left } = await promotedOverAHole();
    // And v1's lease taken by someone else (as after a stall of its process): v1 stands by
    const lease = (set: string) =>
      db.query(`UPDATE consumer_leases SET ${set} WHERE group_name = $1 RETURNING name`, [
        consumers,
      ]);
    expect(
      await lease(
        `owner = 'someone-else', epoch = epoch + 1, expires_at = now() + interval '1 hour'`,
      ),
    ).toHaveLength(1);
    const member = v1!.get(SubscriptionsService).get(consumers);
    await waitFor(() => member.status().state === 'standby', 10_000, 'v1 standing by');
    // When a row commits late at the hole while v1 stands by, and the lease lapses after v2 had it
    // Then v1 takes its lease back and gets it live: one side effect, v1 not left before
    const live = await lateRowAt(drawn, left, async () => {
      expect(left()).toBe(false);
      await lease(`expires_at = now()`);
    });
    expect(live).toHaveLength(1);
    await waitFor(left, 10_000, 'v1 left after the late row');
  });
});
